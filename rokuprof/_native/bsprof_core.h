/*
 * bsprof_core: the .bsprof body loop and the profile tables, in plain C (no Python API).
 *
 * One bsp_core reads the body of one stream (the bytes after the header, which the caller
 * parses) and accumulates what rokuprof.profile.tables.ProfileTables accumulates: the string,
 * module and path tables, nine counters per call path, line-level CPU, allocations per source
 * line, and the live heap.
 * Feed it bytes split anywhere; it keeps at most one partial entry between feeds.
 *
 * The core only *detects* bad entries: it stops at the first entry the format or the limits
 * reject and says where it starts; the caller asks the construct grammar to describe it, so
 * both decoders report the same error. Every ID is a full uint32 (1 .. 2^32-1).
 */
#ifndef BSPROF_CORE_H
#define BSPROF_CORE_H

#include <stddef.h>
#include <stdint.h>

/* Bounds, as in rokuprof.bsprof.model.Limits (they bound counts, never the size of an ID). */
typedef struct {
    uint64_t max_string_bytes;
    uint64_t max_strings;
    uint64_t max_string_table_chars;
    uint64_t max_modules;
    uint64_t max_paths;
    uint64_t max_live_allocations;
    uint64_t max_line_keys;
    uint64_t max_stack_depth; /* frames a stack shows; deeper paths are only counted here */
} bsp_limits;

/* Results of bsp_feed. */
enum {
    BSP_MORE = 0,   /* every byte used (a partial entry may be kept for the next feed) */
    BSP_END = 1,    /* the end-of-entries marker was read; *used says where it ends */
    BSP_REJECT = 2, /* the entry at bsp_offset() is bad: see bsp_pending() */
    BSP_NOMEM = 3   /* out of memory: the core is unusable */
};

/* Counter slots per call path (same order as ProfileTables / PathStats). */
enum {
    BSP_CPU, BSP_WALL, BSP_CALLS, BSP_ALLOCS, BSP_ALLOC_BYTES, BSP_FREES, BSP_FREE_REALLOCS,
    BSP_FREED_BYTES, BSP_UNKNOWN_FREES, BSP_NCOUNTERS
};

/* Table warnings, reported once each, in the order they happened. */
enum {
    BSP_WARN_HEAP_FULL = 1,
    BSP_WARN_LINES_FULL = 2,
    BSP_WARN_SATURATED = 3,
    BSP_WARN_ALLOC_LINES_FULL = 4,
    BSP_WARN_DEEP_PATHS = 5,
    BSP_NWARNINGS = 5
};

/* Flag on a definition-log type: the ID was already defined (a redefinition). */
#define BSP_REDEFINED 0x100

/* Words per recorded entry (record mode, for tests): type then up to seven fields, laid out
 * like the entry tuples of rokuprof.bsprof.model; a string is (0, id, arena offset, length). */
#define BSP_RECORD_WORDS 8

typedef struct {
    uint32_t id;
    uint32_t caller;
    uint32_t module;
    uint32_t file_id;
    uint32_t line;
    uint32_t function_id;
    uint32_t caller_line_offset;
    uint32_t depth;
} bsp_path;

/* One call path's counters in a delta or a snapshot. */
typedef struct {
    uint32_t id;
    uint64_t c[BSP_NCOUNTERS];
} bsp_path_counts;

typedef struct {
    uint32_t path;
    uint32_t line_offset;
    uint64_t cpu;
    uint64_t wall;
} bsp_line_counts;

/* Allocations made at one source line: keyed by the path the entries named (defined or not)
 * and the line offset (never 0). */
typedef struct {
    uint32_t path;
    uint32_t line_offset;
    uint64_t count;
    uint64_t bytes;
} bsp_alloc_line;

typedef struct {
    uint32_t path; /* 0: allocations on undefined paths */
    uint64_t count;
    uint64_t bytes;
} bsp_site;

typedef struct {
    uint64_t strings, modules, paths;   /* distinct IDs defined */
    uint64_t c[BSP_NCOUNTERS];          /* summed over every path, the unknown one included */
    uint64_t live_bytes, live_count;
} bsp_totals;

typedef struct {
    uint64_t string_definitions, module_definitions, path_definitions, string_chars;
} bsp_definition_counts;

typedef struct {
    uint64_t dangling;              /* entries naming a path that was never defined */
    uint64_t replaced_allocations;  /* alloc at an address still live */
    uint64_t untracked_allocations; /* allocations past the live-heap limit */
    uint64_t untracked_line_cpu;    /* CPU entries whose line was not kept */
    uint64_t untracked_line_allocs; /* allocations whose line was not kept */
    uint64_t saturated;             /* times a counter would have passed 2^64-1 (it stays) */
    uint64_t deep_paths;            /* paths defined deeper than max_stack_depth frames */
    uint64_t live_bytes;
    uint64_t live_count;
    int warnings[BSP_NWARNINGS];    /* BSP_WARN_* in the order they happened, 0 = none */
} bsp_state;

typedef struct bsp_core bsp_core;

/* A new core for a stream body. line_data: the header's line flag. record: keep every entry
 * (tests only; see bsp_take_records). seed: hashes the tables' keys (pass random bytes so a
 * peer cannot aim for collisions). Returns NULL when out of memory. */
bsp_core *bsp_new(const bsp_limits *limits, int line_data, int record, uint64_t seed);

/* The live heap's size in cells from which feeding decodes a few entries ahead of applying them,
 * starting the loads of the cells they will touch (BSP_QUEUE_FROM_CELLS by default). Results do
 * not depend on it: a heap that outgrows a core's private cache (L2: 0.5-2 MB on current cores;
 * the default, 65,536 cells, is 768 KB) makes nearly every lookup a cache miss, and overlapping
 * them is then the decoder's largest saving (many streams read in turn, as the daemon does); a
 * smaller heap mostly stays in cache, where applying each entry as it is decoded is faster.
 * Tests set 0 to take every stream through the queue. */
#define BSP_QUEUE_FROM_CELLS 65536
void bsp_set_queue_from(bsp_core *c, size_t cells);
void bsp_free(bsp_core *core);

/* Decode data[0:len]. *used is the number of bytes of data read: len for BSP_MORE, the end
 * of the end marker for BSP_END, and for BSP_REJECT where the rest of the rejected entry
 * continues in data (its first bytes are bsp_pending()). Do not feed again after BSP_END or
 * BSP_REJECT. */
int bsp_feed(bsp_core *core, const uint8_t *data, size_t len, size_t *used);

/* Body bytes consumed by whole entries (the stream offset of the partial or rejected entry,
 * relative to the start of the body). */
uint64_t bsp_offset(const bsp_core *core);
uint64_t bsp_entry_count(const bsp_core *core);
/* The kept bytes of the partial (or rejected) entry. */
const uint8_t *bsp_pending(const bsp_core *core, size_t *len);
/* Bytes of memory the core holds (tables, buffers). */
size_t bsp_memory(const bsp_core *core);

void bsp_get_definition_counts(const bsp_core *core, bsp_definition_counts *out);
void bsp_get_state(const bsp_core *core, bsp_state *out);

/* Tables. Strings, modules and paths are kept in the order of their first definition. */
size_t bsp_string_count(const bsp_core *core);
/* The i-th string (0-based); its UTF-8 bytes as sent (not NUL-terminated). */
void bsp_string_at(const bsp_core *core, size_t i, uint32_t *id, const uint8_t **text,
                   size_t *len);
/* The text of a string ID; 0 when it is not defined. */
int bsp_string(const bsp_core *core, uint32_t id, const uint8_t **text, size_t *len);
size_t bsp_module_count(const bsp_core *core);
void bsp_module_at(const bsp_core *core, size_t i, uint32_t *id, uint32_t *name_id);
int bsp_module(const bsp_core *core, uint32_t id, uint32_t *name_id);

size_t bsp_path_count(const bsp_core *core); /* defined paths */
const bsp_path *bsp_path_at(const bsp_core *core, size_t i);
const bsp_path *bsp_find_path(const bsp_core *core, uint32_t id);
/* The nodes of a call path, leaf first, following callers up to max_nodes nodes: the walk
 * stops at an undefined caller or at a path already on the stack (a redefinition can make a
 * cycle). Fills out[0:n] and returns n; (size_t)-1 when out of memory. Constant time a node
 * (a 4-byte mark per path, made on the first walk). */
size_t bsp_stack(bsp_core *core, uint32_t id, size_t max_nodes, const bsp_path **out);
/* Counters of a path ID (0: the entries on undefined paths); NULL when it has none. */
const uint64_t *bsp_counters(const bsp_core *core, uint32_t id);
/* Counters of every path in definition order, the unknown path (ID 0) first. i < count+1. */
const uint64_t *bsp_counters_at(const bsp_core *core, size_t i, uint32_t *id);

/* The records of what changed since the previous call (core-owned until the next call):
 * paths in definition order (unknown first), lines in order of first appearance.
 * lines = 0 leaves line-level CPU out (and its baseline where it was). */
int bsp_take_delta(bsp_core *core, int lines, const bsp_path_counts **paths, size_t *npaths,
                   const bsp_line_counts **line_records, size_t *nlines);
size_t bsp_line_count(const bsp_core *core);
void bsp_line_at(const bsp_core *core, size_t i, bsp_line_counts *out);
/* Allocations per (path, line offset), in order of first appearance (at most max_line_keys;
 * the allocations at a line first seen past that are counted in untracked_line_allocs). */
size_t bsp_alloc_line_count(const bsp_core *core);
const bsp_alloc_line *bsp_alloc_line_at(const bsp_core *core, size_t i);
void bsp_get_totals(const bsp_core *core, bsp_totals *out);
/* Allocating paths of the live allocations, largest bytes first (core-owned array). */
int bsp_leak_sites(bsp_core *core, const bsp_site **sites, size_t *n);
/* Iterate the live heap: start with *iter = 0; returns 0 when done. */
int bsp_heap_next(const bsp_core *core, size_t *iter, uint32_t *address, uint32_t *path,
                  uint32_t *size);

/* Definitions since the previous call, as (type, ID) pairs, type | BSP_REDEFINED when the ID
 * was defined before (core-owned until the next call); lets a caller keep caches exact. */
const uint32_t *bsp_take_definitions(bsp_core *core, size_t *npairs);
/* Record mode: the entries since the previous call, BSP_RECORD_WORDS words each. */
const uint32_t *bsp_take_records(bsp_core *core, size_t *nentries);
/* Bytes of the string arena (record mode resolves string records with it). */
const uint8_t *bsp_arena(const bsp_core *core, size_t *len);

/* Per-function figures (rokuprof.profile.functions.aggregate_functions) in two passes over
 * the paths with counters (CPU, wall, calls, or allocated bytes when `allocations`), each stack
 * walked and folded as bsp_stack and fold_stack do (at most max_stack_depth frames, the rest
 * one marked frame). bsp_functions_new collects the distinct (module, function, file) ID
 * triples of those stacks; the caller names them and gives each triple a group (one per
 * distinct name), and bsp_functions_sum adds the counters per group: self to the leaf's group,
 * total once per stack to every group on it. Sums are 128-bit (lo, hi). */
#define BSP_FOLDED_FUNCTION ((uint64_t)1 << 32) /* the marked frame's IDs (path_model) */
#define BSP_FOLDED_FILE (((uint64_t)1 << 32) + 1)
enum { BSP_SELF_CPU, BSP_SELF_WALL, BSP_TOTAL_CPU, BSP_TOTAL_WALL, BSP_FN_CALLS,
       BSP_FN_ALLOC_BYTES, BSP_NSUMS };
typedef struct {
    uint64_t lo[BSP_NSUMS];
    uint64_t hi[BSP_NSUMS];
    int seen; /* some stack holds the group */
} bsp_function_sums;
typedef struct bsp_functions bsp_functions;
/* NULL when out of memory. seed: hashes the triples. */
bsp_functions *bsp_functions_new(bsp_core *core, int allocations, uint64_t seed);
/* The triples, three words each: module, function ID, file ID (the marked frame's IDs are
 * BSP_FOLDED_FUNCTION and BSP_FOLDED_FILE). */
size_t bsp_functions_triples(const bsp_functions *f, const uint64_t **words);
/* groups[i]: the group of triple i, each < ngroups. 0 when out of memory. The sums stay
 * owned by f. */
int bsp_functions_sum(bsp_core *core, bsp_functions *f, const uint32_t *groups, size_t ngroups,
                      const bsp_function_sums **sums);
void bsp_functions_free(bsp_functions *f);
size_t bsp_stack_limit(const bsp_core *core);

/* Characters Python's bytes.decode("utf-8", "replace") gives for these bytes. */
size_t bsp_utf8_replace_length(const uint8_t *s, size_t n);

#endif
