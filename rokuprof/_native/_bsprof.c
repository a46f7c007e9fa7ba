/*
 * rokuprof._native._bsprof: the Python face of bsprof_core (hand-written CPython API).
 *
 * One type, Core, owns one bsp_core. feed() takes any bytes-like object and returns
 * (status, used); everything else reads the tables and returns plain tuples and lists that
 * rokuprof/_native/reader.py turns into the objects of rokuprof.profile.tables. Nothing here
 * creates an object per decoded entry except take_records(), which exists for the tests.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string.h>

#include "bsprof_core.h"
#include "sampler_take.h"
#include "samples_text.h"

typedef struct {
    PyObject_HEAD bsp_core *core;
} CoreObject;

static PyObject *no_memory(void) { return PyErr_NoMemory(); }

static int Core_init(CoreObject *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"limits", "line_data", "record", "seed", "queue_from", NULL};
    bsp_limits lim;
    int line_data = 0, record = 0;
    unsigned long long seed = 0;
    Py_ssize_t queue_from = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "(KKKKKKKK)p|pKn", kwlist,
                                     &lim.max_string_bytes, &lim.max_strings,
                                     &lim.max_string_table_chars, &lim.max_modules,
                                     &lim.max_paths, &lim.max_live_allocations,
                                     &lim.max_line_keys, &lim.max_stack_depth, &line_data, &record, &seed,
                                     &queue_from))
        return -1;
    bsp_free(self->core);
    self->core = bsp_new(&lim, line_data, record, seed);
    if (!self->core) {
        PyErr_NoMemory();
        return -1;
    }
    if (queue_from >= 0) /* -1: the core's default */
        bsp_set_queue_from(self->core, (size_t)queue_from);
    return 0;
}

static void Core_dealloc(CoreObject *self)
{
    bsp_free(self->core);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

#define CORE(self)                                                         \
    do {                                                                   \
        if (!(self)->core) {                                               \
            PyErr_SetString(PyExc_RuntimeError, "Core is not initialised"); \
            return NULL;                                                   \
        }                                                                  \
    } while (0)

static PyObject *none(void) { Py_RETURN_NONE; }

/* The list [item(source, 0), ..., item(source, n - 1)]; NULL (an exception set) when an item
 * cannot be built. */
static PyObject *list_of(const void *source, size_t n, PyObject *(*item)(const void *, size_t))
{
    PyObject *out = PyList_New((Py_ssize_t)n);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *x = item(source, i);
        if (!x) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, x);
    }
    return out;
}

/* Append a new reference (NULL: it could not be built) to a list: -1 when either failed. */
static int append_new(PyObject *list, PyObject *item)
{
    int rc = item ? PyList_Append(list, item) : -1;
    Py_XDECREF(item);
    return rc;
}

/* A tuple of n unsigned integers. */
static PyObject *u64_tuple(const uint64_t *v, size_t n)
{
    PyObject *out = PyTuple_New((Py_ssize_t)n);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
        if (!x) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, (Py_ssize_t)i, x);
    }
    return out;
}

static PyObject *Core_feed(CoreObject *self, PyObject *arg)
{
    CORE(self);
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    size_t used = 0;
    int status = bsp_feed(self->core, view.buf, (size_t)view.len, &used);
    PyBuffer_Release(&view);
    if (status == BSP_NOMEM)
        return no_memory();
    return Py_BuildValue("in", status, (Py_ssize_t)used);
}

static PyObject *Core_pending(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    size_t len;
    const uint8_t *data = bsp_pending(self->core, &len);
    return PyBytes_FromStringAndSize((const char *)data, (Py_ssize_t)len);
}

static PyObject *Core_progress(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    return Py_BuildValue("KK", (unsigned long long)bsp_offset(self->core),
                         (unsigned long long)bsp_entry_count(self->core));
}

static PyObject *Core_definition_counts(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    bsp_definition_counts d;
    bsp_get_definition_counts(self->core, &d);
    uint64_t v[] = {d.string_definitions, d.module_definitions, d.path_definitions,
                    d.string_chars};
    return u64_tuple(v, sizeof(v) / sizeof(v[0]));
}

static PyObject *Core_state(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    bsp_state s;
    bsp_get_state(self->core, &s);
    return Py_BuildValue("KKKKKKK(iiiii)KK", (unsigned long long)s.dangling,
                         (unsigned long long)s.replaced_allocations,
                         (unsigned long long)s.untracked_allocations,
                         (unsigned long long)s.untracked_line_cpu,
                         (unsigned long long)s.live_bytes, (unsigned long long)s.live_count,
                         (unsigned long long)s.saturated, s.warnings[0], s.warnings[1],
                         s.warnings[2], s.warnings[3], s.warnings[4],
                         (unsigned long long)s.untracked_line_allocs,
                         (unsigned long long)s.deep_paths);
}

static int as_id(PyObject *arg, uint32_t *id)
{
    /* IDs outside uint32 are simply never defined */
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v < 0 || v > 0xFFFFFFFFLL)
        return 0;
    *id = (uint32_t)v;
    return 1;
}

/* CORE_ID(self, arg, id): the core is initialised, and uint32_t id holds the ID argument arg;
 * returns NULL (an exception set) or None (an ID outside uint32 is never defined) otherwise. */
#define CORE_ID(self, arg, id)                                                               \
    uint32_t id;                                                                             \
    do {                                                                                     \
        CORE(self);                                                                          \
        int ok_ = as_id((arg), &id);                                                         \
        if (ok_ < 0)                                                                         \
            return NULL;                                                                     \
        if (!ok_)                                                                            \
            Py_RETURN_NONE;                                                                  \
    } while (0)

static PyObject *Core_string(CoreObject *self, PyObject *arg)
{
    CORE_ID(self, arg, id);
    const uint8_t *text;
    size_t len;
    if (!bsp_string(self->core, id, &text, &len))
        Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8((const char *)text, (Py_ssize_t)len, "replace");
}

static PyObject *string_item(const void *core, size_t i)
{
    uint32_t id;
    const uint8_t *text;
    size_t len;
    bsp_string_at(core, i, &id, &text, &len);
    PyObject *s = PyUnicode_DecodeUTF8((const char *)text, (Py_ssize_t)len, "replace");
    return s ? Py_BuildValue("kN", (unsigned long)id, s) : NULL;
}

static PyObject *Core_strings(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    return list_of(self->core, bsp_string_count(self->core), string_item);
}

static PyObject *Core_module(CoreObject *self, PyObject *arg)
{
    CORE_ID(self, arg, id);
    uint32_t name_id;
    if (!bsp_module(self->core, id, &name_id))
        Py_RETURN_NONE;
    return PyLong_FromUnsignedLong(name_id);
}

static PyObject *module_item(const void *core, size_t i)
{
    uint32_t id, name_id;
    bsp_module_at(core, i, &id, &name_id);
    return Py_BuildValue("kk", (unsigned long)id, (unsigned long)name_id);
}

static PyObject *Core_modules(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    return list_of(self->core, bsp_module_count(self->core), module_item);
}

static PyObject *node_tuple(const bsp_path *p)
{
    return Py_BuildValue("kkkkkkkk", (unsigned long)p->id, (unsigned long)p->caller,
                         (unsigned long)p->module, (unsigned long)p->file_id,
                         (unsigned long)p->line, (unsigned long)p->function_id,
                         (unsigned long)p->caller_line_offset, (unsigned long)p->depth);
}

static PyObject *Core_path(CoreObject *self, PyObject *arg)
{
    CORE_ID(self, arg, id);
    const bsp_path *p = bsp_find_path(self->core, id);
    return p ? node_tuple(p) : none();
}

static PyObject *path_item(const void *core, size_t i) { return node_tuple(bsp_path_at(core, i)); }

static PyObject *Core_paths(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    return list_of(self->core, bsp_path_count(self->core), path_item);
}

/* The call path leaf first, root last, at most max_nodes nodes; stops at an undefined caller
 * or a repeated ID. */
static PyObject *Core_stack(CoreObject *self, PyObject *args)
{
    CORE(self);
    PyObject *arg;
    Py_ssize_t max_nodes;
    if (!PyArg_ParseTuple(args, "On", &arg, &max_nodes))
        return NULL;
    uint32_t id;
    int ok = as_id(arg, &id);
    if (ok < 0)
        return NULL;
    if (!ok || max_nodes <= 0)
        return PyTuple_New(0);
    /* no path twice on a stack: at most every defined path */
    size_t cap = bsp_path_count(self->core);
    if ((size_t)max_nodes < cap)
        cap = (size_t)max_nodes;
    const bsp_path **nodes = PyMem_Malloc((cap ? cap : 1) * sizeof(*nodes));
    if (!nodes)
        return no_memory();
    size_t n = bsp_stack(self->core, id, cap, nodes);
    PyObject *out = n == (size_t)-1 ? no_memory() : PyTuple_New((Py_ssize_t)n);
    for (size_t k = 0; out && k < n; k++) {
        PyObject *node = node_tuple(nodes[k]);
        if (!node)
            Py_CLEAR(out);
        else
            PyTuple_SET_ITEM(out, (Py_ssize_t)k, node);
    }
    PyMem_Free(nodes);
    return out;
}

/* (id, the nine counters). */
static PyObject *counts_tuple(uint32_t id, const uint64_t *c)
{
    uint64_t v[1 + BSP_NCOUNTERS] = {id};
    memcpy(v + 1, c, sizeof(uint64_t) * BSP_NCOUNTERS);
    return u64_tuple(v, 1 + BSP_NCOUNTERS);
}

static PyObject *Core_stats(CoreObject *self, PyObject *arg)
{
    CORE_ID(self, arg, id);
    const uint64_t *c = bsp_counters(self->core, id);
    return c ? counts_tuple(id, c) : none();
}

/* Every path's counters (nonzero_only: those with any), the unknown path first. */
static PyObject *all_counters(CoreObject *self, int nonzero_only)
{
    size_t n = bsp_path_count(self->core) + 1;
    PyObject *out = PyList_New(0);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        const uint64_t *c = bsp_counters_at(self->core, i, &id);
        if (nonzero_only) {
            int any = 0;
            for (int j = 0; j < BSP_NCOUNTERS; j++)
                any |= c[j] != 0;
            if (!any)
                continue;
        }
        if (append_new(out, counts_tuple(id, c)) < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

static PyObject *Core_counters(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    return all_counters(self, 0);
}

static PyObject *Core_snapshot(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    return all_counters(self, 1);
}

static PyObject *line_tuple(const bsp_line_counts *l)
{
    return Py_BuildValue("kkKK", (unsigned long)l->path, (unsigned long)l->line_offset,
                         (unsigned long long)l->cpu, (unsigned long long)l->wall);
}

static PyObject *path_counts_item(const void *paths, size_t i)
{
    const bsp_path_counts *p = (const bsp_path_counts *)paths + i;
    return counts_tuple(p->id, p->c);
}

static PyObject *line_counts_item(const void *lines, size_t i)
{
    return line_tuple((const bsp_line_counts *)lines + i);
}

static PyObject *Core_take_delta(CoreObject *self, PyObject *arg)
{
    CORE(self);
    int lines = PyObject_IsTrue(arg);
    if (lines < 0)
        return NULL;
    const bsp_path_counts *paths;
    const bsp_line_counts *line_records;
    size_t npaths, nlines;
    if (!bsp_take_delta(self->core, lines, &paths, &npaths, &line_records, &nlines))
        return no_memory();
    PyObject *p = list_of(paths, npaths, path_counts_item);
    PyObject *l = p ? list_of(line_records, nlines, line_counts_item) : NULL;
    if (!l) {
        Py_XDECREF(p);
        return NULL;
    }
    return Py_BuildValue("NN", p, l);
}

/* take_delta(False) shaped as path_model.WallDelta wants it: ({path: wall} for the paths
 * with wall time, [path, the five memory counters, ...] for those with memory operations). */
static PyObject *Core_take_walls(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    const bsp_path_counts *paths;
    const bsp_line_counts *unused;
    size_t npaths, nlines;
    if (!bsp_take_delta(self->core, 0, &paths, &npaths, &unused, &nlines))
        return no_memory();
    PyObject *walls = PyDict_New();
    PyObject *memory = walls ? PyList_New(0) : NULL;
    for (size_t i = 0; memory && i < npaths; i++) {
        const bsp_path_counts *p = paths + i;
        if (p->c[BSP_WALL]) {
            PyObject *key = PyLong_FromUnsignedLong(p->id);
            PyObject *value = key ? PyLong_FromUnsignedLongLong(p->c[BSP_WALL]) : NULL;
            int failed = !value || PyDict_SetItem(walls, key, value) < 0;
            Py_XDECREF(key);
            Py_XDECREF(value);
            if (failed)
                Py_CLEAR(memory);
        }
        if (memory && (p->c[BSP_ALLOCS] || p->c[BSP_FREES] || p->c[BSP_FREE_REALLOCS])) {
            uint64_t row[6] = {p->id, p->c[BSP_ALLOCS], p->c[BSP_ALLOC_BYTES], p->c[BSP_FREES],
                               p->c[BSP_FREE_REALLOCS], p->c[BSP_FREED_BYTES]};
            for (size_t k = 0; memory && k < 6; k++)
                if (append_new(memory, PyLong_FromUnsignedLongLong(row[k])) < 0)
                    Py_CLEAR(memory);
        }
    }
    if (!memory) {
        Py_XDECREF(walls);
        return NULL;
    }
    return Py_BuildValue("NN", walls, memory);
}

static PyObject *line_item(const void *core, size_t i)
{
    bsp_line_counts l;
    bsp_line_at(core, i, &l);
    return line_tuple(&l);
}

static PyObject *Core_line_cpu(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    return list_of(self->core, bsp_line_count(self->core), line_item);
}

static PyObject *alloc_line_item(const void *core, size_t i)
{
    const bsp_alloc_line *l = bsp_alloc_line_at(core, i);
    return Py_BuildValue("kkKK", (unsigned long)l->path, (unsigned long)l->line_offset,
                         (unsigned long long)l->count, (unsigned long long)l->bytes);
}

static PyObject *Core_line_alloc(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    return list_of(self->core, bsp_alloc_line_count(self->core), alloc_line_item);
}

static PyObject *Core_totals(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    bsp_totals t;
    bsp_get_totals(self->core, &t);
    uint64_t v[3 + BSP_NCOUNTERS + 2] = {t.strings, t.modules, t.paths};
    memcpy(v + 3, t.c, sizeof(uint64_t) * BSP_NCOUNTERS);
    v[3 + BSP_NCOUNTERS] = t.live_bytes;
    v[3 + BSP_NCOUNTERS + 1] = t.live_count;
    return u64_tuple(v, 3 + BSP_NCOUNTERS + 2);
}

static PyObject *site_item(const void *sites, size_t i)
{
    const bsp_site *s = (const bsp_site *)sites + i;
    return Py_BuildValue("kKK", (unsigned long)s->path, (unsigned long long)s->count,
                         (unsigned long long)s->bytes);
}

static PyObject *Core_leak_sites(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    const bsp_site *sites;
    size_t n;
    if (!bsp_leak_sites(self->core, &sites, &n))
        return no_memory();
    return list_of(sites, n, site_item);
}

static PyObject *Core_heap(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    PyObject *out = PyList_New(0);
    if (!out)
        return NULL;
    size_t iter = 0;
    uint32_t address, path, size;
    while (bsp_heap_next(self->core, &iter, &address, &path, &size)) {
        PyObject *item = Py_BuildValue("kkk", (unsigned long)address, (unsigned long)path,
                                       (unsigned long)size);
        if (append_new(out, item) < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

static PyObject *Core_take_definitions(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    size_t n;
    const uint32_t *pairs = bsp_take_definitions(self->core, &n);
    return PyBytes_FromStringAndSize((const char *)pairs, (Py_ssize_t)(n * 2 * sizeof(uint32_t)));
}

/* Record mode: the entries since the previous call as entry tuples (for the tests). */
static PyObject *Core_take_records(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    size_t n, arena_len;
    const uint32_t *r = bsp_take_records(self->core, &n);
    const uint8_t *arena = bsp_arena(self->core, &arena_len);
    PyObject *out = PyList_New((Py_ssize_t)n);
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++, r += BSP_RECORD_WORDS) {
        PyObject *item;
        switch (r[0]) {
        case 0: {
            size_t offset = (size_t)r[2] | (size_t)((uint64_t)r[3] << 32);
            PyObject *text = PyUnicode_DecodeUTF8((const char *)arena + offset, r[4], "replace");
            item = text ? Py_BuildValue("ikN", 0, (unsigned long)r[1], text) : NULL;
            break;
        }
        case 1:
        case 5:
            item = Py_BuildValue("ikk", (int)r[0], (unsigned long)r[1], (unsigned long)r[2]);
            break;
        case 2:
            item = Py_BuildValue("ikkkkkkk", 2, (unsigned long)r[1], (unsigned long)r[2],
                                 (unsigned long)r[3], (unsigned long)r[4], (unsigned long)r[5],
                                 (unsigned long)r[6], (unsigned long)r[7]);
            break;
        case 3:
            item = Py_BuildValue("ikkkkk", 3, (unsigned long)r[1], (unsigned long)r[2],
                                 (unsigned long)r[3], (unsigned long)r[4], (unsigned long)r[5]);
            break;
        default:
            item = Py_BuildValue("ikkkk", 4, (unsigned long)r[1], (unsigned long)r[2],
                                 (unsigned long)r[3], (unsigned long)r[4]);
        }
        if (!item) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)i, item);
    }
    return out;
}

static PyObject *Core_memory(CoreObject *self, PyObject *Py_UNUSED(ignored))
{
    CORE(self);
    return PyLong_FromSize_t(bsp_memory(self->core));
}

/* A method of Core: its Python name is the name of its function without "Core_". */
/* A 128-bit sum (lo, hi) as a Python int. */
static PyObject *u128(uint64_t lo, uint64_t hi)
{
    if (!hi)
        return PyLong_FromUnsignedLongLong(lo);
    PyObject *h = PyLong_FromUnsignedLongLong(hi), *l = PyLong_FromUnsignedLongLong(lo);
    PyObject *shift = PyLong_FromLong(64);
    PyObject *high = h && shift ? PyNumber_Lshift(h, shift) : NULL;
    PyObject *out = high && l ? PyNumber_Or(high, l) : NULL;
    Py_XDECREF(h);
    Py_XDECREF(l);
    Py_XDECREF(shift);
    Py_XDECREF(high);
    return out;
}

static PyObject *function_row(const bsp_function_sums *s, size_t group)
{
    PyObject *row = PyTuple_New(1 + BSP_NSUMS);
    if (!row)
        return NULL;
    PyObject *g = PyLong_FromSize_t(group);
    if (!g) {
        Py_DECREF(row);
        return NULL;
    }
    PyTuple_SET_ITEM(row, 0, g);
    for (int k = 0; k < BSP_NSUMS; k++) {
        PyObject *v = u128(s->lo[k], s->hi[k]);
        if (!v) {
            Py_DECREF(row);
            return NULL;
        }
        PyTuple_SET_ITEM(row, 1 + k, v);
    }
    return row;
}

/* functions(allocations, seed, name) -> [(group, self cpu, self wall, total cpu, total wall,
 * calls, alloc bytes)]: name(triples) gets the distinct (module, function, file) ID triples
 * (a flat list) and returns (groups, ngroups): a uint32 buffer, a group per triple. */
static PyObject *Core_functions(CoreObject *self, PyObject *args)
{
    CORE(self);
    int allocations;
    unsigned long long seed;
    PyObject *name;
    if (!PyArg_ParseTuple(args, "pKO", &allocations, &seed, &name))
        return NULL;
    bsp_functions *f = bsp_functions_new(self->core, allocations, seed);
    if (!f)
        return no_memory();
    PyObject *out = NULL, *named = NULL;
    Py_buffer groups = {0};
    const uint64_t *words;
    size_t n = bsp_functions_triples(f, &words);
    PyObject *triples = u64_tuple(words, 3 * n);
    if (!triples)
        goto done;
    named = PyObject_CallOneArg(name, triples);
    Py_DECREF(triples);
    Py_ssize_t ngroups;
    if (!named || !PyArg_ParseTuple(named, "y*n", &groups, &ngroups))
        goto done;
    if (groups.len != (Py_ssize_t)(n * sizeof(uint32_t)) || ngroups < 0) {
        PyErr_SetString(PyExc_ValueError, "functions: one group per triple");
        goto done;
    }
    const uint32_t *g = groups.buf;
    for (size_t i = 0; i < n; i++) {
        if (g[i] >= (size_t)ngroups) {
            PyErr_SetString(PyExc_ValueError, "functions: a group out of range");
            goto done;
        }
    }
    const bsp_function_sums *sums;
    if (!bsp_functions_sum(self->core, f, g, (size_t)ngroups, &sums)) {
        no_memory();
        goto done;
    }
    out = PyList_New(0);
    for (Py_ssize_t k = 0; out && k < ngroups; k++) {
        if (sums[k].seen && append_new(out, function_row(&sums[k], (size_t)k)) < 0)
            Py_CLEAR(out);
    }
done:
    if (groups.obj)
        PyBuffer_Release(&groups);
    Py_XDECREF(named);
    bsp_functions_free(f);
    return out;
}

#define CORE_METHOD(name, flags, doc) {#name, (PyCFunction)Core_##name, flags, doc}

static PyMethodDef Core_methods[] = {
    CORE_METHOD(feed, METH_O,
        "feed(data) -> (status, used): decode body bytes (0 more, 1 end marker, 2 rejected)."),
    CORE_METHOD(pending, METH_NOARGS, "The kept bytes of the partial or rejected entry."),
    CORE_METHOD(progress, METH_NOARGS, "(body bytes consumed by whole entries, entries decoded)."),
    CORE_METHOD(definition_counts, METH_NOARGS,
        "(string, module, path definitions, string characters) counted against the limits."),
    CORE_METHOD(state, METH_NOARGS,
        "(dangling, replaced, untracked allocations, untracked line CPU, live bytes, live "
        "count, saturations, (warning codes in order), untracked allocations per line, paths "
        "deeper than max_stack_depth)."),
    CORE_METHOD(string, METH_O, "The text of a string ID, or None."),
    CORE_METHOD(strings, METH_NOARGS, "[(ID, text)] in definition order."),
    CORE_METHOD(module, METH_O, "The name string ID of a module, or None."),
    CORE_METHOD(modules, METH_NOARGS, "[(ID, name string ID)] in definition order."),
    CORE_METHOD(path, METH_O,
        "(id, caller, module, file, line, function, caller line offset, depth) or None."),
    CORE_METHOD(paths, METH_NOARGS, "Every path node, in definition order."),
    CORE_METHOD(functions, METH_VARARGS,
        "functions(allocations, seed, name) -> per-function sums (see bsprof_core.h)."),
    CORE_METHOD(stack, METH_VARARGS,
        "stack(id, max_nodes): the path nodes from the leaf toward the root, at most max_nodes."),
    CORE_METHOD(stats, METH_O, "(id, nine counters) of a path, or None."),
    CORE_METHOD(counters, METH_NOARGS,
        "[(id, nine counters)] of every path, the unknown path (0) first."),
    CORE_METHOD(snapshot, METH_NOARGS, "[(id, nine counters)] of the paths with any."),
    CORE_METHOD(take_delta, METH_O,
        "take_delta(lines) -> (path changes, line changes) since the previous call."),
    CORE_METHOD(take_walls, METH_NOARGS,
        "take_delta(False) as ({path: wall}, [path, five memory counters, ...])."),
    CORE_METHOD(line_cpu, METH_NOARGS, "[(path, line offset, cpu, wall)]."),
    CORE_METHOD(line_alloc, METH_NOARGS,
        "[(path, line offset, count, bytes)] of the allocations per line, in first-seen order."),
    CORE_METHOD(totals, METH_NOARGS,
        "(strings, modules, paths, nine summed counters, live bytes, live count)."),
    CORE_METHOD(leak_sites, METH_NOARGS,
        "[(path, count, bytes)] of the live allocations, largest first."),
    CORE_METHOD(heap, METH_NOARGS, "[(address, path, size)] of the live heap."),
    CORE_METHOD(take_definitions, METH_NOARGS,
        "Packed uint32 (type, ID) pairs of the definitions since the previous call."),
    CORE_METHOD(take_records, METH_NOARGS,
        "Record mode: the entries decoded since the previous call, as entry tuples."),
    CORE_METHOD(memory, METH_NOARGS, "Bytes of memory the core holds."),
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rokuprof._native._bsprof.Core",
    .tp_doc = "Core(limits, line_data, record=False, seed=0, queue_from=-1): the native body "
              "decoder and profile tables of one stream. queue_from: the live heap's size in "
              "cells from which entries are decoded ahead of applying them (-1: the default); "
              "results do not depend on it.",
    .tp_basicsize = sizeof(CoreObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_methods = Core_methods,
};

static PyObject *utf8_replace_length(PyObject *Py_UNUSED(module), PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    size_t n = bsp_utf8_replace_length(view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return PyLong_FromSize_t(n);
}

static PyMethodDef module_methods[] = {
    {"utf8_replace_length", utf8_replace_length, METH_O,
     "Characters of bytes.decode('utf-8', 'replace'), counted by the core."},
    {"sampler_take", sampler_take, METH_VARARGS,
     "sampler_take(items, rest, carry, units, hz): Sampler.take in C, or None "
     "(rokuprof/_native/sampler_take.c)."},
    {"samples_text", samples_text, METH_VARARGS,
     "samples_text(threads, origin, hz[, dumps]): a chunk's samples as JSON text, or None "
     "(rokuprof/_native/samples_text.c)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_bsprof", "The native .bsprof body decoder and profile tables.", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

/* The module's integer constants: each is the core's BSP_<name>. */
#define CONSTANT(name) {#name, BSP_##name}

static const struct {
    const char *name;
    int value;
} constants[] = {
    CONSTANT(MORE), CONSTANT(END), CONSTANT(REJECT), CONSTANT(REDEFINED),
    CONSTANT(WARN_HEAP_FULL), CONSTANT(WARN_LINES_FULL), CONSTANT(WARN_SATURATED),
    CONSTANT(WARN_ALLOC_LINES_FULL), CONSTANT(WARN_DEEP_PATHS),
};

PyMODINIT_FUNC PyInit__bsprof(void)
{
    if (PyType_Ready(&CoreType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&CoreType);
    int failed = PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0;
    for (size_t i = 0; !failed && i < sizeof(constants) / sizeof(constants[0]); i++)
        failed = PyModule_AddIntConstant(m, constants[i].name, constants[i].value) < 0;
    if (failed) {
        Py_DECREF(&CoreType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
