/*
 * bsprof_core: the .bsprof body loop and the profile tables in plain C. See bsprof_core.h.
 *
 * Layout of the tables:
 *   - strings, modules, paths, line keys: arrays in order of first definition, found through
 *     open-addressing indexes (linear probing, keys hashed with per-core random multipliers);
 *   - paths: one slot per defined path (slot 0 = entries on undefined paths) holding the node,
 *     its nine counters and their values at the previous delta;
 *   - allocations per line: 24-byte {path, line offset, count, bytes} records (no delta
 *     baseline: no consumer needs their changes), bounded by max_line_keys like line CPU, and
 *     found through an index of 4-byte cells (record number + 1) that holds no keys itself;
 *   - the live heap: open addressing of 8-byte {address, size} cells and a parallel array of
 *     4-byte allocating paths (12 bytes a cell), deleted with backward shifts (no tombstones),
 *     address 0 kept beside the table; at most half full until it reaches the capacity its
 *     limit needs at 3/4 full, then up to 3/4 full.
 * The semantics follow rokuprof.profile.tables.ProfileTables exactly; the tests compare them.
 */
#include "bsprof_core.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* growable arrays                                                                           */

static int grow(void **ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 1;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > ((size_t)-1) / 2 / elem)
            return 0;
        n *= 2;
    }
    void *p = realloc(*ptr, n * elem);
    if (!p)
        return 0;
    *ptr = p;
    *cap = n;
    return 1;
}

#define GROW(arr, cap, need) grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* For the few functions the decoding loop must have inline in both its versions (parse_with). */
#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* ---------------------------------------------------------------------------------------- */
/* hashing                                                                                   */

/* Multiply-add-shift hashing with random multipliers (Dietzfelbinger): universal, so a peer
 * that does not know the seed cannot aim IDs or addresses at one bucket. Index = bits 32.. of
 * a*key + b (64-bit arithmetic, 32-bit key halves). */
typedef struct {
    uint64_t a, a2, b;
} hasher;

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline size_t hash32(const hasher *h, uint32_t key, size_t mask)
{
    return (size_t)((h->a * key + h->b) >> 32) & mask;
}

static inline size_t hash64(const hasher *h, uint64_t key, size_t mask)
{
    return (size_t)((h->a * (uint32_t)key + h->a2 * (key >> 32) + h->b) >> 32) & mask;
}

/* An open-addressing table t (fields cells, mask, count) of cap empty cells, cap a power of two;
 * 0 when out of memory. */
#define TABLE_INIT(t, cap)                                                                   \
    table_init((void **)&(t)->cells, &(t)->mask, &(t)->count, (cap), sizeof(*(t)->cells))

static int table_init(void **cells, size_t *mask, size_t *count, size_t cap, size_t elem)
{
    *cells = calloc(cap, elem);
    *mask = cap - 1;
    *count = 0;
    return *cells != NULL;
}

/* DEFINE_MAP(map, kv, key_t, hash): an open-addressing map from a key_t (never 0) to a uint32
 * value, linear probing, at most 7/10 full (doubling when it would be fuller). Declares the
 * cell type kv, the map type and map_init, map_get (the value's address or NULL) and map_put
 * (0 when out of memory). One definition for each key width, so both probe alike. */
#define DEFINE_MAP(map, kv, key_t, hash)                                                      \
    typedef struct {                                                                          \
        key_t key;                                                                            \
        uint32_t value;                                                                       \
    } kv;                                                                                     \
                                                                                              \
    typedef struct {                                                                          \
        kv *cells;                                                                            \
        size_t mask; /* capacity - 1; capacity a power of two */                              \
        size_t count;                                                                         \
    } map;                                                                                    \
                                                                                              \
    static int map##_init(map *m, size_t cap) { return TABLE_INIT(m, cap); }                  \
                                                                                              \
    static inline uint32_t *map##_get(const map *m, key_t key, const hasher *hs)              \
    {                                                                                         \
        size_t i = hash(hs, key, m->mask);                                                    \
        for (;;) {                                                                            \
            kv *c = &m->cells[i];                                                             \
            if (c->key == key)                                                                \
                return &c->value;                                                             \
            if (c->key == 0)                                                                  \
                return NULL;                                                                  \
            i = (i + 1) & m->mask;                                                            \
        }                                                                                     \
    }                                                                                         \
                                                                                              \
    static int map##_put(map *m, key_t key, uint32_t value, const hasher *hs)                 \
    {                                                                                         \
        if ((m->count + 1) * 10 > (m->mask + 1) * 7) {                                        \
            size_t cap = (m->mask + 1) * 2;                                                   \
            kv *cells = calloc(cap, sizeof(kv));                                              \
            if (!cells)                                                                       \
                return 0;                                                                     \
            for (size_t j = 0; j <= m->mask; j++) {                                           \
                if (m->cells[j].key) {                                                        \
                    size_t i = hash(hs, m->cells[j].key, (cap - 1));                          \
                    while (cells[i].key)                                                      \
                        i = (i + 1) & (cap - 1);                                              \
                    cells[i] = m->cells[j];                                                   \
                }                                                                             \
            }                                                                                 \
            free(m->cells);                                                                   \
            m->cells = cells;                                                                 \
            m->mask = cap - 1;                                                                \
        }                                                                                     \
        size_t i = hash(hs, key, m->mask);                                                    \
        while (m->cells[i].key && m->cells[i].key != key)                                     \
            i = (i + 1) & m->mask;                                                            \
        if (!m->cells[i].key)                                                                 \
            m->count++;                                                                       \
        m->cells[i].key = key;                                                                \
        m->cells[i].value = value;                                                            \
        return 1;                                                                             \
    }

DEFINE_MAP(map32, kv32, uint32_t, hash32)
DEFINE_MAP(map64, kv64, uint64_t, hash64)

/* An index into records that hold their own keys: a cell is a record number + 1 (0 = empty),
 * so it costs 4 bytes per cell (linear probing, at most 7/10 full). Its user compares keys
 * through the records and rehashes with index32_grow. */
typedef struct {
    uint32_t *cells;
    size_t mask;
    size_t count;
} index32;

static int index32_init(index32 *x, size_t cap) { return TABLE_INIT(x, cap); }

/* ---------------------------------------------------------------------------------------- */
/* the live heap                                                                             */

/* A probe touches only the 8-byte {address, size} cells; the allocating path of cell i is
 * owners[i] (read when an allocation is made, replaced or listed). */
typedef struct {
    uint32_t address; /* 0 = empty cell (address 0 lives in heap.zero) */
    uint32_t size;
} cell;

typedef struct {
    cell *cells;
    uint32_t *owners;
    uint32_t zero_owner;
    size_t mask;
    size_t count; /* cells in use, address 0 included */
    size_t full_cap; /* the capacity that holds the most allocations the limit allows */
    int has_zero;
    cell zero;
} heap;

/* The heap starts with cap cells and stays at most half full (short probe runs) until it has
 * full_cap cells, the capacity a 3/4-full table needs for `limit` allocations; from there on it
 * may be up to 3/4 full. So the most memory it can take is what a 3/4-full table takes. */
static int heap_init(heap *h, size_t cap, uint64_t limit)
{
    h->has_zero = 0;
    h->full_cap = cap;
    while ((limit + 1) * 4 > (uint64_t)h->full_cap * 3 && h->full_cap < ((size_t)1 << 40))
        h->full_cap *= 2;
    h->owners = calloc(cap, sizeof(uint32_t));
    return TABLE_INIT(h, cap) && h->owners;
}

/* The allocating path's place of a cell. */
static inline uint32_t *heap_owner(heap *h, const cell *c)
{
    return c == &h->zero ? &h->zero_owner : &h->owners[c - h->cells];
}

/* Whether one more cell needs a bigger table. */
static inline int heap_needs_room(const heap *h)
{
    size_t cap = h->mask + 1;
    return (h->count + 1) * 4 > cap * 3 || ((h->count + 1) * 2 > cap && cap < h->full_cap);
}

static int heap_grow(heap *h, const hasher *hs)
{
    size_t cap = (h->mask + 1) * 2;
    cell *cells = calloc(cap, sizeof(cell));
    uint32_t *owners = calloc(cap, sizeof(uint32_t));
    if (!cells || !owners) {
        free(cells);
        free(owners);
        return 0;
    }
    for (size_t j = 0; j <= h->mask; j++) {
        if (h->cells[j].address) {
            size_t i = hash32(hs, h->cells[j].address, (cap - 1));
            while (cells[i].address)
                i = (i + 1) & (cap - 1);
            cells[i] = h->cells[j];
            owners[i] = h->owners[j];
        }
    }
    free(h->cells);
    free(h->owners);
    h->cells = cells;
    h->owners = owners;
    h->mask = cap - 1;
    return 1;
}

/* The cell of an address for an allocation: the live one (*found = 1) or the empty cell it
 * would take (grown first, so the caller may fill it: heap_fill). NULL when out of memory. */
static ALWAYS_INLINE cell *heap_claim(heap *h, uint32_t address, const hasher *hs, int *found)
{
    if (address == 0) {
        *found = h->has_zero;
        return &h->zero;
    }
    if (heap_needs_room(h) && !heap_grow(h, hs))
        return NULL;
    size_t i = hash32(hs, address, h->mask);
    for (;;) {
        cell *c = &h->cells[i];
        if (c->address == address) {
            *found = 1;
            return c;
        }
        if (c->address == 0) {
            *found = 0;
            return c;
        }
        i = (i + 1) & h->mask;
    }
}

static inline void heap_fill(heap *h, cell *c, uint32_t address, uint32_t path, uint32_t size)
{
    if (c == &h->zero)
        h->has_zero = 1;
    c->address = address;
    *heap_owner(h, c) = path;
    c->size = size;
    h->count++;
}

/* Remove an address; return 0 when it was not live. */
static ALWAYS_INLINE int heap_remove(heap *h, uint32_t address, uint32_t *size, const hasher *hs)
{
    if (address == 0) {
        if (!h->has_zero)
            return 0;
        h->has_zero = 0;
        *size = h->zero.size;
        h->count--;
        return 1;
    }
    size_t mask = h->mask;
    size_t i = hash32(hs, address, mask);
    for (;;) {
        if (h->cells[i].address == address)
            break;
        if (h->cells[i].address == 0)
            return 0;
        i = (i + 1) & mask;
    }
    *size = h->cells[i].size;
    h->count--;
    /* Backward-shift deletion: move later cells of the run into the hole when their home
     * position allows, so lookups never need tombstones. */
    size_t hole = i;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (h->cells[j].address == 0)
            break;
        size_t home = hash32(hs, h->cells[j].address, mask);
        /* j may move to hole if home is not cyclically inside (hole, j]. */
        int inside = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!inside) {
            h->cells[hole] = h->cells[j];
            h->owners[hole] = h->owners[j];
            hole = j;
        }
    }
    h->cells[hole].address = 0;
    return 1;
}

/* ---------------------------------------------------------------------------------------- */
/* the core                                                                                  */

typedef struct {
    bsp_path node; /* node.id == 0 for slot 0 (undefined paths) */
    uint64_t c[BSP_NCOUNTERS];
    uint64_t base[BSP_NCOUNTERS]; /* values at the previous delta */
    uint32_t dirty;
} slot;

typedef struct {
    uint32_t id;
    uint32_t len;
    uint64_t offset; /* in the arena */
} string_entry;

typedef struct {
    uint32_t id;
    uint32_t name_id;
} module_entry;

typedef struct {
    uint32_t path, line_offset;
    uint64_t cpu, wall, base_cpu, base_wall;
    uint32_t dirty;
} line_entry;

#define VEC(type, name) \
    type *name;         \
    size_t name##_len, name##_cap

struct bsp_core {
    bsp_limits lim;
    int line;
    int record;
    hasher hs;
    size_t queue_from; /* heap cells from which parse() queues entries (bsp_set_queue_from) */

    uint64_t offset; /* body bytes consumed by whole entries */
    uint64_t entries;
    uint64_t defs[3]; /* definitions seen: strings, modules, paths */
    uint64_t string_chars;

    VEC(uint8_t, carry); /* the partial entry */
    size_t scan;         /* bytes of the carried string entry already searched for its NUL */

    VEC(uint8_t, arena);
    VEC(string_entry, strings);
    map32 string_index;
    VEC(module_entry, modules);
    map32 module_index;
    VEC(slot, slots);
    map32 path_index; /* path ID -> slot */
    uint32_t last_path, last_slot;
    VEC(line_entry, lines);
    map64 line_index; /* (path << 32 | line offset) -> index in lines */
    uint64_t last_line_key, last_alloc_key; /* the previous key found (0: none) and its index */
    uint32_t last_line, last_alloc;
    VEC(bsp_alloc_line, alloc_lines);
    index32 alloc_line_index; /* (path << 32 | line offset) -> record number + 1 */
    heap live;
    uint64_t live_bytes;

    uint64_t dangling, replaced, untracked_allocs, untracked_lines, untracked_line_allocs;
    uint64_t saturated;
    uint64_t deep_paths;
    int warnings[BSP_NWARNINGS];

    VEC(uint32_t, dirty_slots);
    VEC(uint32_t, dirty_lines);
    VEC(bsp_path_counts, delta_paths);
    VEC(bsp_line_counts, delta_lines);
    VEC(bsp_site, sites);
    VEC(uint32_t, defs_log);
    VEC(uint32_t, records);
    VEC(uint32_t, out_words); /* what bsp_take_definitions / bsp_take_records hand out */
    uint32_t *marks;          /* per slot: the walk (bsp_stack) that last reached it */
    size_t marks_cap;
    uint32_t mark;
};

bsp_core *bsp_new(const bsp_limits *limits, int line_data, int record, uint64_t seed)
{
    bsp_core *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->lim = *limits;
    c->line = line_data != 0;
    c->record = record != 0;
    c->hs.a = splitmix(&seed) | 1;
    c->hs.a2 = splitmix(&seed) | 1;
    c->hs.b = splitmix(&seed);
    c->queue_from = BSP_QUEUE_FROM_CELLS;
    if (!map32_init(&c->string_index, 64) || !map32_init(&c->module_index, 16) ||
        !map32_init(&c->path_index, 256) || !map64_init(&c->line_index, 256) ||
        !index32_init(&c->alloc_line_index, 16) ||
        !heap_init(&c->live, 1024, limits->max_live_allocations) || !GROW(c->slots, c->slots_cap, 64) ||
        !GROW(c->dirty_slots, c->dirty_slots_cap, 64)) {
        bsp_free(c);
        return NULL;
    }
    memset(&c->slots[0], 0, sizeof(slot));
    c->slots_len = 1;
    return c;
}

void bsp_free(bsp_core *c)
{
    if (!c)
        return;
    free(c->carry);
    free(c->arena);
    free(c->strings);
    free(c->string_index.cells);
    free(c->modules);
    free(c->module_index.cells);
    free(c->slots);
    free(c->path_index.cells);
    free(c->lines);
    free(c->line_index.cells);
    free(c->alloc_lines);
    free(c->alloc_line_index.cells);
    free(c->live.cells);
    free(c->live.owners);
    free(c->dirty_slots);
    free(c->dirty_lines);
    free(c->delta_paths);
    free(c->delta_lines);
    free(c->sites);
    free(c->defs_log);
    free(c->records);
    free(c->out_words);
    free(c->marks);
    free(c);
}

size_t bsp_memory(const bsp_core *c)
{
    return sizeof(*c) + c->carry_cap + c->arena_cap + c->strings_cap * sizeof(string_entry) +
           (c->string_index.mask + 1) * sizeof(kv32) + c->modules_cap * sizeof(module_entry) +
           (c->module_index.mask + 1) * sizeof(kv32) + c->slots_cap * sizeof(slot) +
           (c->path_index.mask + 1) * sizeof(kv32) + c->lines_cap * sizeof(line_entry) +
           (c->line_index.mask + 1) * sizeof(kv64) +
           c->alloc_lines_cap * sizeof(bsp_alloc_line) +
           (c->alloc_line_index.mask + 1) * sizeof(uint32_t) +
           (c->live.mask + 1) * (sizeof(cell) + sizeof(uint32_t)) +
           (c->dirty_slots_cap + c->dirty_lines_cap + c->defs_log_cap + c->records_cap +
            c->out_words_cap) * sizeof(uint32_t) +
           c->delta_paths_cap * sizeof(bsp_path_counts) +
           c->delta_lines_cap * sizeof(bsp_line_counts) + c->sites_cap * sizeof(bsp_site) +
           c->marks_cap * sizeof(uint32_t);
}

/* ---------------------------------------------------------------------------------------- */
/* applying entries                                                                          */

static inline void touch(bsp_core *c, uint32_t s)
{
    /* a slot's first change since the previous delta: remember it (capacity is reserved
     * when the slot is created, so this never allocates) */
    if (!c->slots[s].dirty) {
        c->slots[s].dirty = 1;
        c->dirty_slots[c->dirty_slots_len++] = s;
    }
}

/* The counters slot of an entry's path: its own, or slot 0 when it was never defined. */
static inline uint32_t slot_of(bsp_core *c, uint32_t path)
{
    if (path == 0)
        return 0;
    if (path == c->last_path)
        return c->last_slot;
    uint32_t *s = map32_get(&c->path_index, path, &c->hs);
    if (!s) {
        c->dangling++;
        return 0;
    }
    c->last_path = path;
    c->last_slot = *s;
    return *s;
}

static int log_definition(bsp_core *c, uint32_t kind, uint32_t id)
{
    if (!GROW(c->defs_log, c->defs_log_cap, c->defs_log_len + 2))
        return 0;
    c->defs_log[c->defs_log_len++] = kind;
    c->defs_log[c->defs_log_len++] = id;
    return 1;
}

static int record(bsp_core *c, uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3, uint32_t w4,
                  uint32_t w5, uint32_t w6, uint32_t w7)
{
    if (!GROW(c->records, c->records_cap, c->records_len + BSP_RECORD_WORDS))
        return 0;
    uint32_t *r = c->records + c->records_len;
    r[0] = w0, r[1] = w1, r[2] = w2, r[3] = w3, r[4] = w4, r[5] = w5, r[6] = w6, r[7] = w7;
    c->records_len += BSP_RECORD_WORDS;
    return 1;
}

/* The definition limits (checks.DefinitionLimits): 0 when this definition is one too many. */
static int definition_fits(const bsp_core *c, int kind, uint64_t chars)
{
    static const size_t offsets[3] = {
        offsetof(bsp_limits, max_strings),
        offsetof(bsp_limits, max_modules),
        offsetof(bsp_limits, max_paths),
    };
    uint64_t maximum = *(const uint64_t *)((const char *)&c->lim + offsets[kind]);
    if (c->defs[kind] + 1 > maximum)
        return 0;
    return !chars || c->string_chars + chars <= c->lim.max_string_table_chars;
}

static int define_string(bsp_core *c, uint32_t id, const uint8_t *text, size_t len)
{
    if (!GROW(c->arena, c->arena_cap, c->arena_len + len))
        return 0;
    uint64_t offset = c->arena_len;
    if (len)
        memcpy(c->arena + c->arena_len, text, len);
    c->arena_len += len;
    uint32_t *i = map32_get(&c->string_index, id, &c->hs);
    if (i) {
        c->strings[*i].offset = offset;
        c->strings[*i].len = (uint32_t)len;
    } else {
        if (!GROW(c->strings, c->strings_cap, c->strings_len + 1) ||
            !map32_put(&c->string_index, id, (uint32_t)c->strings_len, &c->hs))
            return 0;
        string_entry *e = &c->strings[c->strings_len++];
        e->id = id;
        e->len = (uint32_t)len;
        e->offset = offset;
    }
    return log_definition(c, i ? BSP_REDEFINED : 0, id) && /* type 0, a string */
           (!c->record || record(c, 0, id, (uint32_t)offset, (uint32_t)(offset >> 32),
                                 (uint32_t)len, 0, 0, 0));
}

static int define_module(bsp_core *c, uint32_t id, uint32_t name_id)
{
    uint32_t *i = map32_get(&c->module_index, id, &c->hs);
    if (i) {
        c->modules[*i].name_id = name_id;
    } else {
        if (!GROW(c->modules, c->modules_cap, c->modules_len + 1) ||
            !map32_put(&c->module_index, id, (uint32_t)c->modules_len, &c->hs))
            return 0;
        c->modules[c->modules_len].id = id;
        c->modules[c->modules_len].name_id = name_id;
        c->modules_len++;
    }
    return log_definition(c, i ? 1 | BSP_REDEFINED : 1, id) &&
           (!c->record || record(c, 1, id, name_id, 0, 0, 0, 0, 0));
}

static void warn(bsp_core *c, int which);

static int define_path(bsp_core *c, uint32_t id, uint32_t caller, uint32_t module,
                       uint32_t line_offset, uint32_t file_id, uint32_t line, uint32_t function)
{
    if (c->record && !record(c, 2, id, caller, module, line_offset, file_id, line, function))
        return 0;
    uint32_t depth = 0;
    if (caller) {
        uint32_t *parent = map32_get(&c->path_index, caller, &c->hs);
        if (!parent) {
            c->dangling++;
            module = 0;
        } else {
            module = c->slots[*parent].node.module;
            depth = c->slots[*parent].node.depth + 1;
        }
    }
    uint32_t *s = map32_get(&c->path_index, id, &c->hs);
    slot *p;
    if (s) {
        p = &c->slots[*s];
    } else {
        if ((uint64_t)depth >= c->lim.max_stack_depth && !c->deep_paths++)
            warn(c, BSP_WARN_DEEP_PATHS);
        if (c->slots_len > 0xFFFFFFFEu ||
            !GROW(c->slots, c->slots_cap, c->slots_len + 1) ||
            !GROW(c->dirty_slots, c->dirty_slots_cap, c->slots_len + 1) ||
            !map32_put(&c->path_index, id, (uint32_t)c->slots_len, &c->hs))
            return 0;
        p = &c->slots[c->slots_len++];
        memset(p, 0, sizeof(*p));
    }
    p->node.id = id;
    p->node.caller = caller;
    p->node.module = module;
    p->node.file_id = file_id;
    p->node.line = line;
    p->node.function_id = function;
    p->node.caller_line_offset = line_offset;
    p->node.depth = depth;
    return log_definition(c, s ? 2 | BSP_REDEFINED : 2, id);
}

static void warn(bsp_core *c, int which)
{
    for (int i = 0; i < BSP_NWARNINGS; i++) {
        if (c->warnings[i] == 0) {
            c->warnings[i] = which;
            return;
        }
    }
}

/* Counters stop at 2^64-1 rather than wrap, as in ProfileTables; each time one would have
 * passed it is counted (and the first time, warned about). */
static inline void add(bsp_core *c, uint64_t *counter, uint64_t value)
{
    uint64_t sum = *counter + value;
    if (sum < value) {
        sum = UINT64_MAX;
        if (!c->saturated)
            warn(c, BSP_WARN_SATURATED);
        c->saturated++;
    }
    *counter = sum;
}

/* An allocation at a line: counted under the path it named (defined or not) and its line
 * offset, while the table has room for a new pair; else counted as untracked (and, the first
 * time, warned about). */
static inline uint64_t alloc_line_key(const bsp_alloc_line *e)
{
    return (uint64_t)e->path << 32 | e->line_offset;
}

/* The record of a key, or NULL with *empty = the index cell a new record would take. */
static inline bsp_alloc_line *alloc_line_find(bsp_core *c, uint64_t key, uint32_t **empty)
{
    index32 *x = &c->alloc_line_index;
    size_t i = hash64(&c->hs, key, x->mask);
    for (;;) {
        uint32_t v = x->cells[i];
        if (!v) {
            *empty = &x->cells[i];
            return NULL;
        }
        bsp_alloc_line *e = &c->alloc_lines[v - 1];
        if (alloc_line_key(e) == key)
            return e;
        i = (i + 1) & x->mask;
    }
}

/* Double the index of the allocation lines (their records give the keys). */
static int alloc_line_index_grow(bsp_core *c)
{
    index32 *x = &c->alloc_line_index;
    size_t cap = (x->mask + 1) * 2;
    uint32_t *cells = calloc(cap, sizeof(uint32_t));
    if (!cells)
        return 0;
    for (size_t j = 0; j <= x->mask; j++) {
        uint32_t v = x->cells[j];
        if (v) {
            size_t i = hash64(&c->hs, alloc_line_key(&c->alloc_lines[v - 1]), cap - 1);
            while (cells[i])
                i = (i + 1) & (cap - 1);
            cells[i] = v;
        }
    }
    free(x->cells);
    x->cells = cells;
    x->mask = cap - 1;
    return 1;
}

static ALWAYS_INLINE int count_alloc_line(bsp_core *c, uint32_t path, uint32_t line_offset,
                                          uint32_t size)
{
    uint64_t key = (uint64_t)path << 32 | line_offset;
    uint32_t *cell_of_new = NULL;
    bsp_alloc_line *e = key == c->last_alloc_key ? &c->alloc_lines[c->last_alloc]
                                                 : alloc_line_find(c, key, &cell_of_new);
    if (e) {
        /* counted below */
    } else if (c->alloc_lines_len < c->lim.max_line_keys && c->alloc_lines_len < 0xFFFFFFFEu) {
        index32 *x = &c->alloc_line_index;
        if (!GROW(c->alloc_lines, c->alloc_lines_cap, c->alloc_lines_len + 1))
            return 0;
        if ((x->count + 1) * 10 > (x->mask + 1) * 7) {
            if (!alloc_line_index_grow(c))
                return 0;
            alloc_line_find(c, key, &cell_of_new); /* its cell in the grown index */
        }
        e = &c->alloc_lines[c->alloc_lines_len++];
        e->path = path;
        e->line_offset = line_offset;
        e->count = 0;
        e->bytes = 0;
        *cell_of_new = (uint32_t)c->alloc_lines_len; /* record number + 1 */
        x->count++;
    } else {
        if (!c->untracked_line_allocs)
            warn(c, BSP_WARN_ALLOC_LINES_FULL);
        c->untracked_line_allocs++;
        return 1;
    }
    c->last_alloc_key = key;
    c->last_alloc = (uint32_t)(e - c->alloc_lines);
    add(c, &e->count, 1);
    add(c, &e->bytes, size);
    return 1;
}

/* The three counting entries' effects. Always inlined, with the heap's and the allocation
 * lines' look-ups: into parse's loop (where they were before the look-ahead queue, and where
 * one reader with a small heap spends its time) and into the queue's apply. */
static ALWAYS_INLINE int apply_memory(bsp_core *c, uint32_t path, uint32_t op,
                                      uint32_t line_offset, uint32_t address, uint32_t size)
{
    if (c->record && !record(c, 3, path, op, line_offset, address, size, 0, 0))
        return 0;
    uint32_t s = slot_of(c, path);
    uint64_t *k = c->slots[s].c;
    touch(c, s);
    if (op == 0) {
        add(c, &k[BSP_ALLOCS], 1);
        add(c, &k[BSP_ALLOC_BYTES], size);
        /* before the heap, as in ProfileTables: a full line table warns before a full heap */
        if (line_offset && !count_alloc_line(c, path, line_offset, size))
            return 0;
        int found;
        cell *slot = heap_claim(&c->live, address, &c->hs, &found);
        if (!slot)
            return 0;
        uint32_t owner = s ? path : 0; /* an allocation on an undefined path: the unknown one */
        if (found) {                   /* the address was still live: replace it */
            c->live_bytes += (uint64_t)size - slot->size;
            *heap_owner(&c->live, slot) = owner;
            slot->size = size;
            c->replaced++;
        } else if (c->live.count >= c->lim.max_live_allocations) {
            if (!c->untracked_allocs)
                warn(c, BSP_WARN_HEAP_FULL);
            c->untracked_allocs++;
        } else {
            heap_fill(&c->live, slot, address, owner, size);
            c->live_bytes += size;
        }
    } else {
        add(c, &k[op == 1 ? BSP_FREES : BSP_FREE_REALLOCS], 1);
        uint32_t old_size;
        if (heap_remove(&c->live, address, &old_size, &c->hs)) {
            add(c, &k[BSP_FREED_BYTES], old_size);
            c->live_bytes -= old_size;
        } else {
            add(c, &k[BSP_UNKNOWN_FREES], 1);
        }
    }
    return 1;
}

static ALWAYS_INLINE int apply_cpu(bsp_core *c, uint32_t path, uint32_t line_offset,
                                   uint32_t cpu, uint32_t wall)
{
    if (c->record && !record(c, 4, path, line_offset, cpu, wall, 0, 0, 0))
        return 0;
    uint32_t s = slot_of(c, path);
    uint64_t *k = c->slots[s].c;
    touch(c, s);
    add(c, &k[BSP_CPU], cpu);
    add(c, &k[BSP_WALL], wall);
    if (line_offset) { /* keyed by the path named, defined or not */
        uint64_t key = (uint64_t)path << 32 | line_offset;
        uint32_t *i = key == c->last_line_key ? &c->last_line
                                              : map64_get(&c->line_index, key, &c->hs);
        line_entry *e;
        if (i) {
            e = &c->lines[*i];
            add(c, &e->cpu, cpu);
            add(c, &e->wall, wall);
        } else if (c->lines_len < c->lim.max_line_keys && c->lines_len < 0xFFFFFFFFu) {
            if (!GROW(c->lines, c->lines_cap, c->lines_len + 1) ||
                !GROW(c->dirty_lines, c->dirty_lines_cap, c->lines_len + 1) ||
                !map64_put(&c->line_index, key, (uint32_t)c->lines_len, &c->hs))
                return 0;
            e = &c->lines[c->lines_len++];
            memset(e, 0, sizeof(*e));
            e->path = path;
            e->line_offset = line_offset;
            e->cpu = cpu;
            e->wall = wall;
        } else {
            if (!c->untracked_lines)
                warn(c, BSP_WARN_LINES_FULL);
            c->untracked_lines++;
            return 1;
        }
        c->last_line_key = key;
        c->last_line = (uint32_t)(e - c->lines);
        if (!e->dirty) {
            e->dirty = 1;
            c->dirty_lines[c->dirty_lines_len++] = (uint32_t)(e - c->lines);
        }
    }
    return 1;
}

static ALWAYS_INLINE int apply_calls(bsp_core *c, uint32_t path, uint32_t count)
{
    if (c->record && !record(c, 5, path, count, 0, 0, 0, 0, 0))
        return 0;
    uint32_t s = slot_of(c, path);
    touch(c, s);
    add(c, &c->slots[s].c[BSP_CALLS], count);
    return 1;
}

/* ---------------------------------------------------------------------------------------- */
/* UTF-8 with replacement, counted like CPython's decoder                                    */

size_t bsp_utf8_replace_length(const uint8_t *s, size_t n)
{
    /* Each well-formed sequence is one character; every maximal prefix of a well-formed
     * sequence that breaks off (or a byte that starts none) is one U+FFFD. */
    size_t chars = 0, i = 0;
    while (i < n) {
        uint8_t b = s[i];
        chars++;
        if (b < 0x80) {
            i++;
            continue;
        }
        int need;
        uint8_t lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
        if (b >= 0xC2 && b <= 0xDF)
            need = 1;
        else if (b >= 0xE0 && b <= 0xEF) {
            need = 2;
            if (b == 0xE0)
                lo = 0xA0;
            else if (b == 0xED)
                hi = 0x9F;
        } else if (b >= 0xF0 && b <= 0xF4) {
            need = 3;
            if (b == 0xF0)
                lo = 0x90;
            else if (b == 0xF4)
                hi = 0x8F;
        } else {
            i++; /* a byte that starts no sequence */
            continue;
        }
        i++;
        for (int k = 0; k < need; k++, lo = 0x80, hi = 0xBF) {
            if (i >= n || s[i] < lo || s[i] > hi)
                break; /* the prefix read so far is one replacement character */
            i++;
        }
    }
    return chars;
}

/* ---------------------------------------------------------------------------------------- */
/* the body loop                                                                             */

enum { P_MORE, P_END, P_REJECT, P_NOMEM };

/* A uint32 varint: 0 read, 1 cut short, 2 too long or over 32 bits. */
/* ENTRY_READ(read): a read of the entry's fields (0 done, 1 the bytes end first, 2 malformed);
 * when it fails, the entry is left at its start: cut (wait for more bytes) or bad (rejected). */
#define ENTRY_READ(read)                                                                     \
    do {                                                                                     \
        int r_ = (read);                                                                     \
        if (r_ == 1)                                                                         \
            goto cut;                                                                        \
        if (r_ == 2)                                                                         \
            goto bad;                                                                        \
    } while (0)

static inline int read_u32(const uint8_t **pp, const uint8_t *end, uint32_t *out)
{
    const uint8_t *p = *pp;
    if (p < end && *p < 0x80) {
        *out = *p;
        *pp = p + 1;
        return 0;
    }
    uint32_t r = 0;
    for (int shift = 0; shift < 28; shift += 7) {
        if (p >= end)
            return 1;
        uint32_t b = *p++;
        r |= (b & 0x7F) << shift;
        if (b < 0x80) {
            *out = r;
            *pp = p;
            return 0;
        }
    }
    if (p >= end)
        return 1;
    uint32_t b = *p++;
    if (b >= 0x10)
        return 2;
    *out = r | b << 28;
    *pp = p;
    return 0;
}

/* An entry tag (up to 10 bytes, at most 64 bits). */
static inline int read_tag(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t r = 0;
    for (int i = 0; i < 10; i++) {
        if (p >= end)
            return 1;
        uint64_t b = *p++;
        if (i == 9 && b > 1)
            return 2; /* over 64 bits: no entry type allows that payload */
        r |= (b & 0x7F) << (7 * i);
        if (b < 0x80) {
            *out = r;
            *pp = p;
            return 0;
        }
    }
    return 2;
}

/* ---------------------------------------------------------------------------------------- */
/* the queue of decoded counting entries                                                     */

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH_FOR_WRITE(addr) __builtin_prefetch((addr), 1)
#else
#define PREFETCH_FOR_WRITE(addr) ((void)(addr))
#endif

/*
 * parse() applies memory, CPU and call-count entries a few entries after decoding them. When it
 * decodes one it asks the CPU to start loading the table cells that applying it will touch (the
 * live-allocation cell above all). With many streams read in turn their tables do not fit in
 * cache, and those loads were the decoder's main cost; started QUEUE_LEN entries early, they
 * overlap. Entries are still applied one at a time in stream order, and the queue is emptied
 * before every definition and before parse() returns, so no result changes: only the cache is
 * warmer.
 */
#define QUEUE_LEN 16 /* a power of two */

typedef struct {
    uint32_t type; /* 3 memory operation, 4 CPU, 5 call count (the entry types) */
    uint32_t path, op, line_offset, a, b; /* a, b: address, size / cpu, wall / count */
    size_t at; /* the entry's offset in the buffer */
} queued;

typedef struct {
    queued q[QUEUE_LEN];
    size_t head, len;
} entry_queue;

/* Warm the cells applying a memory operation will touch: the live-allocation cell and its owner,
 * and an allocation's line index cell. (Macros, not functions: GCC drops a call to a function
 * whose only effect is a prefetch.) */
#define PREFETCH_MEMORY(c, path, op, line_offset, address)                                    \
    do {                                                                                      \
        if (address) {                                                                        \
            size_t i_ = hash32(&(c)->hs, (address), (c)->live.mask);                          \
            PREFETCH_FOR_WRITE(&(c)->live.cells[i_]);                                         \
            PREFETCH_FOR_WRITE(&(c)->live.owners[i_]);                                        \
        }                                                                                     \
        uint64_t key_ = (uint64_t)(path) << 32 | (line_offset);                               \
        if ((op) == 0 && (line_offset) && key_ != (c)->last_alloc_key)                        \
            PREFETCH_FOR_WRITE(&(c)->alloc_line_index                                          \
                                    .cells[hash64(&(c)->hs, key_, (c)->alloc_line_index.mask)]); \
    } while (0)

/* Warm the line cell applying a CPU entry will touch. */
#define PREFETCH_CPU(c, path, line_offset)                                                    \
    do {                                                                                      \
        uint64_t key_ = (uint64_t)(path) << 32 | (line_offset);                               \
        if ((line_offset) && key_ != (c)->last_line_key)                                      \
            PREFETCH_FOR_WRITE(                                                               \
                &(c)->line_index.cells[hash64(&(c)->hs, key_, (c)->line_index.mask)]);        \
    } while (0)

static inline int apply_queued(bsp_core *c, const queued *e)
{
    switch (e->type) {
    case 3:
        return apply_memory(c, e->path, e->op, e->line_offset, e->a, e->b);
    case 4:
        return apply_cpu(c, e->path, e->line_offset, e->a, e->b);
    default:
        return apply_calls(c, e->path, e->a);
    }
}

/* Apply the oldest queued entry. 0 when out of memory, with *at the offset of the entry that
 * could not be applied (it and those after it are dropped: parse() stops there). */
static ALWAYS_INLINE int queue_apply_oldest(bsp_core *c, entry_queue *q, size_t *at)
{
    const queued *e = &q->q[q->head];
    if (!apply_queued(c, e)) {
        *at = e->at;
        q->len = 0;
        return 0;
    }
    c->entries++;
    q->head = (q->head + 1) & (QUEUE_LEN - 1);
    q->len--;
    return 1;
}

/* Apply every queued entry, in order (0 when out of memory, as queue_apply_oldest). */
static int queue_drain(bsp_core *c, entry_queue *q, size_t *at)
{
    while (q->len)
        if (!queue_apply_oldest(c, q, at))
            return 0;
    return 1;
}

/* Queue an entry, applying the oldest first when the queue is full (0: out of memory, as
 * queue_apply_oldest). */
static inline int queue_push(bsp_core *c, entry_queue *q, uint32_t type, uint32_t path,
                             uint32_t op, uint32_t line_offset, uint32_t a, uint32_t b,
                             size_t at, size_t *failed_at)
{
    if (q->len == QUEUE_LEN && !queue_apply_oldest(c, q, failed_at))
        return 0; /* else the new entry takes the oldest's place */
    queued *e = &q->q[(q->head + q->len) & (QUEUE_LEN - 1)];
    e->type = type;
    e->path = path;
    e->op = op;
    e->line_offset = line_offset;
    e->a = a;
    e->b = b;
    e->at = at;
    q->len++;
    return 1;
}

/* parse() in two versions (queue_on is a constant in each): without the queue it is the plain
 * decode-and-apply loop, with nothing of the queue's cost. */
static ALWAYS_INLINE int parse_with(bsp_core *c, const uint8_t *buf, size_t n, size_t *pos,
                                    size_t hint, const int queue_on)
{
    const uint8_t *p = buf + *pos;
    const uint8_t *end = buf + n;
    const uint8_t *start = p;
    const int line = c->line;
    entry_queue queue = {.head = 0, .len = 0};
    size_t failed_at = 0; /* where applying a queued entry ran out of memory */
    c->scan = 0;
    while (p < end) {
        start = p;
        uint64_t tag;
        if (*p < 0x80) {
            tag = *p++;
        } else if (p + 1 < end && p[1] < 0x80) {
            tag = (uint64_t)(p[0] & 0x7F) | (uint64_t)p[1] << 7;
            p += 2;
        } else {
            ENTRY_READ(read_tag(&p, end, &tag));
        }
        switch (tag & 7) {
        case 3: { /* memory operation */
            uint32_t op = (uint32_t)(tag >> 3) & 3, line_offset = 0, address, size = 0;
            int r = 0;
            if (tag >> 37 || op == 3)
                goto bad;
            if ((line && (r = read_u32(&p, end, &line_offset))) ||
                (r = read_u32(&p, end, &address)) ||
                (op == 0 && (r = read_u32(&p, end, &size)))) {
                if (r == 1)
                    goto cut;
                goto bad;
            }
            uint32_t path = (uint32_t)(tag >> 5);
            if (queue_on) {
                PREFETCH_MEMORY(c, path, op, line_offset, address);
                if (!queue_push(c, &queue, 3, path, op, line_offset, address, size,
                                (size_t)(start - buf), &failed_at))
                    goto nomem_queued;
                continue;
            }
            if (!apply_memory(c, path, op, line_offset, address, size))
                goto nomem;
            break;
        }
        case 4: { /* CPU */
            uint32_t line_offset = 0, cpu, wall;
            int r = 0;
            if (tag >> 35)
                goto bad;
            if ((line && (r = read_u32(&p, end, &line_offset))) ||
                (r = read_u32(&p, end, &cpu)) || (r = read_u32(&p, end, &wall))) {
                if (r == 1)
                    goto cut;
                goto bad;
            }
            uint32_t path = (uint32_t)(tag >> 3);
            if (queue_on) {
                PREFETCH_CPU(c, path, line_offset);
                if (!queue_push(c, &queue, 4, path, 0, line_offset, cpu, wall,
                                (size_t)(start - buf), &failed_at))
                    goto nomem_queued;
                continue;
            }
            if (!apply_cpu(c, path, line_offset, cpu, wall))
                goto nomem;
            break;
        }
        case 5: { /* call count */
            uint32_t count;
            if (tag >> 35)
                goto bad;
            ENTRY_READ(read_u32(&p, end, &count));
            if (queue_on) {
                if (!queue_push(c, &queue, 5, (uint32_t)(tag >> 3), 0, 0, count, 0,
                                (size_t)(start - buf), &failed_at))
                    goto nomem_queued;
                continue;
            }
            if (!apply_calls(c, (uint32_t)(tag >> 3), count))
                goto nomem;
            break;
        }
        case 2: { /* path element */
            uint64_t id = tag >> 3;
            if (!queue_drain(c, &queue, &failed_at))
                goto nomem_queued;
            uint32_t caller, module = 0, line_offset = 0, file_id, line_no, function;
            int r = 0;
            if (id == 0 || id > 0xFFFFFFFFu)
                goto bad;
            if ((r = read_u32(&p, end, &caller)) ||
                (caller == 0 && (r = read_u32(&p, end, &module))) ||
                (caller != 0 && line && (r = read_u32(&p, end, &line_offset))) ||
                (r = read_u32(&p, end, &file_id)) || (r = read_u32(&p, end, &line_no)) ||
                (r = read_u32(&p, end, &function))) {
                if (r == 1)
                    goto cut;
                goto bad;
            }
            if (!definition_fits(c, 2, 0))
                goto bad;
            c->defs[2]++;
            if (!define_path(c, (uint32_t)id, caller, module, line_offset, file_id, line_no,
                             function))
                goto nomem;
            break;
        }
        case 0: { /* string, or the end marker */
            if (!queue_drain(c, &queue, &failed_at))
                goto nomem_queued;
            if (tag == 0) {
                *pos = (size_t)(p - buf);
                return P_END;
            }
            if (tag >> 35)
                goto bad;
            size_t avail = (size_t)(end - p);
            size_t window = c->lim.max_string_bytes < avail ? (size_t)c->lim.max_string_bytes + 1
                                                            : avail;
            size_t from = 0;
            if (start == buf + *pos && hint > (size_t)(p - start))
                from = hint - (size_t)(p - start); /* already searched */
            if (from > window)
                from = window;
            const uint8_t *nul = memchr(p + from, 0, window - from);
            if (!nul) {
                if (avail > c->lim.max_string_bytes)
                    goto bad;
                c->scan = (size_t)(end - start);
                goto cut;
            }
            size_t len = (size_t)(nul - p);
            uint64_t chars = bsp_utf8_replace_length(p, len);
            if (!definition_fits(c, 0, chars))
                goto bad;
            c->defs[0]++;
            c->string_chars += chars;
            if (!define_string(c, (uint32_t)(tag >> 3), p, len))
                goto nomem;
            p = nul + 1;
            break;
        }
        case 1: { /* executable module */
            uint64_t id = tag >> 3;
            if (!queue_drain(c, &queue, &failed_at))
                goto nomem_queued;
            uint32_t name_id;
            if (id == 0 || id > 0xFFFFFFFFu)
                goto bad;
            ENTRY_READ(read_u32(&p, end, &name_id));
            if (!definition_fits(c, 1, 0))
                goto bad;
            c->defs[1]++;
            if (!define_module(c, (uint32_t)id, name_id))
                goto nomem;
            break;
        }
        default: /* types 6 and 7 */
            goto bad;
        }
        c->entries++;
    }
    if (!queue_drain(c, &queue, &failed_at))
        goto nomem_queued;
    *pos = (size_t)(p - buf);
    return P_MORE;
cut:
    if (!queue_drain(c, &queue, &failed_at))
        goto nomem_queued;
    *pos = (size_t)(start - buf);
    return P_MORE;
bad:
    if (!queue_drain(c, &queue, &failed_at))
        goto nomem_queued;
    *pos = (size_t)(start - buf);
    return P_REJECT;
nomem:
    *pos = (size_t)(start - buf);
    return P_NOMEM;
nomem_queued:
    *pos = failed_at;
    return P_NOMEM;
}

/*
 * Decode whole entries from buf[*pos:n] and apply them. On return *pos is where decoding
 * stopped: after the end marker (P_END), at the start of a bad entry (P_REJECT) or of a
 * partial one (P_MORE, *pos < n), or of the entry that could not be applied (P_NOMEM). hint:
 * bytes of the entry at *pos already searched for a string's NUL (a carried string).
 */
static int parse(bsp_core *c, const uint8_t *buf, size_t n, size_t *pos, size_t hint)
{
    if (c->live.mask + 1 >= c->queue_from)
        return parse_with(c, buf, n, pos, hint, 1);
    return parse_with(c, buf, n, pos, hint, 0);
}

static int to_result(int status)
{
    switch (status) {
    case P_END:
        return BSP_END;
    case P_REJECT:
        return BSP_REJECT;
    case P_NOMEM:
        return BSP_NOMEM;
    default:
        return BSP_MORE;
    }
}

int bsp_feed(bsp_core *c, const uint8_t *data, size_t len, size_t *used)
{
    size_t i = 0;
    /* First complete the carried partial entry, appending as few bytes as practical
     * (at least 64, then doubling, so a long string costs linear time). */
    while (c->carry_len) {
        if (i == len) {
            *used = len;
            return BSP_MORE;
        }
        size_t old = c->carry_len;
        size_t take = old > 64 ? old : 64;
        if (take > len - i)
            take = len - i;
        if (!GROW(c->carry, c->carry_cap, old + take))
            return BSP_NOMEM;
        memcpy(c->carry + old, data + i, take);
        c->carry_len = old + take;
        i += take;
        size_t pos = 0;
        int status = parse(c, c->carry, c->carry_len, &pos, c->scan);
        c->offset += pos;
        if (status == P_MORE && pos == 0) {
            continue; /* still partial: every carried byte belongs to it */
        }
        if (status == P_REJECT || status == P_NOMEM) {
            /* keep the rejected entry's bytes; the rest follows at data[i] */
            memmove(c->carry, c->carry + pos, c->carry_len - pos);
            c->carry_len -= pos;
            *used = i;
            return to_result(status);
        }
        /* The carried entry is complete; what follows it came from data: read it there. */
        i -= c->carry_len - pos;
        c->carry_len = 0;
        c->scan = 0;
        if (status == P_END) {
            *used = i;
            return BSP_END;
        }
    }
    size_t pos = i;
    int status = parse(c, data, len, &pos, 0);
    c->offset += pos - i;
    *used = pos;
    if (status == P_MORE && pos < len) {
        size_t rest = len - pos;
        if (!GROW(c->carry, c->carry_cap, rest))
            return BSP_NOMEM;
        memcpy(c->carry, data + pos, rest);
        c->carry_len = rest;
        *used = len;
    }
    return to_result(status);
}

/* ---------------------------------------------------------------------------------------- */
/* reading the tables                                                                        */

void bsp_set_queue_from(bsp_core *c, size_t cells) { c->queue_from = cells; }

uint64_t bsp_offset(const bsp_core *c) { return c->offset; }
uint64_t bsp_entry_count(const bsp_core *c) { return c->entries; }

const uint8_t *bsp_pending(const bsp_core *c, size_t *len)
{
    *len = c->carry_len;
    return c->carry;
}

void bsp_get_definition_counts(const bsp_core *c, bsp_definition_counts *out)
{
    out->string_definitions = c->defs[0];
    out->module_definitions = c->defs[1];
    out->path_definitions = c->defs[2];
    out->string_chars = c->string_chars;
}

void bsp_get_state(const bsp_core *c, bsp_state *out)
{
    out->dangling = c->dangling;
    out->replaced_allocations = c->replaced;
    out->untracked_allocations = c->untracked_allocs;
    out->untracked_line_cpu = c->untracked_lines;
    out->untracked_line_allocs = c->untracked_line_allocs;
    out->saturated = c->saturated;
    out->deep_paths = c->deep_paths;
    out->live_bytes = c->live_bytes;
    out->live_count = c->live.count;
    for (int i = 0; i < BSP_NWARNINGS; i++)
        out->warnings[i] = c->warnings[i];
}

size_t bsp_string_count(const bsp_core *c) { return c->strings_len; }

void bsp_string_at(const bsp_core *c, size_t i, uint32_t *id, const uint8_t **text, size_t *len)
{
    *id = c->strings[i].id;
    *text = c->arena + c->strings[i].offset;
    *len = c->strings[i].len;
}

int bsp_string(const bsp_core *c, uint32_t id, const uint8_t **text, size_t *len)
{
    uint32_t *i = id ? map32_get(&c->string_index, id, &c->hs) : NULL;
    if (!i)
        return 0;
    *text = c->arena + c->strings[*i].offset;
    *len = c->strings[*i].len;
    return 1;
}

size_t bsp_module_count(const bsp_core *c) { return c->modules_len; }

void bsp_module_at(const bsp_core *c, size_t i, uint32_t *id, uint32_t *name_id)
{
    *id = c->modules[i].id;
    *name_id = c->modules[i].name_id;
}

int bsp_module(const bsp_core *c, uint32_t id, uint32_t *name_id)
{
    uint32_t *i = id ? map32_get(&c->module_index, id, &c->hs) : NULL;
    if (!i)
        return 0;
    *name_id = c->modules[*i].name_id;
    return 1;
}

size_t bsp_path_count(const bsp_core *c) { return c->slots_len - 1; }

size_t bsp_stack_limit(const bsp_core *c) { return (size_t)c->lim.max_stack_depth; }

const bsp_path *bsp_path_at(const bsp_core *c, size_t i) { return &c->slots[i + 1].node; }

const bsp_path *bsp_find_path(const bsp_core *c, uint32_t id)
{
    uint32_t *s = id ? map32_get(&c->path_index, id, &c->hs) : NULL;
    return s ? &c->slots[*s].node : NULL;
}

const uint64_t *bsp_counters(const bsp_core *c, uint32_t id)
{
    if (id == 0)
        return c->slots[0].c;
    uint32_t *s = map32_get(&c->path_index, id, &c->hs);
    return s ? c->slots[*s].c : NULL;
}

const uint64_t *bsp_counters_at(const bsp_core *c, size_t i, uint32_t *id)
{
    *id = c->slots[i].node.id;
    return c->slots[i].c;
}

size_t bsp_stack(bsp_core *c, uint32_t id, size_t max_nodes, const bsp_path **out)
{
    if (c->marks_cap < c->slots_len) { /* new marks, all unset */
        free(c->marks);
        c->marks = calloc(c->slots_cap, sizeof(uint32_t));
        c->marks_cap = c->marks ? c->slots_cap : 0;
        c->mark = 0;
        if (!c->marks)
            return (size_t)-1;
    }
    if (++c->mark == 0) { /* the stamps wrapped: unset them all */
        memset(c->marks, 0, c->marks_cap * sizeof(uint32_t));
        c->mark = 1;
    }
    size_t n = 0;
    while (id && n < max_nodes) {
        uint32_t *s = map32_get(&c->path_index, id, &c->hs);
        if (!s || c->marks[*s] == c->mark)
            break; /* an undefined caller, or a path already on this stack */
        c->marks[*s] = c->mark;
        out[n++] = &c->slots[*s].node;
        id = c->slots[*s].node.caller;
    }
    return n;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int bsp_take_delta(bsp_core *c, int lines, const bsp_path_counts **paths, size_t *npaths,
                   const bsp_line_counts **line_records, size_t *nlines)
{
    qsort(c->dirty_slots, c->dirty_slots_len, sizeof(uint32_t), cmp_u32);
    if (!GROW(c->delta_paths, c->delta_paths_cap, c->dirty_slots_len))
        return 0;
    size_t n = 0;
    for (size_t k = 0; k < c->dirty_slots_len; k++) {
        slot *s = &c->slots[c->dirty_slots[k]];
        s->dirty = 0;
        if (memcmp(s->c, s->base, sizeof(s->c)) == 0)
            continue;
        bsp_path_counts *out = &c->delta_paths[n++];
        out->id = s->node.id;
        for (int j = 0; j < BSP_NCOUNTERS; j++)
            out->c[j] = s->c[j] - s->base[j];
        memcpy(s->base, s->c, sizeof(s->c));
    }
    c->dirty_slots_len = 0;
    *paths = c->delta_paths;
    *npaths = n;
    *line_records = c->delta_lines;
    *nlines = 0;
    if (!lines)
        return 1;
    if (c->dirty_lines_len)
        qsort(c->dirty_lines, c->dirty_lines_len, sizeof(uint32_t), cmp_u32);
    if (!GROW(c->delta_lines, c->delta_lines_cap, c->dirty_lines_len))
        return 0;
    n = 0;
    for (size_t k = 0; k < c->dirty_lines_len; k++) {
        line_entry *e = &c->lines[c->dirty_lines[k]];
        e->dirty = 0;
        if (e->cpu == e->base_cpu && e->wall == e->base_wall)
            continue;
        bsp_line_counts *out = &c->delta_lines[n++];
        out->path = e->path;
        out->line_offset = e->line_offset;
        out->cpu = e->cpu - e->base_cpu;
        out->wall = e->wall - e->base_wall;
        e->base_cpu = e->cpu;
        e->base_wall = e->wall;
    }
    c->dirty_lines_len = 0;
    *line_records = c->delta_lines;
    *nlines = n;
    return 1;
}

size_t bsp_line_count(const bsp_core *c) { return c->lines_len; }

void bsp_line_at(const bsp_core *c, size_t i, bsp_line_counts *out)
{
    out->path = c->lines[i].path;
    out->line_offset = c->lines[i].line_offset;
    out->cpu = c->lines[i].cpu;
    out->wall = c->lines[i].wall;
}

size_t bsp_alloc_line_count(const bsp_core *c) { return c->alloc_lines_len; }

const bsp_alloc_line *bsp_alloc_line_at(const bsp_core *c, size_t i)
{
    return &c->alloc_lines[i];
}

void bsp_get_totals(const bsp_core *c, bsp_totals *out)
{
    memset(out, 0, sizeof(*out));
    out->strings = c->strings_len;
    out->modules = c->modules_len;
    out->paths = c->slots_len - 1;
    for (size_t i = 0; i < c->slots_len; i++)
        for (int j = 0; j < BSP_NCOUNTERS; j++)
            out->c[j] += c->slots[i].c[j];
    out->live_bytes = c->live_bytes;
    out->live_count = c->live.count;
}

static int cmp_site_path(const void *a, const void *b)
{
    uint32_t x = ((const bsp_site *)a)->path, y = ((const bsp_site *)b)->path;
    return (x > y) - (x < y);
}

static int cmp_site_rank(const void *a, const void *b)
{
    const bsp_site *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (x->path > y->path) - (x->path < y->path);
}

int bsp_leak_sites(bsp_core *c, const bsp_site **sites, size_t *n)
{
    if (!GROW(c->sites, c->sites_cap, c->live.count + 1))
        return 0;
    size_t k = 0, iter = 0;
    uint32_t address, path, size;
    while (bsp_heap_next(c, &iter, &address, &path, &size)) {
        c->sites[k].path = path;
        c->sites[k].count = 1;
        c->sites[k].bytes = size;
        k++;
    }
    qsort(c->sites, k, sizeof(bsp_site), cmp_site_path); /* c->sites is never NULL here */
    size_t m = 0;
    for (size_t j = 0; j < k; j++) {
        if (m && c->sites[m - 1].path == c->sites[j].path) {
            c->sites[m - 1].count++;
            c->sites[m - 1].bytes += c->sites[j].bytes;
        } else {
            c->sites[m++] = c->sites[j];
        }
    }
    qsort(c->sites, m, sizeof(bsp_site), cmp_site_rank);
    *sites = c->sites;
    *n = m;
    return 1;
}

int bsp_heap_next(const bsp_core *c, size_t *iter, uint32_t *address, uint32_t *path,
                  uint32_t *size)
{
    /* *iter: 0 = the address-0 cell, then 1 + cell index */
    if (*iter == 0) {
        *iter = 1;
        if (c->live.has_zero) {
            *address = 0;
            *path = c->live.zero_owner;
            *size = c->live.zero.size;
            return 1;
        }
    }
    while (*iter - 1 <= c->live.mask) {
        const cell *e = &c->live.cells[*iter - 1];
        (*iter)++;
        if (e->address) {
            *address = e->address;
            *path = c->live.owners[*iter - 2];
            *size = e->size;
            return 1;
        }
    }
    return 0;
}

static const uint32_t *hand_out(bsp_core *c, uint32_t **vec, size_t *vec_len, size_t *vec_cap)
{
    /* swap the filled vector out so the caller reads it while the core starts a new one */
    uint32_t *filled = *vec;
    size_t filled_cap = *vec_cap;
    *vec = c->out_words;
    *vec_cap = c->out_words_cap;
    *vec_len = 0;
    c->out_words = filled;
    c->out_words_cap = filled_cap;
    return filled;
}

const uint32_t *bsp_take_definitions(bsp_core *c, size_t *npairs)
{
    *npairs = c->defs_log_len / 2;
    return hand_out(c, &c->defs_log, &c->defs_log_len, &c->defs_log_cap);
}

const uint32_t *bsp_take_records(bsp_core *c, size_t *nentries)
{
    *nentries = c->records_len / BSP_RECORD_WORDS;
    return hand_out(c, &c->records, &c->records_len, &c->records_cap);
}

const uint8_t *bsp_arena(const bsp_core *c, size_t *len)
{
    *len = c->arena_len;
    return c->arena;
}
