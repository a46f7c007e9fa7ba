/*
 * samples_text(threads, origin, hz[, dumps]): a Sentry chunk's samples as JSON text, in C.
 *
 * The native twin of rokuprof/sentry/chunkjson.py's samples writer, byte for byte: each
 * sample is {"timestamp":T,"thread_id":...,"stack_id":S}, T written as repr(origin + slot / hz)
 * writes it, the samples in order of time then of thread (the threads come sorted).
 *
 * threads: a list of (tail, runs) per thread in thread order; tail is the bytes that follow a
 * sample's timestamp up to its stack id (',"thread_id":"1","stack_id":'), runs a list of
 * (first slot, stack id, samples) tuples. dumps (orjson.dumps) writes the times where its
 * text is repr's, several times faster than repr's own routine, which writes the others (and
 * all of them when dumps gives anything but one text per time).
 *
 * Returns bytes, or None when the runs are not what the builder lays (two samples of one
 * thread in one slot, a slot or count out of range, a time that is not finite): the Python
 * writer then handles them. Cost: linear in the samples (a merge of the threads' sorted
 * samples; a sort only when a thread's runs come out of order or there are many threads).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "samples_text.h"

/* A slot at most this large keeps slot * threads + rank and slot / hz exact. */
#define MAX_SLOT ((int64_t)1 << 40)
#define MAX_THREADS 4096
/* More threads than this are put in order by a sort rather than a merge. */
#define MERGE_THREADS 16
/* Characters a repr of a double takes at most ("-2.2250738585072014e-308"). */
#define STAMP_CHARS 32
#define HEAD "{\"timestamp\":"

typedef struct {
    uint64_t key; /* slot * threads + rank: time, then thread order */
    int64_t stack;
} sample;

static int by_key(const void *a, const void *b)
{
    uint64_t x = ((const sample *)a)->key, y = ((const sample *)b)->key;
    return (x > y) - (x < y);
}

/* One thread's runs appended to out as samples; *sorted cleared when they are out of order.
 * Returns 0, 1 when a run is out of range (None for the caller), -1 on a Python error. */
static int expand_runs(PyObject *runs, uint64_t k, uint64_t rank, sample **out, size_t *used,
                       size_t *room, int *sorted)
{
    if (!PyList_Check(runs))
        return 1;
    uint64_t last_key = 0;
    int any = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(runs); i++) {
        PyObject *run = PyList_GET_ITEM(runs, i);
        if (!PyTuple_Check(run) || PyTuple_GET_SIZE(run) != 3)
            return 1;
        int64_t v[3];
        for (int j = 0; j < 3; j++) {
            PyObject *item = PyTuple_GET_ITEM(run, j);
            if (!PyLong_CheckExact(item))
                return 1;
            int overflow = 0;
            v[j] = PyLong_AsLongLongAndOverflow(item, &overflow);
            if (overflow || (v[j] == -1 && PyErr_Occurred())) {
                PyErr_Clear();
                return 1;
            }
        }
        int64_t slot = v[0], stack = v[1], n = v[2];
        if (slot < 0 || n < 1 || stack < 0 || slot > MAX_SLOT || n > MAX_SLOT - slot)
            return 1;
        if (*used + (size_t)n > *room) {
            size_t want = (*room ? *room : 1024);
            while (want < *used + (size_t)n)
                want *= 2;
            sample *grown = realloc(*out, want * sizeof(sample));
            if (!grown) {
                PyErr_NoMemory();
                return -1;
            }
            *out = grown;
            *room = want;
        }
        for (int64_t s = slot; s < slot + n; s++) {
            uint64_t key = (uint64_t)s * k + rank;
            if (any && key <= last_key)
                *sorted = 0;
            last_key = key;
            any = 1;
            (*out)[(*used)++] = (sample){key, stack};
        }
    }
    return 0;
}

/* Merge the threads' samples, each thread's sorted and held one after another in src
 * (bounds[r] .. bounds[r + 1]; at: k cursors), into dst in key order. O(samples x k): for few
 * threads only. */
static void merge_threads(const sample *src, const size_t *bounds, size_t k, size_t *at,
                          sample *dst)
{
    memcpy(at, bounds, k * sizeof(size_t));
    size_t total = bounds[k], done = 0;
    while (done < total) {
        size_t best = k;
        for (size_t r = 0; r < k; r++)
            if (at[r] < bounds[r + 1] && (best == k || src[at[r]].key < src[at[best]].key))
                best = r;
        /* take the whole stretch of this thread that comes before every other thread's next */
        uint64_t limit = UINT64_MAX;
        for (size_t r = 0; r < k; r++)
            if (r != best && at[r] < bounds[r + 1] && src[at[r]].key < limit)
                limit = src[at[r]].key;
        while (at[best] < bounds[best + 1] && src[at[best]].key < limit)
            dst[done++] = src[at[best]++];
    }
}

/* The lowest and highest times whose shortest round-trip text has no exponent: there
 * orjson's float text is repr's (rokuprof/sentry/chunkjson.py: REPR_RANGE). */
#define FAST_LOW 1.0
#define FAST_HIGH 1e15

/* Each distinct slot's time as repr writes it, STAMP_CHARS apart in text, lengths in lens:
 * by dumps (a Python callable writing a list of floats as a JSON array, several times
 * faster than repr) when every time lies in [FAST_LOW, FAST_HIGH), else by repr's own
 * routine. Returns 0, 1 when a time is not finite, -1 on a Python error. */
static int stamp_texts(const uint64_t *slots, size_t count, double origin, long long hz,
                       PyObject *dumps, char *text, unsigned char *lens)
{
    int fast = dumps != Py_None;
    for (size_t i = 0; i < count; i++) {
        double t = origin + (double)slots[i] / (double)hz;
        if (!isfinite(t))
            return 1; /* the Python writer refuses it, saying why */
        if (!(t >= FAST_LOW && t < FAST_HIGH))
            fast = 0;
    }
    if (fast) {
        PyObject *times = PyList_New((Py_ssize_t)count);
        if (!times)
            return -1;
        for (size_t i = 0; i < count; i++) {
            PyObject *t = PyFloat_FromDouble(origin + (double)slots[i] / (double)hz);
            if (!t) {
                Py_DECREF(times);
                return -1;
            }
            PyList_SET_ITEM(times, (Py_ssize_t)i, t);
        }
        PyObject *json = PyObject_CallOneArg(dumps, times);
        Py_DECREF(times);
        if (!json)
            return -1;
        const char *p = PyBytes_Check(json) ? PyBytes_AS_STRING(json) : NULL;
        const char *end = p ? p + PyBytes_GET_SIZE(json) : NULL;
        size_t i = 0;
        if (p && end - p >= 2 && *p == '[' && end[-1] == ']') {
            p++;
            end--;
            while (i < count && p < end) {
                const char *comma = memchr(p, ',', (size_t)(end - p));
                const char *stop = comma ? comma : end;
                if (stop - p > STAMP_CHARS || stop == p)
                    break;
                memcpy(text + i * STAMP_CHARS, p, (size_t)(stop - p));
                lens[i++] = (unsigned char)(stop - p);
                p = comma ? comma + 1 : end;
            }
        }
        int whole = i == count && p == end;
        Py_DECREF(json);
        if (whole)
            return 0;
    }
    for (size_t i = 0; i < count; i++) { /* repr's own routine */
        double t = origin + (double)slots[i] / (double)hz;
        char *made = PyOS_double_to_string(t, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (!made)
            return -1;
        size_t n = strlen(made);
        if (n <= STAMP_CHARS)
            memcpy(text + i * STAMP_CHARS, made, n);
        PyMem_Free(made);
        if (n > STAMP_CHARS)
            return 1; /* never: a repr is at most 24 characters */
        lens[i] = (unsigned char)n;
    }
    return 0;
}

/* n in decimal at p; returns the end. */
static char *write_digits(char *p, uint64_t n)
{
    char buf[20];
    int len = 0;
    do {
        buf[len++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    while (len)
        *p++ = buf[--len];
    return p;
}

PyObject *samples_text(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *threads, *dumps = Py_None;
    double origin;
    long long hz;
    if (!PyArg_ParseTuple(args, "O!dL|O", &PyList_Type, &threads, &origin, &hz, &dumps))
        return NULL;
    Py_ssize_t k = PyList_GET_SIZE(threads);
    if (k < 1 || k > MAX_THREADS || hz < 1)
        Py_RETURN_NONE;
    sample *all = NULL, *merged = NULL;
    uint64_t *slots = NULL;
    char *stamps = NULL;
    unsigned char *lens = NULL;
    size_t used = 0, room = 0, tails = 0;
    size_t *bounds = calloc(2 * (size_t)k + 1, sizeof(size_t)); /* bounds, then cursors */
    PyObject *result = NULL;
    int sorted = 1, status = 0;
    if (!bounds) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t r = 0; r < k && status == 0; r++) {
        PyObject *pair = PyList_GET_ITEM(threads, r);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !PyBytes_Check(PyTuple_GET_ITEM(pair, 0))) {
            status = 1;
            break;
        }
        size_t tail = (size_t)PyBytes_GET_SIZE(PyTuple_GET_ITEM(pair, 0));
        tails = tail > tails ? tail : tails;
        status = expand_runs(PyTuple_GET_ITEM(pair, 1), (uint64_t)k, (uint64_t)r, &all, &used,
                             &room, &sorted);
        bounds[r + 1] = used;
    }
    if (status != 0 || used == 0)
        goto done;
    if (sorted && k > 1 && k <= MERGE_THREADS) {
        merged = malloc(used * sizeof(sample));
        if (!merged) {
            PyErr_NoMemory();
            status = -1;
            goto done;
        }
        merge_threads(all, bounds, (size_t)k, bounds + k + 1, merged);
        sample *swap = all;
        all = merged;
        merged = swap;
    } else if (k > 1 || !sorted) {
        qsort(all, used, sizeof(sample), by_key);
    }
    for (size_t i = 1; i < used; i++)
        if (all[i].key == all[i - 1].key) {
            status = 1; /* two samples in one cell */
            goto done;
        }
    /* the distinct slots, in order, and their times' text */
    size_t distinct = 0;
    slots = malloc(used * sizeof(uint64_t));
    if (!slots) {
        PyErr_NoMemory();
        status = -1;
        goto done;
    }
    for (size_t i = 0; i < used; i++) {
        uint64_t slot = all[i].key / (uint64_t)k;
        if (!distinct || slots[distinct - 1] != slot)
            slots[distinct++] = slot;
    }
    stamps = malloc(distinct * STAMP_CHARS);
    lens = malloc(distinct);
    if (!stamps || !lens) {
        PyErr_NoMemory();
        status = -1;
        goto done;
    }
    status = stamp_texts(slots, distinct, origin, hz, dumps, stamps, lens);
    if (status != 0)
        goto done;
    /* each sample: head, stamp, tail, stack id (at most 19 digits), "}" and "," */
    size_t per = sizeof(HEAD) - 1 + STAMP_CHARS + tails + 20 + 2;
    if (used > (size_t)PY_SSIZE_T_MAX / per) {
        PyErr_NoMemory();
        status = -1;
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(used * per));
    if (!result) {
        status = -1;
        goto done;
    }
    char *out = PyBytes_AS_STRING(result), *p = out;
    size_t at = 0; /* the distinct slot of sample i */
    for (size_t i = 0; i < used; i++) {
        uint64_t slot = all[i].key / (uint64_t)k;
        Py_ssize_t rank = (Py_ssize_t)(all[i].key % (uint64_t)k);
        if (slots[at] != slot)
            at++;
        if (i)
            *p++ = ',';
        memcpy(p, HEAD, sizeof(HEAD) - 1);
        p += sizeof(HEAD) - 1;
        memcpy(p, stamps + at * STAMP_CHARS, lens[at]);
        p += lens[at];
        PyObject *tail = PyTuple_GET_ITEM(PyList_GET_ITEM(threads, rank), 0);
        memcpy(p, PyBytes_AS_STRING(tail), (size_t)PyBytes_GET_SIZE(tail));
        p += PyBytes_GET_SIZE(tail);
        p = write_digits(p, (uint64_t)all[i].stack);
        *p++ = '}';
    }
    if (_PyBytes_Resize(&result, p - out) < 0)
        status = -1; /* result is NULL now */
done:
    free(all);
    free(merged);
    free(slots);
    free(stamps);
    free(lens);
    free(bounds);
    if (status < 0) {
        Py_XDECREF(result);
        return NULL;
    }
    if (status > 0 || used == 0) {
        Py_XDECREF(result);
        Py_RETURN_NONE;
    }
    return result;
}
