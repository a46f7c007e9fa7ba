/*
 * libFuzzer harness for the native core alone (plain C, no Python): see fuzz/README.md.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -I rokuprof/_native \
 *       fuzz/fuzz_native.c rokuprof/_native/bsprof_core.c -o fuzz_native
 *   ./fuzz_native -max_total_time=300 fuzz/native-corpus
 *
 * Input: byte 0 = bit 0 line flag, bit 1 small limits, bits 5..2 number of cuts; one byte per
 * cut (a position scaled over the body); the rest is a stream body (the bytes after a header).
 * The body is fed whole, in the input-derived pieces and one byte at a time; the three runs must
 * end alike (status, where, entries recorded, tables, allocations per line), and what the core
 * says about a rejected entry must match the stream. AddressSanitizer and UBSan report memory and arithmetic faults.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsprof_core.h"

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "check failed: %s (line %d)\n", #cond, __LINE__); \
            abort();                                                         \
        }                                                                    \
    } while (0)

typedef struct {
    int status;
    uint64_t end;     /* body offset after the end marker, or of the rejected entry */
    uint64_t entries; /* bsp_entry_count */
    uint32_t *records;
    size_t nrecords;
    bsp_totals totals;
    bsp_state state;
    bsp_definition_counts defs;
    size_t sites;
    uint64_t site_bytes;
    size_t alloc_lines;                      /* bsp_alloc_line_count */
    uint64_t alloc_line_count, alloc_line_bytes; /* summed over them */
} outcome;

static void run(const uint8_t *body, size_t len, const size_t *cuts, size_t ncuts, int line,
                const bsp_limits *lim, outcome *out)
{
    bsp_core *c = bsp_new(lim, line, 1, 42);
    CHECK(c);
    memset(out, 0, sizeof(*out));
    size_t start = 0;
    int status = BSP_MORE;
    for (size_t k = 0; k <= ncuts && status == BSP_MORE; k++) {
        size_t stop = k < ncuts ? cuts[k] : len;
        if (stop < start)
            stop = start;
        size_t used = 0;
        status = bsp_feed(c, body + start, stop - start, &used);
        CHECK(status != BSP_NOMEM);
        CHECK(used <= stop - start);
        size_t pending;
        const uint8_t *kept = bsp_pending(c, &pending);
        if (status == BSP_MORE) {
            CHECK(used == stop - start);
            CHECK(bsp_offset(c) + pending == stop); /* the kept bytes are the stream's tail */
            CHECK(pending == 0 || memcmp(kept, body + bsp_offset(c), pending) == 0);
            /* at most one partial entry: a string's tag and text, or up to 35 bytes */
            CHECK(pending <= (lim->max_string_bytes > 30 ? lim->max_string_bytes : 30) + 10);
        } else if (status == BSP_END) {
            out->end = start + used;
            CHECK(bsp_offset(c) == out->end);
        } else {
            /* the rejected entry: its kept bytes, then data[used:] */
            out->end = bsp_offset(c);
            CHECK(out->end + pending == start + used);
            CHECK(pending == 0 || memcmp(kept, body + out->end, pending) == 0);
        }
        /* read the tables mid-stream too */
        const bsp_path_counts *paths;
        const bsp_line_counts *lines;
        size_t np, nl;
        CHECK(bsp_take_delta(c, (int)(k & 1), &paths, &np, &lines, &nl));
        start = stop;
    }
    out->status = status;
    out->entries = bsp_entry_count(c);
    size_t n;
    const uint32_t *records = bsp_take_records(c, &n);
    CHECK(n == out->entries);
    out->records = malloc(n * BSP_RECORD_WORDS * sizeof(uint32_t) + 1);
    CHECK(out->records);
    if (n)
        memcpy(out->records, records, n * BSP_RECORD_WORDS * sizeof(uint32_t));
    out->nrecords = n;
    bsp_get_totals(c, &out->totals);
    bsp_get_state(c, &out->state);
    bsp_get_definition_counts(c, &out->defs);
    const bsp_site *sites;
    CHECK(bsp_leak_sites(c, &sites, &out->sites));
    for (size_t i = 0; i < out->sites; i++)
        out->site_bytes += sites[i].bytes;
    CHECK(out->site_bytes == out->totals.live_bytes);
    size_t iter = 0, live = 0;
    uint32_t address, path, size;
    while (bsp_heap_next(c, &iter, &address, &path, &size))
        live++;
    CHECK(live == out->totals.live_count);
    /* allocations per line: every allocation at a line is in a kept pair or untracked, and
     * no pair is kept twice (checked among the first 64) */
    uint64_t at_lines = 0, at_line_bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *r = out->records + i * BSP_RECORD_WORDS;
        if (r[0] == 3 && r[2] == 0 && r[3] != 0) {
            at_lines++;
            at_line_bytes += r[5];
        }
    }
    out->alloc_lines = bsp_alloc_line_count(c);
    CHECK(out->alloc_lines <= lim->max_line_keys);
    for (size_t i = 0; i < out->alloc_lines; i++) {
        const bsp_alloc_line *l = bsp_alloc_line_at(c, i);
        CHECK(l->line_offset != 0 && l->count != 0);
        for (size_t j = 0; j < i && i < 64; j++)
            CHECK(bsp_alloc_line_at(c, j)->path != l->path ||
                  bsp_alloc_line_at(c, j)->line_offset != l->line_offset);
        out->alloc_line_count += l->count;
        out->alloc_line_bytes += l->bytes;
    }
    CHECK(out->alloc_line_count + out->state.untracked_line_allocs == at_lines);
    CHECK(out->state.untracked_line_allocs || out->alloc_line_bytes == at_line_bytes);
    for (size_t i = 0; i < bsp_path_count(c); i++) /* every defined path is found by its ID */
        CHECK(bsp_find_path(c, bsp_path_at(c, i)->id) == bsp_path_at(c, i));
    bsp_free(c);
}

static void same(const outcome *a, const outcome *b)
{
    CHECK(a->status == b->status);
    CHECK(a->status == BSP_MORE || a->end == b->end);
    CHECK(a->entries == b->entries);
    CHECK(a->nrecords == b->nrecords);
    CHECK(!a->nrecords ||
          memcmp(a->records, b->records, a->nrecords * BSP_RECORD_WORDS * 4) == 0);
    CHECK(memcmp(&a->totals, &b->totals, sizeof(a->totals)) == 0);
    CHECK(memcmp(&a->state, &b->state, sizeof(a->state)) == 0);
    CHECK(memcmp(&a->defs, &b->defs, sizeof(a->defs)) == 0);
    CHECK(a->sites == b->sites && a->site_bytes == b->site_bytes);
    CHECK(a->alloc_lines == b->alloc_lines && a->alloc_line_count == b->alloc_line_count &&
          a->alloc_line_bytes == b->alloc_line_bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int line = data[0] & 1;
    bsp_limits lim = {65536, 1000000, 64u << 20, 100000, 1000000, 5000000, 2000000, 128};
    if (data[0] & 2) {
        bsp_limits small = {40, 20, 200, 4, 30, 8, 8, 4};
        lim = small;
    }
    size_t ncuts = (data[0] >> 2) & 0x0F;
    if (size < 1 + ncuts)
        return 0;
    const uint8_t *body = data + 1 + ncuts;
    size_t len = size - 1 - ncuts;
    size_t cuts[16];
    for (size_t k = 0; k < ncuts; k++)
        cuts[k] = (size_t)data[1 + k] * (len + 1) / 256;
    for (size_t i = 1; i < ncuts; i++) /* sort the few cuts */
        for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
            size_t t = cuts[j];
            cuts[j] = cuts[j - 1];
            cuts[j - 1] = t;
        }
    outcome whole, split, bytewise;
    run(body, len, NULL, 0, line, &lim, &whole);
    run(body, len, cuts, ncuts, line, &lim, &split);
    same(&whole, &split);
    if (len <= 4096) {
        size_t *every = malloc((len + 1) * sizeof(size_t));
        CHECK(every);
        for (size_t i = 0; i < len; i++)
            every[i] = i + 1;
        run(body, len, every, len, line, &lim, &bytewise);
        same(&whole, &bytewise);
        free(bytewise.records);
        free(every);
    }
    free(whole.records);
    free(split.records);
    return 0;
}
