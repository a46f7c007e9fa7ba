/*
 * A plain .bsprof body decoder: the baseline benchmarks/decode.py measures the native core
 * against. It reads a file's body (from a given offset), decodes every entry and keeps the
 * totals rokuprof's tables report: distinct strings, modules and paths, the nine counters
 * summed over every path, and (with `live`) the live heap. No limits, no error detail, no
 * line tables: the least a decoder keeping the same totals must do.
 *
 *     cc -O2 -o plain_decoder plain_decoder.c
 *     plain_decoder FILE BODY_OFFSET LINE_DATA LIVE REPEAT
 *
 * Prints one line: best seconds of REPEAT decodes, then the totals.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    uint32_t *keys, *values;
    size_t mask, count;
} map;

static void map_init(map *m, size_t cap)
{
    m->keys = calloc(cap, 4);
    m->values = calloc(cap, 4);
    m->mask = cap - 1;
    m->count = 0;
}

static inline size_t hash(uint32_t k, size_t mask)
{
    return (size_t)(((uint64_t)k * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
}

static void map_put(map *m, uint32_t k, uint32_t v);

static void map_grow(map *m)
{
    map old = *m;
    map_init(m, (old.mask + 1) * 2);
    for (size_t i = 0; i <= old.mask; i++)
        if (old.keys[i])
            map_put(m, old.keys[i], old.values[i]);
    free(old.keys);
    free(old.values);
}

/* key != 0 */
static uint32_t *map_find(map *m, uint32_t k, int add)
{
    if (add && (m->count + 1) * 4 > (m->mask + 1) * 3)
        map_grow(m);
    size_t i = hash(k, m->mask);
    while (m->keys[i] && m->keys[i] != k)
        i = (i + 1) & m->mask;
    if (m->keys[i] == k)
        return &m->values[i];
    if (!add)
        return NULL;
    m->keys[i] = k;
    m->count++;
    return &m->values[i];
}

static void map_put(map *m, uint32_t k, uint32_t v) { *map_find(m, k, 1) = v; }

/* the live heap: address -> size (one 8-byte cell each, at most half full); address 0 beside
 * it */
typedef struct {
    uint32_t address, size;
} cell;

typedef struct {
    cell *cells;
    size_t mask, count;
} heap;

static void heap_init(heap *h, size_t cap)
{
    h->cells = calloc(cap, sizeof(cell));
    h->mask = cap - 1;
    h->count = 0;
}

static void heap_add(heap *h, uint32_t a, uint32_t size, uint64_t *live_bytes);

static void heap_grow(heap *h)
{
    heap old = *h;
    heap_init(h, (old.mask + 1) * 2);
    uint64_t ignored = 0;
    for (size_t i = 0; i <= old.mask; i++)
        if (old.cells[i].address)
            heap_add(h, old.cells[i].address, old.cells[i].size, &ignored);
    free(old.cells);
}

static void heap_add(heap *h, uint32_t a, uint32_t size, uint64_t *live_bytes)
{
    if ((h->count + 1) * 2 > (h->mask + 1))
        heap_grow(h);
    size_t i = hash(a, h->mask);
    while (h->cells[i].address && h->cells[i].address != a)
        i = (i + 1) & h->mask;
    if (h->cells[i].address == a) {
        *live_bytes += (uint64_t)size - h->cells[i].size;
    } else {
        h->cells[i].address = a;
        h->count++;
        *live_bytes += size;
    }
    h->cells[i].size = size;
}

/* 1 and *size when the address was live */
static int heap_remove(heap *h, uint32_t a, uint32_t *size)
{
    size_t i = hash(a, h->mask);
    while (h->cells[i].address != a) {
        if (!h->cells[i].address)
            return 0;
        i = (i + 1) & h->mask;
    }
    *size = h->cells[i].size;
    h->count--;
    size_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & h->mask;
        if (!h->cells[j].address)
            break;
        size_t home = hash(h->cells[j].address, h->mask);
        int inside = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!inside) {
            h->cells[hole] = h->cells[j];
            hole = j;
        }
    }
    h->cells[hole].address = 0;
    return 1;
}

static inline uint64_t varint(const uint8_t **pp)
{
    const uint8_t *p = *pp;
    uint64_t r = 0;
    int shift = 0;
    for (;;) {
        uint8_t b = *p++;
        r |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80)
            break;
        shift += 7;
    }
    *pp = p;
    return r;
}

enum { CPU, WALL, CALLS, ALLOCS, ALLOC_BYTES, FREES, FREE_REALLOCS, FREED_BYTES, UNKNOWN_FREES,
       N };

typedef struct {
    uint64_t strings, modules, paths, c[N], live_bytes, live_count;
} totals;

static void decode(const uint8_t *p, const uint8_t *end, int line, int live, totals *t)
{
    map strings, modules, paths;
    map_init(&strings, 64);
    map_init(&modules, 16);
    map_init(&paths, 256);
    size_t cap = 256, n = 1;
    uint64_t (*counters)[N] = calloc(cap, sizeof(*counters));
    heap h;
    heap_init(&h, 1024);
    int zero_live = 0;
    uint32_t zero_size = 0;
    uint64_t live_bytes = 0;
    while (p < end) {
        uint64_t tag = varint(&p);
        uint32_t type = tag & 7, id;
        if (tag == 0)
            break;
        if (type == 0) {
            const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
            p = nul + 1;
            map_find(&strings, (uint32_t)(tag >> 3), 1);
        } else if (type == 1) {
            varint(&p);
            map_find(&modules, (uint32_t)(tag >> 3), 1);
        } else if (type == 2) {
            uint32_t caller = (uint32_t)varint(&p);
            if (!caller || line)
                varint(&p); /* a root's module, or a call's line offset */
            varint(&p);     /* file */
            varint(&p);     /* line */
            varint(&p);     /* function */
            uint32_t *s = map_find(&paths, (uint32_t)(tag >> 3), 1);
            if (!*s) {
                if (n == cap) {
                    counters = realloc(counters, 2 * cap * sizeof(*counters));
                    memset(counters + cap, 0, cap * sizeof(*counters));
                    cap *= 2;
                }
                *s = (uint32_t)n++;
            }
        } else {
            id = (uint32_t)(tag >> 3);
            uint32_t op = 0;
            if (type == 3) {
                op = id & 3;
                id = (uint32_t)(tag >> 5);
            }
            uint32_t *s = id ? map_find(&paths, id, 0) : NULL;
            uint64_t *k = counters[s ? *s : 0];
            if (type == 3) {
                if (line)
                    varint(&p);
                uint32_t address = (uint32_t)varint(&p);
                if (op == 0) {
                    uint32_t size = (uint32_t)varint(&p);
                    k[ALLOCS]++;
                    k[ALLOC_BYTES] += size;
                    if (!live) {
                    } else if (address) {
                        heap_add(&h, address, size, &live_bytes);
                    } else {
                        live_bytes += zero_live ? (uint64_t)size - zero_size : size;
                        zero_live = 1;
                        zero_size = size;
                    }
                } else {
                    k[op == 1 ? FREES : FREE_REALLOCS]++;
                    uint32_t size;
                    if (!live) {
                    } else if (address ? heap_remove(&h, address, &size)
                                       : (zero_live && (size = zero_size, 1))) {
                        if (!address)
                            zero_live = 0;
                        k[FREED_BYTES] += size;
                        live_bytes -= size;
                    } else {
                        k[UNKNOWN_FREES]++;
                    }
                }
            } else if (type == 4) {
                if (line)
                    varint(&p);
                k[CPU] += varint(&p);
                k[WALL] += varint(&p);
            } else {
                k[CALLS] += varint(&p);
            }
        }
    }
    memset(t, 0, sizeof(*t));
    t->strings = strings.count;
    t->modules = modules.count;
    t->paths = paths.count;
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < N; j++)
            t->c[j] += counters[i][j];
    t->live_bytes = live_bytes;
    t->live_count = h.count + zero_live;
    free(strings.keys), free(strings.values), free(modules.keys), free(modules.values);
    free(paths.keys), free(paths.values), free(counters), free(h.cells);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: plain_decoder FILE BODY_OFFSET LINE_DATA LIVE REPEAT\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc((size_t)size + 16);
    if (fread(data, 1, (size_t)size, f) != (size_t)size)
        return 1;
    fclose(f);
    memset(data + size, 0, 16);
    long offset = atol(argv[2]);
    int line = atoi(argv[3]), live = atoi(argv[4]), repeat = atoi(argv[5]);
    double best = 1e30;
    totals t;
    for (int r = 0; r < repeat; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        decode(data + offset, data + size, line, live, &t);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        if (s < best)
            best = s;
    }
    printf("%.6f %llu %llu %llu", best, (unsigned long long)t.strings,
           (unsigned long long)t.modules, (unsigned long long)t.paths);
    for (int j = 0; j < N; j++)
        printf(" %llu", (unsigned long long)t.c[j]);
    printf(" %llu %llu\n", (unsigned long long)t.live_bytes, (unsigned long long)t.live_count);
    return 0;
}
