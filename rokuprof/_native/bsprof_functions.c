/*
 * bsprof_functions: per-function figures of the call-path tables, in plain C (see
 * bsp_functions_new in bsprof_core.h). The rule is rokuprof.profile.functions'
 * aggregate_functions; only the names are left to the caller (two triples may share a name, and
 * a name is counted once per stack). Memory: the distinct triples (24 bytes each and an index
 * of 4-byte cells), the stack of one path, and a stamp per group; never anything per path.
 */
#include "bsprof_core.h"

#include <stdlib.h>
#include <string.h>

struct bsp_functions {
    int allocations;
    uint64_t seed;
    uint64_t *words; /* triples, 3 words each */
    size_t count, cap;
    uint32_t *index; /* open addressing: triple number + 1, 0 = empty */
    size_t mask;
    const bsp_path **stack;
    size_t stack_cap;
    uint32_t *frames; /* the triple numbers of the folded stack being counted */
    bsp_function_sums *sums;
    size_t *stamps; /* per group: the last path counted into its total */
};

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static size_t slot_of(const bsp_functions *f, const uint64_t *key)
{
    uint64_t h = mix(f->seed ^ key[0]);
    h = mix(h ^ key[1]);
    h = mix(h ^ key[2]);
    return (size_t)h & f->mask;
}

static int index_grow(bsp_functions *f)
{
    size_t cap = f->mask ? (f->mask + 1) * 2 : 64;
    uint32_t *cells = calloc(cap, sizeof(uint32_t));
    if (!cells)
        return 0;
    free(f->index);
    f->index = cells;
    f->mask = cap - 1;
    for (size_t t = 0; t < f->count; t++) {
        size_t i = slot_of(f, f->words + 3 * t);
        while (cells[i])
            i = (i + 1) & f->mask;
        cells[i] = (uint32_t)(t + 1);
    }
    return 1;
}

/* The number of a triple; added when add is set (else (size_t)-1 when absent), (size_t)-2
 * when out of memory. */
static size_t triple(bsp_functions *f, const uint64_t *key, int add)
{
    size_t i = slot_of(f, key);
    for (;;) {
        uint32_t v = f->index[i];
        if (!v)
            break;
        const uint64_t *w = f->words + 3 * (v - 1);
        if (w[0] == key[0] && w[1] == key[1] && w[2] == key[2])
            return v - 1;
        i = (i + 1) & f->mask;
    }
    if (!add)
        return (size_t)-1;
    if (f->count >= 0xFFFFFFFEu)
        return (size_t)-2;
    if (f->count == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        uint64_t *words = realloc(f->words, cap * 3 * sizeof(uint64_t));
        if (!words)
            return (size_t)-2;
        f->words = words;
        f->cap = cap;
    }
    memcpy(f->words + 3 * f->count, key, 3 * sizeof(uint64_t));
    f->count++;
    if (f->count * 10 > (f->mask + 1) * 7)
        return index_grow(f) ? f->count - 1 : (size_t)-2;
    f->index[i] = (uint32_t)f->count;
    return f->count - 1;
}

/* The counters of path slot i when they count (CPU, wall, calls, or allocated bytes), else
 * NULL; *id is the path's ID. */
static const uint64_t *counted(const bsp_core *core, const bsp_functions *f, size_t i,
                               uint32_t *id)
{
    const uint64_t *c = bsp_counters_at(core, i, id);
    if (c[BSP_CPU] || c[BSP_WALL] || c[BSP_CALLS] || (f->allocations && c[BSP_ALLOC_BYTES]))
        return c;
    return NULL;
}

/* The triples of the folded stack of a path into f->frames (or added to the triples when
 * add is set); the number of frames, (size_t)-1 when out of memory. */
static size_t frames(bsp_core *core, bsp_functions *f, uint32_t id, int add)
{
    size_t limit = bsp_stack_limit(core);
    size_t n = bsp_stack(core, id, f->stack_cap, f->stack);
    if (n == (size_t)-1)
        return n;
    size_t keep = n;
    if (n > limit)
        keep = limit ? limit - 1 : 0; /* the rest is one marked frame */
    for (size_t k = 0; k <= keep && k < n; k++) {
        const bsp_path *p = f->stack[k];
        uint64_t key[3] = {p->module, p->function_id, p->file_id};
        if (k == keep) {
            key[1] = BSP_FOLDED_FUNCTION;
            key[2] = BSP_FOLDED_FILE;
        }
        size_t t = triple(f, key, add);
        if (t == (size_t)-2)
            return (size_t)-1;
        f->frames[k] = (uint32_t)t;
    }
    return keep < n ? keep + 1 : n;
}

void bsp_functions_free(bsp_functions *f)
{
    if (!f)
        return;
    free(f->words);
    free(f->index);
    free(f->stack);
    free(f->frames);
    free(f->sums);
    free(f->stamps);
    free(f);
}

bsp_functions *bsp_functions_new(bsp_core *core, int allocations, uint64_t seed)
{
    bsp_functions *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->allocations = allocations != 0;
    f->seed = seed;
    /* a stack holds at most limit + 1 nodes, and no path twice */
    size_t limit = bsp_stack_limit(core), paths = bsp_path_count(core);
    f->stack_cap = (limit < paths ? limit : paths) + 1;
    f->stack = malloc(f->stack_cap * sizeof(*f->stack));
    f->frames = malloc(f->stack_cap * sizeof(*f->frames));
    if (!f->stack || !f->frames || !index_grow(f))
        goto nomem;
    size_t n = bsp_path_count(core) + 1;
    for (size_t i = 1; i < n; i++) { /* slot 0: the undefined paths, which have no stack */
        uint32_t id;
        if (counted(core, f, i, &id) && frames(core, f, id, 1) == (size_t)-1)
            goto nomem;
    }
    return f;
nomem:
    bsp_functions_free(f);
    return NULL;
}

size_t bsp_functions_triples(const bsp_functions *f, const uint64_t **words)
{
    *words = f->words;
    return f->count;
}

static inline void add128(bsp_function_sums *s, int k, uint64_t v)
{
    s->lo[k] += v;
    s->hi[k] += s->lo[k] < v;
}

int bsp_functions_sum(bsp_core *core, bsp_functions *f, const uint32_t *groups, size_t ngroups,
                      const bsp_function_sums **sums)
{
    free(f->sums);
    free(f->stamps);
    f->sums = calloc(ngroups ? ngroups : 1, sizeof(*f->sums));
    f->stamps = calloc(ngroups ? ngroups : 1, sizeof(*f->stamps));
    if (!f->sums || !f->stamps)
        return 0;
    size_t n = bsp_path_count(core) + 1;
    for (size_t i = 1; i < n; i++) {
        uint32_t id;
        const uint64_t *c = counted(core, f, i, &id);
        if (!c)
            continue;
        size_t m = frames(core, f, id, 0);
        if (m == (size_t)-1)
            return 0;
        if (m == 0)
            continue;
        bsp_function_sums *leaf = &f->sums[groups[f->frames[0]]];
        add128(leaf, BSP_SELF_CPU, c[BSP_CPU]);
        add128(leaf, BSP_SELF_WALL, c[BSP_WALL]);
        add128(leaf, BSP_FN_CALLS, c[BSP_CALLS]);
        if (f->allocations)
            add128(leaf, BSP_FN_ALLOC_BYTES, c[BSP_ALLOC_BYTES]);
        for (size_t k = 0; k < m; k++) {
            uint32_t g = groups[f->frames[k]];
            if (f->stamps[g] == i)
                continue; /* once per stack, however often the name recurs on it */
            f->stamps[g] = i;
            f->sums[g].seen = 1;
            add128(&f->sums[g], BSP_TOTAL_CPU, c[BSP_CPU]);
            add128(&f->sums[g], BSP_TOTAL_WALL, c[BSP_WALL]);
        }
    }
    *sums = f->sums;
    return 1;
}
