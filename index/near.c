/*
 * near.c - the near-copy tier (see near.h): signatures, candidate paths, verification.
 *
 * Four phases, whose per-item results go to fixed slots, so the output does not depend on the
 * thread count, on scheduling or on the backend:
 *   1. signatures, a batch of rows at a time: the CPU shingles each row (parallel loop), finds its
 *      distinct shingles (la_cpu_shingle_distinct, in no sorted order) and adds them to the document
 *      frequencies (across the boundary: a table of the held-out rows' shingles, built once they
 *      are signed; with --within: a sketch of every shingle); the backend (dispatch.h: CPU or
 *      CUDA) computes the SimHash of the multisets ("near_simhash"),
 *      the MinHash signatures of the distinct sets ("near_signatures") and their LSH band keys
 *      ("near_band_keys"), after which the batch's signatures are dropped; then the bottom-m
 *      containment samples (CPU) of the held-out rows (of every row with --within);
 *   2. bucket tables: held-out rows ("h") and the other rows ("o", only when needed), their entries
 *      sorted by key on the backend ("near_buckets", a stable sort: the same tables on every backend);
 *      a containment entry also carries what a hit needs of its row, and a bit filter of all samples
 *      replaces the frequencies, which are freed;
 *   3. candidates (CPU, parallel): every row probes the tables of the other side, pairs collected
 *      per thread and then sorted and merged; the probes read random slots of tables larger than
 *      the cache, so they prefetch some lookups ahead. Without --within the other side's rows are
 *      sampled as they probe, from the shingles the probe builds anyway, and the held-out rows probe
 *      the other side's samples after them;
 *   4. verification (CPU, parallel): the two rows' shingle sets compared exactly (the held-out row's
 *      set indexed once for all its candidates, la_cpu_shingle_index); a reported pair's MinHash
 *      estimate comes from signing its two sets again.
 * Shingle sets are kept between the phases while they fit in p.set_cache_bytes (set), else rebuilt
 * from the text in each phase.
 */
#include "near.h"
#include "la_alloc.h"
#include "la_bits.h"
#include "la_prefetch.h"
#include "la_time.h"

#include "dispatch.h"
#include "lsh.h"
#include "parallel.h"
#include "shingle_core.h"
#include "simhash_core.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void la_near_params_default(la_near_params *p)
{
    p->shingle_kind = LA_SHINGLE_WORD;
    p->shingle_size = 2;
    p->num_perm = 128;
    p->threshold = 0.33;
    p->containment_threshold = 0.9;
    p->containment_min_shingles = 10;
    p->containment_sample = 16;
    p->simhash_k = 3;
    p->lsh_fp_weight = 0.15;
    p->lsh_fn_weight = 0.85;
    p->within = 0;
    p->threads = 0;
    p->exec = NULL;
    p->skip = NULL;
    p->set_cache_bytes = 0;
    p->phase_begins = NULL;
    p->phase_adds = NULL;
    p->progress_ctx = NULL;
}

enum { SRC_LSH = 1, SRC_SIM = 2, SRC_CON = 4 };
enum { MAX_SAMPLE = 64 };
/* Shingle hashes per signature batch: a bound of 8 bytes each for the multisets and the distinct
 * sets, so a batch holds about 2 x 8 MiB on the CPU (it stays in the cache between shingling and
 * MinHash, and a small corpus does not fault in 128 MiB of fresh pages as 2 x 64 MiB did: peak RSS
 * 381 -> 269 MB at 50k x 5k) and 2 x 256 MiB for a device backend. */
#define BATCH_SLOTS_HOST ((size_t)1 << 20)
#define BATCH_SLOTS_DEVICE ((size_t)32 << 20)
#define DF_BITS 24
#define DF_SIZE ((size_t)1 << DF_BITS)

/* Counter of shingle hash h in the document frequency sketch (one row of a count-min sketch:
 * collisions can only raise a count). */
static size_t df_slot(uint64_t h) { return (size_t)(h >> (64 - DF_BITS)); }

/* What a containment hit needs of its table row, kept in the bucket entry's aux so that a hit reads
 * only the cache line of the entry it found: the row's distinct shingle count in the low
 * CON_NSH_BITS bits (all ones: a row of that many or more, whose count is read from nsh) and the
 * hits its sample needs (at most MAX_SAMPLE) above them. */
enum { CON_NSH_BITS = 25 };
#define CON_NSH_MASK ((1u << CON_NSH_BITS) - 1)

/* Bits per containment sample entry in the filter the probe tests before it looks a shingle up:
 * about one false pass in eight. */
enum { FILTER_BITS_PER_ENTRY = 8, FILTER_MIN_LOG2 = 12 };

/* How many shingles ahead the containment probe prefetches a shingle's filter word; half as far
 * ahead, it prefetches the bucket slots of a shingle that passed the filter. */
enum { PROBE_AHEAD = 16 };

/* A candidate pair: key (uint64_t)b << 32 | a, so sorting keys sorts pairs by (b, a); the row
 * field holds the SRC_ bits of the paths that found it. Sorted with the radix sort of la_keysort.h. */
typedef la_key_row cand;

typedef struct con_hit {
    uint32_t row, need;      /* a row hit by the probing row and the hits its sample needs */
} con_hit;

typedef struct scratch {
    uint64_t *sh, *sh2;
    size_t shcap, sh2cap;
    con_hit *hits;           /* containment: the distinct rows hit by the probing row, in first-hit order */
    size_t nhits, hitcap;
    uint8_t *nhit;           /* containment: per table row, its hits so far (saturating); n entries,
                                zero again after each probing row */
    cand *c;
    size_t nc, ccap;
    uint32_t cached; /* row whose set bset points to (in sh2 or the set cache), or UINT32_MAX */
    const uint64_t *bset;
    size_t ncached;
    uint32_t *siga, *sigb;   /* verification: MinHash signatures of a pair's rows (K each) */
    uint64_t smp[MAX_SAMPLE]; /* fused: the sample of the row being probed */
    uint64_t *pass;          /* the shingles of a row that pass a filter: the samples' (containment
                                probe) or the held-out shingles' (counting, fused) */
    size_t passcap;
    uint32_t sigb_row;       /* the row sigb holds, or UINT32_MAX */
    /* signing on a host-loop backend (sign_chunk): a chunk's shingle multisets (cmh, cmhcap
     * shingles), the distinct sets of the worker's chunks of the batch (cuh: cuh_used of cuhcap
     * shingles), a chunk's CSR offsets into cmh and cuh, its signatures, and the seconds this
     * worker spent in each op */
    uint64_t *cmh, *cuh, *coff_m, *coff_u;
    size_t cmhcap, cuhcap, cuh_used;
    uint32_t *csig;
    size_t chunk_cap;
    uint64_t *dtab;          /* la_cpu_shingle_distinct's table (dtab_room), all zero */
    size_t dtab_len;
    uint64_t *vtab;          /* the table indexing a set (vx): verification's bset, or the probing
                                row's shingles in probe_row; all zero between uses */
    size_t vtab_len;
    la_shingle_index vx;
    uint64_t *multi;         /* shingle_row: a row's shingle multiset */
    size_t multicap;
    double op_s[3];
    char pad[64];            /* the next thread's scratch starts a cache line further: no line is
                                written by two threads */
} scratch;

typedef struct near_ctx near_ctx;

/* Fused: every distinct shingle of the held-out rows with the number of rows of the corpus that
 * hold it (exact; the other side's rows add theirs as they are signed), in an open-addressing
 * table keyed by the shingle's low bits, behind a bit filter of its high bits. A slot with n == 0
 * is empty (a kept shingle has at least its held-out row). Each slot also says where the held-out
 * rows that hold its shingle are listed (held_rows), so a containment probe that found the slot
 * reads its rows with one more access. */
typedef struct freq_slot {
    uint64_t key;
    _Atomic uint32_t n;
    uint32_t at;             /* held_rows[at]: how many rows follow, then the rows, ascending (the
                                held-out rows of at least containment_min_shingles shingles); 0:
                                none */
} freq_slot;

typedef struct freq_table {
    freq_slot *slot;
    size_t mask, keys;
    size_t part_mask;        /* slots per part less one: a probe stays in its home slot's part (a
                                table of FREQ_PARTS parts, or one), so the parts fill in parallel */
    uint64_t *filter;
    int filter_log2;
    uint32_t *held_rows;     /* the lists the slots' `at` point into; entry 0 unused */
} freq_table;

typedef enum side { SIDE_HELD, SIDE_OTHER } side;

struct near_ctx {
    const la_row *r;
    size_t n;
    uint32_t held;
    la_near_params p;
    int bands, rpb, K, m, blocks;
    int contain;              /* containment enabled */
    uint32_t need[MAX_SAMPLE + 1]; /* hits needed for a sample of size i */
    uint32_t *nsh;            /* distinct shingles per row (0: skipped) */
    uint64_t *keys;           /* bands per row with a key slot (keys_of); across, the other side's
                                 rows keep none: they probe the held-out table as signed */
    uint64_t *simh;           /* n */
    uint64_t *samp;           /* m per row with a sample slot: containment sample (rarest shared shingles) */
    uint32_t *hrows;          /* the held-out partition's rows, in row order (nhrows): the scans of
                                 the held-out side read them, not every row of the table */
    size_t nhrows;
    uint32_t *sidx;           /* across: each held-out row's slot in keys and samp (the other side's
                                 rows keep no keys, and their samples in scratch only); NULL: row
                                 i's slot is i */
    uint32_t *nsamp;          /* samples per row (0: the row cannot be the contained side) */
    _Atomic uint32_t *df;     /* with --within: document frequency sketch of shingle hashes
                                 (DF_SIZE counters), freed once the rows are sampled */
    freq_table freq;          /* fused: the held-out rows' shingles and their document frequencies */
    uint32_t *shared;         /* fused: per other-side row, its distinct shingles that a held-out row
                                 has too (counted as it is signed) */
    uint64_t *filter;         /* bit set of the containment samples' hashes (high filter_log2 bits) */
    int filter_log2;
    la_buckets *lsh_h, *lsh_o, *sim_h, *sim_o, *con_h, *con_o;
    cand *cands;
    size_t ncand;
    la_pair *res;
    unsigned char *keep;
    scratch *sc;
    int nthreads;
    la_exec *x;               /* the backend ops run through it */
    int pass_side;            /* the rows a pass takes: a side, or -1 for all */
    int across;               /* no --within: the held-out rows are signed first and the other side
                                 probes their LSH table as it is signed (see run) */
    int fused;                /* the other side is sampled as it probes (see run) */
    int sample_in_probe;      /* this candidate pass samples the rows it probes */
    /* the signature batch: nb rows of the pass (brow), batch row j's shingles at slot[j] in mh
     * (sorted multiset) and uh (distinct), then packed to CSR moff / uoff; its SimHashes and band
     * keys in bsimh and bkeys. On a host-loop backend (sign_chunk) each worker keeps its chunks'
     * shingles in its scratch (cmh, cuh), and mh and uh are not allocated: row j's distinct set at
     * uoff[j] in the cuh of worker uwk[j] */
    size_t nb, cap, rows_cap;
    uint32_t *brow;
    uint64_t *mh, *uh, *slot, *moff, *uoff, *bsimh, *bkeys;
    uint32_t *mcnt;
    uint16_t *uwk;
    int probe_signed;         /* this signing pass probes the held-out LSH table with each batch */
    /* every row's distinct shingles as signing built them (nsh[i] of them at set +
     * set_start[i]), kept for the later phases while they fit in p.set_cache_bytes; NULL: rebuilt
     * from the text */
    uint64_t *set, *set_start;
    size_t set_cap, set_used;
    uint64_t text_total, text_done; /* bytes of normalized text to sign, and signed so far */
};


/* ---- helpers ----------------------------------------------------------------------------------- */

static int in_pass(const near_ctx *c, size_t i);
static int on_side(const near_ctx *c, size_t i, side sd);

/* The rows a scan of side sd reads: the held-out rows' list (*list, the count returned), or every
 * row (*list NULL, row k is k). The caller still asks on_side of each. */
static size_t side_rows(const near_ctx *c, side sd, const uint32_t **list)
{
    *list = sd == SIDE_HELD ? c->hrows : NULL;
    return *list ? c->nhrows : c->n;
}

/* The same for the rows of the pass (c->pass_side); the caller still asks in_pass of each. */
static size_t pass_rows(const near_ctx *c, const uint32_t **list)
{
    if (c->pass_side == SIDE_HELD) return side_rows(c, SIDE_HELD, list);
    *list = NULL;
    return c->n;
}

static size_t row_at(const uint32_t *list, size_t k) { return list ? list[k] : k; }

static int emit(near_ctx *c, scratch *s, uint32_t x, uint32_t y, uint32_t src);

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 1;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (!q) return 0;
    *p = q;
    *cap = nc;
    return 1;
}

static void phase_begins(const near_ctx *c, const char *phase, size_t total, const char *unit)
{
    if (c->p.phase_begins) c->p.phase_begins(c->p.progress_ctx, phase, total, unit);
}

static void phase_adds(const near_ctx *c, size_t n)
{
    if (c->p.phase_adds) c->p.phase_adds(c->p.progress_ctx, n);
}

/* A table of at least len entries, all zero, in *t (*have entries now); 0 when out of memory. */
static int zeroed_room(uint64_t **t, size_t *have, size_t len)
{
    if (len <= *have) return 1;
    free(*t);
    *have = 0;
    if (!(*t = la_calloc_n(len, sizeof **t))) return 0;
    *have = len;
    return 1;
}

/* Room in the scratch's table for the distinct values of n shingles; 0 when out of memory. */
static int dtab_room(scratch *s, size_t n) { return zeroed_room(&s->dtab, &s->dtab_len, la_shingle_distinct_table(n)); }

/* Room in the scratch's verification table for a set of n shingles; 0 when out of memory. */
static int vtab_room(scratch *s, size_t n) { return zeroed_room(&s->vtab, &s->vtab_len, la_shingle_index_table(n)); }

/* Row i's distinct shingles, built from its text, in *buf (la_cpu_shingle_distinct's order, the
 * order signing built them in); returns the count, or (size_t)-1 when out of memory. */
static size_t shingle_row(const near_ctx *c, scratch *s, size_t i, uint64_t **buf, size_t *cap)
{
    const la_row *r = &c->r[i];
    size_t bound = la_shingle_bound(r->norm_len);
    if (!grow((void **)&s->multi, &s->multicap, bound, sizeof *s->multi) || !grow((void **)buf, cap, bound, sizeof **buf))
        return (size_t)-1;
    size_t n = la_cpu_shingle(r->norm, r->norm_len, c->p.shingle_kind, c->p.shingle_size, s->multi, s->multicap);
    if (!dtab_room(s, n)) return (size_t)-1;
    return la_cpu_shingle_distinct(s->multi, n, *buf, s->dtab);
}

static int push_cand(scratch *s, uint32_t a, uint32_t b, uint32_t src)
{
    if (!grow((void **)&s->c, &s->ccap, s->nc + 1, sizeof *s->c)) return 0;
    s->c[s->nc].key = (uint64_t)b << 32 | a;
    s->c[s->nc].row = src;
    s->c[s->nc].aux = 0;
    s->nc++;
    return 1;
}

static uint64_t block_key(int j, uint64_t value) { return la_mix64(la_mix64(0x53494d424c4f434bull + (uint64_t)j) ^ value); }

static uint64_t block_value(const near_ctx *c, uint64_t h, int j)
{
    int base = 64 / c->blocks, extra = 64 % c->blocks;
    int start = j * base + (j < extra ? j : extra);
    int width = base + (j < extra ? 1 : 0);
    uint64_t mask = width >= 64 ? ~0ull : ((1ull << width) - 1);
    return (h >> start) & mask;
}

/* ---- the held-out shingles' frequencies (fused) ------------------------------------------------ */

static size_t freq_home(const freq_table *f, uint64_t h) { return (size_t)h & f->mask; }

/* The slot after slot i in its part, the first after the last. */
static size_t freq_next(const freq_table *f, size_t i) { return (i & ~f->part_mask) | ((i + 1) & f->part_mask); }
static size_t freq_bit(const freq_table *f, uint64_t h) { return (size_t)(h >> (64 - f->filter_log2)); }

static int freq_may_have(const freq_table *f, uint64_t h)
{
    size_t b = freq_bit(f, h);
    return (int)(f->filter[b >> 6] >> (b & 63) & 1);
}

/* The slot of shingle h, or NULL when no held-out row has it. */
static freq_slot *freq_find(const freq_table *f, uint64_t h)
{
    if (!freq_may_have(f, h)) return NULL;
    for (size_t i = freq_home(f, h);; i = freq_next(f, i)) {
        freq_slot *s = &f->slot[i];
        if (!atomic_load_explicit(&s->n, memory_order_relaxed)) return NULL;
        if (s->key == h) return s;
    }
}

/* Before freq_find(sh[k]) in a loop over sh[0 .. n): the filter words of the shingles PROBE_AHEAD
 * ahead and the slots of those half as far ahead that pass it start loading. */
static void freq_prefetch(const freq_table *f, const uint64_t *sh, size_t k, size_t n)
{
    if (k + PROBE_AHEAD < n) LA_PREFETCH(&f->filter[freq_bit(f, sh[k + PROBE_AHEAD]) >> 6]);
    if (k + PROBE_AHEAD / 2 < n && freq_may_have(f, sh[k + PROBE_AHEAD / 2]))
        LA_PREFETCH(&f->slot[freq_home(f, sh[k + PROBE_AHEAD / 2])]);
}

/* How many rows hold shingle h: exact for the held-out rows' shingles (fused), 0 for any other; with
 * --within, the sketch's count, which collisions can only raise. */
static uint32_t freq_of(const near_ctx *c, uint64_t h)
{
    if (!c->fused) return atomic_load_explicit(&c->df[df_slot(h)], memory_order_relaxed);
    const freq_slot *s = freq_find(&c->freq, h);
    return s ? atomic_load_explicit(&s->n, memory_order_relaxed) : 0;
}

static void freq_prefetch_of(const near_ctx *c, const uint64_t *sh, size_t k, size_t n)
{
    if (c->fused)
        freq_prefetch(&c->freq, sh, k, n);
    else if (k + PROBE_AHEAD < n)
        LA_PREFETCH(&c->df[df_slot(sh[k + PROBE_AHEAD])]);
}

/* An other-side row's distinct shingles sh[0 .. n) into the frequencies of the held-out shingles it
 * holds; returns how many it holds, or UINT32_MAX when out of memory. Those that pass the filter
 * are listed first in *pass (one branch-free pass), then looked up with their slots prefetched. */
static uint32_t freq_count(near_ctx *c, const uint64_t *sh, size_t n, uint64_t **pass, size_t *passcap)
{
    const freq_table *f = &c->freq;
    if (!grow((void **)pass, passcap, n, sizeof **pass)) return UINT32_MAX;
    uint64_t *p = *pass;
    size_t np = 0;
    for (size_t k = 0; k < n; k++) {
        p[np] = sh[k];
        np += (size_t)freq_may_have(f, sh[k]);
    }
    uint32_t held = 0;
    int alone = c->nthreads <= 1;
    for (size_t k = 0; k < np; k++) {
        if (k + PROBE_AHEAD < np) LA_PREFETCH(&f->slot[freq_home(f, p[k + PROBE_AHEAD])]);
        freq_slot *s = freq_find(f, p[k]);
        if (!s) continue;
        /* one counting thread adds without a locked instruction, which would hold back the
         * loads after it (the prefetched probes) until it completes */
        if (alone) atomic_store_explicit(&s->n, atomic_load_explicit(&s->n, memory_order_relaxed) + 1, memory_order_relaxed);
        else atomic_fetch_add_explicit(&s->n, 1, memory_order_relaxed);
        held++;
    }
    return held;
}

static const uint64_t *distinct_set(const near_ctx *c, scratch *s, size_t i, uint64_t **buf, size_t *cap, size_t *n);

/* Row i's distinct shingles as the frequencies count them (*n of them at *set): a row flagged in
 * p.skip counts although it is not signed, so its set is built from the text when signing kept none. */
static la_status counted_set(const near_ctx *c, scratch *s, size_t i, uint64_t **buf, size_t *cap, const uint64_t **set,
                             size_t *n)
{
    *set = NULL;
    *n = 0;
    if (!c->r[i].norm) return LA_OK;
    if (c->nsh[i] || !c->set) {
        *set = distinct_set(c, s, i, buf, cap, n);
    } else {
        size_t m = shingle_row(c, s, i, buf, cap);
        if (m != (size_t)-1) {
            *n = m;
            *set = *buf;
        }
    }
    return *set ? LA_OK : la_error(LA_ENOMEM, "near: out of memory counting the held-out rows' shingles");
}

/* A table of at least FREQ_PARTS * FREQ_PART_MIN slots is cut into FREQ_PARTS parts of its slots,
 * each probed within itself: the held-out rows' shingles go into the parts on as many threads, each
 * thread taking the shingles of its parts, in row order, whatever the thread count. */
enum { FREQ_PARTS = 64, FREQ_PART_MIN = 4096 };

/* Insert shingle h into the table; add adds to its count; *fill counts the keys of h's part (its
 * table's with one part). Returns its slot, or SIZE_MAX when the part has no empty slot left for it
 * (a probe needs one to end). Counts are read and written relaxed: one thread fills a part (a plain
 * `+=` on the _Atomic count is a locked add). */
static size_t freq_insert(freq_table *f, uint64_t h, uint32_t add, size_t *fill)
{
    size_t i = freq_home(f, h);
    uint32_t n;
    while ((n = atomic_load_explicit(&f->slot[i].n, memory_order_relaxed)) && f->slot[i].key != h) i = freq_next(f, i);
    if (!n) {
        if (*fill >= f->part_mask) return SIZE_MAX;
        f->slot[i].key = h;
        (*fill)++;
    }
    atomic_store_explicit(&f->slot[i].n, n + add, memory_order_relaxed);
    return i;
}

/* An empty table of cap slots, in parts (FREQ_PARTS of them when it is large enough) or not. */
static la_status freq_alloc(freq_table *f, size_t cap, int parts)
{
    free(f->slot);
    /* count_held faults the pages of each part in, on the thread that fills it (la_zalloc_n) */
    f->slot = la_calloc_n(cap, sizeof *f->slot);
    f->mask = cap - 1;
    f->part_mask = parts && cap >= (size_t)FREQ_PARTS * FREQ_PART_MIN ? cap / FREQ_PARTS - 1 : cap - 1;
    f->keys = 0;
    return f->slot ? LA_OK : la_error(LA_ENOMEM, "near: out of memory for a table of %zu held-out shingles", cap / 2);
}

static size_t freq_nparts(const freq_table *f) { return (f->mask + 1) / (f->part_mask + 1); }

/* Whether held-out row i is listed under its shingles (freq_slot.at): a row that can be the
 * containing side of a containment pair, one of at least containment_min_shingles shingles. */
static int listed_row(const near_ctx *c, size_t i)
{
    return on_side(c, i, SIDE_HELD) && c->nsh[i] >= (uint32_t)c->p.containment_min_shingles;
}

/* Building the table: its parts are cut into `groups` ranges, one an item of a parallel loop. Each
 * group keeps, in row order, the slot and the row of every shingle of a listed row that falls in its
 * parts (arrays of its own: a shared one would have both threads writing its lines). */
typedef struct freq_entry {
    uint32_t slot, row;
} freq_entry;

typedef struct freq_group {
    freq_entry *e;
    size_t n, cap;
    char pad[64];
} freq_group;

typedef struct freq_build {
    near_ctx *c;
    size_t groups;
    size_t lsh_items;             /* 1: item 0 of count_held's loop builds the held-out LSH table */
    uint32_t *held;               /* the held-out rows, in row order (nheld) */
    size_t nheld;
    /* With the set cache and two groups or more, each held-out row's shingles sorted into its
     * groups' runs once (split_held), so that no group reads the others' shingles: the positions in
     * its cached set of row held[k]'s shingles from base[k] in gpos, group by group (SIZE_MAX: a row
     * without a cached set, or of more than SPLIT_MOST shingles, which each group filters itself),
     * group g's from goff[k * (groups + 1) + g]. */
    uint16_t *gpos;
    size_t *base;
    uint16_t *goff;
    uint8_t part_group[FREQ_PARTS];
    size_t split_items;           /* items of count_held's loop that split SPLIT_ROWS rows each */
    atomic_size_t split_done;     /* of them, finished */
    freq_group g[FREQ_PARTS];
    size_t fill[FREQ_PARTS];      /* keys per part */
    size_t start[FREQ_PARTS + 1]; /* where each part's lists begin in held_rows */
    int laying;                   /* layout_lists: count (0) or lay out (1) */
    atomic_int overflow;          /* a part ran out of empty slots */
} freq_build;

static void groups_free(freq_build *b)
{
    for (size_t g = 0; g < FREQ_PARTS; g++) free(b->g[g].e);
}

static void split_free(freq_build *b)
{
    free(b->gpos);
    free(b->base);
    free(b->goff);
    b->gpos = NULL;
    b->base = NULL;
    b->goff = NULL;
}

static void group_parts(const freq_build *b, size_t g, size_t *p0, size_t *p1)
{
    size_t np = freq_nparts(&b->c->freq);
    *p0 = g * np / b->groups;
    *p1 = (g + 1) * np / b->groups;
}

static la_status build_lsh(near_ctx *c, side sd, la_buckets **out);

/* Held-out rows an item of the split; the most shingles a row split has (its positions 16 bits). */
enum { SPLIT_ROWS = 256, SPLIT_MOST = 65535 };

/* Rows held[begin .. end) of the split: each cached set's shingles into its run, group by group,
 * in the set's order within a group. */
static void split_held(freq_build *b, size_t begin, size_t end)
{
    const near_ctx *c = b->c;
    const freq_table *f = &c->freq;
    size_t shift = (size_t)__builtin_ctzll((unsigned long long)f->part_mask + 1), ng = b->groups;
    for (size_t k = begin; k < end; k++) {
        if (b->base[k] == SIZE_MAX) continue;
        size_t i = b->held[k], n = c->nsh[i];
        const uint64_t *set = c->set + c->set_start[i];
        uint16_t *o = b->goff + k * (ng + 1), at[FREQ_PARTS];
        memset(o, 0, (ng + 1) * sizeof *o);
        for (size_t q = 0; q < n; q++) o[b->part_group[freq_home(f, set[q]) >> shift] + 1]++;
        for (size_t g = 0; g < ng; g++) {
            o[g + 1] += o[g];
            at[g] = o[g];
        }
        uint16_t *run = b->gpos + b->base[k];
        for (size_t q = 0; q < n; q++) run[at[b->part_group[freq_home(f, set[q]) >> shift]]++] = (uint16_t)q;
    }
}

/* The split's arrays and items, when the set cache holds the held-out rows' sets and the table
 * fills in two groups or more; none otherwise (or out of memory: each group then filters every
 * set). */
static void split_begin(freq_build *b)
{
    near_ctx *c = b->c;
    if (!c->set || b->groups < 2) return;
    size_t total = 0;
    if (!(b->base = la_malloc_n(b->nheld, sizeof *b->base))) return;
    for (size_t k = 0; k < b->nheld; k++) {
        size_t i = b->held[k];
        b->base[k] = c->nsh[i] && c->nsh[i] <= SPLIT_MOST ? total : SIZE_MAX; /* signed: in the cache */
        if (b->base[k] != SIZE_MAX) total += c->nsh[i];
    }
    b->gpos = la_malloc_n(total, sizeof *b->gpos);
    b->goff = la_malloc_nm(b->nheld, b->groups + 1, sizeof *b->goff);
    if (!b->gpos || !b->goff) {
        split_free(b);
        return;
    }
    for (size_t g = 0; g < b->groups; g++) {
        size_t p0, p1;
        group_parts(b, g, &p0, &p1);
        for (size_t p = p0; p < p1; p++) b->part_group[p] = (uint8_t)g;
    }
    b->split_items = (b->nheld + SPLIT_ROWS - 1) / SPLIT_ROWS;
}

/* The held-out rows' distinct shingles of parts [p0, p1) into the table, in row order; the slot and
 * row of each shingle of a listed row into the group's lists, and the listed rows of each slot
 * counted in its `at`. */
static la_status count_held(void *ctx, int worker, size_t begin, size_t end)
{
    freq_build *b = ctx;
    near_ctx *c = b->c;
    freq_table *f = &c->freq;
    scratch *s = &c->sc[worker];
    size_t shift = (size_t)__builtin_ctzll((unsigned long long)f->part_mask + 1);
    for (size_t item = begin; item < end; item++) {
        if (item < b->lsh_items) {
            LA_TRY(build_lsh(c, SIDE_HELD, &c->lsh_h));
            continue;
        }
        if (item < b->lsh_items + b->split_items) {
            size_t k0 = (item - b->lsh_items) * SPLIT_ROWS;
            split_held(b, k0, k0 + SPLIT_ROWS < b->nheld ? k0 + SPLIT_ROWS : b->nheld);
            atomic_fetch_add_explicit(&b->split_done, 1, memory_order_release);
            continue;
        }
        la_parallel_wait(&b->split_done, b->split_items); /* the split's items, handed out before */
        size_t g = item - b->lsh_items - b->split_items, p0, p1;
        group_parts(b, g, &p0, &p1);
        freq_group *grp = &b->g[g];
        la_populate(&f->slot[p0 << shift], ((p1 - p0) << shift) * sizeof *f->slot);
        for (size_t k = 0; k < b->nheld; k++) {
            size_t i = b->held[k];
            int listed_i = listed_row(c, i);
            const uint64_t *mine;
            size_t m = 0;
            if (b->gpos && b->base[k] != SIZE_MAX) {
                /* the group's shingles of the row, gathered from the cached set by their positions */
                const uint16_t *o = b->goff + k * (b->groups + 1), *pos = b->gpos + b->base[k] + o[g];
                const uint64_t *set = c->set + c->set_start[i];
                m = (size_t)(o[g + 1] - o[g]);
                if (!grow((void **)&s->pass, &s->passcap, m, sizeof *s->pass))
                    return la_error(LA_ENOMEM, "near: out of memory counting the held-out rows' shingles");
                for (size_t q = 0; q < m; q++) s->pass[q] = set[pos[q]];
                mine = s->pass;
            } else {
                const uint64_t *set;
                size_t n;
                LA_TRY(counted_set(c, s, i, &s->sh, &s->shcap, &set, &n));
                if (listed_i && n != c->nsh[i])
                    return la_error(LA_EINTERNAL, "near: row %zu has %zu distinct shingles, %u when it was signed", i, n,
                                    c->nsh[i]);
                /* this group's shingles first, without a branch on each (with two groups or more,
                 * half of them or more are another's: a branch that was mispredicted every other
                 * time) */
                if (!grow((void **)&s->pass, &s->passcap, n, sizeof *s->pass))
                    return la_error(LA_ENOMEM, "near: out of memory counting the held-out rows' shingles");
                uint64_t *pass = s->pass;
                for (size_t q = 0; q < n; q++) {
                    pass[m] = set[q];
                    m += (size_t)((freq_home(f, set[q]) >> shift) - p0 < p1 - p0);
                }
                mine = pass;
            }
            /* then their inserts, which go to random slots of a table larger than the cache: each
             * starts its slot's cache miss PROBE_AHEAD shingles early */
            for (size_t q = 0; q < m; q++) {
                if (q + PROBE_AHEAD < m) LA_PREFETCH_WRITE(&f->slot[freq_home(f, mine[q + PROBE_AHEAD])]);
                size_t part = freq_home(f, mine[q]) >> shift;
                size_t at = freq_insert(f, mine[q], 1, &b->fill[part]);
                if (at == SIZE_MAX) {
                    atomic_store(&b->overflow, 1);
                    return LA_OK;
                }
                if (listed_i) {
                    if (!la_grow((void **)&grp->e, &grp->cap, grp->n + 1, sizeof *grp->e, 4096))
                        return la_error(LA_ENOMEM, "near: out of memory listing the held-out rows' shingles");
                    grp->e[grp->n++] = (freq_entry){(uint32_t)at, (uint32_t)i};
                    f->slot[at].at++; /* the slot's line is in the cache: the insert read it */
                }
            }
        }
    }
    return LA_OK;
}

/* After the table was built again: every entry's slot mapped to its new one (through the old slot's
 * rank), and the entries gathered in one group, in row order (a merge of the groups by row: the
 * entries of one row are in one group each, so a stable merge keeps them in their shingles' order
 * within the group, which the lists do not depend on). */
static la_status regroup(freq_build *b, const uint32_t *rank, const uint32_t *moved)
{
    size_t total = 0;
    for (size_t g = 0; g < b->groups; g++) total += b->g[g].n;
    freq_group all = {0};
    if (!(all.e = la_malloc_n(total, sizeof *all.e)))
        return la_error(LA_ENOMEM, "near: out of memory listing the held-out rows' shingles");
    size_t at[FREQ_PARTS] = {0};
    for (;;) {
        /* the group whose next entry has the lowest row */
        size_t best = SIZE_MAX;
        for (size_t g = 0; g < b->groups; g++)
            if (at[g] < b->g[g].n && (best == SIZE_MAX || b->g[g].e[at[g]].row < b->g[best].e[at[best]].row)) best = g;
        if (best == SIZE_MAX) break;
        const freq_group *src = &b->g[best];
        uint32_t row = src->e[at[best]].row;
        for (; at[best] < src->n && src->e[at[best]].row == row; at[best]++)
            all.e[all.n++] = (freq_entry){moved[rank[src->e[at[best]].slot]], row};
    }
    all.cap = total;
    groups_free(b);
    memset(b->g, 0, sizeof b->g);
    b->g[0] = all;
    b->groups = 1;
    return LA_OK;
}

/* A table less than a quarter full is built again half full: it spans fewer cache lines for the
 * other side's probes. The groups' slots follow their shingles to their new slots, and move to the
 * groups of the new parts (in row order still: each group's entries are, and a part's entries come
 * from one group). */
static la_status fit_freq(freq_build *b)
{
    freq_table *f = &b->c->freq;
    size_t cap = f->mask + 1, fit = 16;
    while (fit < 2 * f->keys) fit <<= 1;
    if (4 * f->keys >= cap) return LA_OK;
    uint32_t *rank = la_malloc_n(cap, sizeof *rank), *moved = la_malloc_n(f->keys, sizeof *moved);
    if (!rank || !moved) {
        free(rank);
        free(moved);
        return la_error(LA_ENOMEM, "near: out of memory for a table of %zu held-out shingles", f->keys);
    }
    size_t nk = 0;
    for (size_t i = 0; i < cap; i++)
        if (f->slot[i].n) {
            rank[i] = (uint32_t)nk;
            f->slot[nk++] = (freq_slot){f->slot[i].key, f->slot[i].n, f->slot[i].at};
        }
    freq_slot *old = f->slot;
    f->slot = NULL;
    la_status st = LA_OK;
    /* in parts, as the table was filled; should a part run out of room (the keys are hashes: they
     * do not crowd one part), in one */
    for (int parts = 1; parts >= 0; parts--) {
        if ((st = freq_alloc(f, fit, parts)) != LA_OK) break;
        size_t fill[FREQ_PARTS] = {0}, shift = (size_t)__builtin_ctzll((unsigned long long)f->part_mask + 1), i;
        for (i = 0; i < nk; i++) {
            if (i + PROBE_AHEAD < nk) LA_PREFETCH_WRITE(&f->slot[freq_home(f, old[i + PROBE_AHEAD].key)]);
            size_t at = freq_insert(f, old[i].key, old[i].n, &fill[freq_home(f, old[i].key) >> shift]);
            if (at == SIZE_MAX) break;
            moved[i] = (uint32_t)at;
            f->slot[at].at = old[i].at;
        }
        if (i == nk) break;
    }
    f->keys = nk;
    if (st == LA_OK && 4 * f->keys < cap) st = regroup(b, rank, moved);
    free(old);
    free(rank);
    free(moved);
    return st;
}

/* Each part's lists, in slot order: with b->laying 0, the room they take counted into
 * start[part + 1]; with 1, laid out from start[part] (the count, then room for the rows), each
 * slot's `at` left at its list's end. Without a branch on whether a slot has a list (half of them,
 * at random): every slot writes its count where the next list would start, and a slot without one
 * is overwritten by the next that has one, or writes into the entry each part keeps after its lists
 * (so no write reaches the next part's, which another thread lays out). */
static la_status layout_lists(void *ctx, int worker, size_t begin, size_t end)
{
    freq_build *b = ctx;
    freq_table *f = &b->c->freq;
    (void)worker;
    size_t size = f->part_mask + 1;
    for (size_t g = begin; g < end; g++) {
        size_t p0, p1;
        group_parts(b, g, &p0, &p1);
        for (size_t p = p0; p < p1; p++) {
            size_t at = b->laying ? b->start[p] : 0;
            if (b->laying) {
                for (size_t i = p * size; i < (p + 1) * size; i++) {
                    uint32_t k = f->slot[i].at;
                    f->held_rows[at] = k;
                    at += (size_t)(k != 0) + k;
                    f->slot[i].at = k ? (uint32_t)at : 0;
                }
            } else {
                for (size_t i = p * size; i < (p + 1) * size; i++) {
                    uint32_t k = f->slot[i].at;
                    at += (size_t)(k != 0) + k;
                }
                b->start[p + 1] = at + 1; /* and the part's last entry */
            }
        }
    }
    return LA_OK;
}

/* The listed rows go in from the back, the last row first, which leaves `at` one past the count and
 * the rows ascending; then `at` is moved back onto the count. Each group fills the slots of its
 * entries, which are those of its parts. */
static la_status fill_lists(void *ctx, int worker, size_t begin, size_t end)
{
    freq_build *b = ctx;
    freq_table *f = &b->c->freq;
    (void)worker;
    size_t size = f->part_mask + 1;
    for (size_t g = begin; g < end; g++) {
        const freq_group *grp = &b->g[g];
        for (size_t j = grp->n; j-- > 0;) {
            /* the slots are random lines of a table larger than the cache: start their misses early */
            if (j >= PROBE_AHEAD) LA_PREFETCH_WRITE(&f->slot[grp->e[j - PROBE_AHEAD].slot]);
            f->held_rows[--f->slot[grp->e[j].slot].at] = grp->e[j].row;
        }
        size_t p0, p1;
        group_parts(b, g, &p0, &p1);
        for (size_t i = p0 * size; i < p1 * size; i++) f->slot[i].at -= f->slot[i].at != 0;
    }
    return LA_OK;
}

/* The listed rows of every shingle (in row order) into held_rows, each slot's list starting at its
 * `at`: the count, then the rows; lists in slot order. The groups' entries and the counts in `at`
 * as count_held left them. */
static la_status list_held_rows(freq_build *b)
{
    freq_table *f = &b->c->freq;
    int nt = b->c->nthreads;
    b->laying = 0;
    LA_TRY(la_parallel_for(nt, b->groups, 1, layout_lists, b));
    size_t np = freq_nparts(f);
    b->start[0] = 1; /* entry 0 unused: `at` 0 is no list */
    for (size_t p = 0; p < np; p++) b->start[p + 1] += b->start[p];
    size_t total = b->start[np];
    if (total > UINT32_MAX) return la_error(LA_EINVAL, "near: %zu held-out shingle entries: at most 2^32 - 1", total);
    if (!(f->held_rows = la_malloc_n(total, sizeof *f->held_rows)))
        return la_error(LA_ENOMEM, "near: out of memory for %zu held-out shingle entries", total);
    f->held_rows[0] = 0;
    b->laying = 1;
    LA_TRY(la_parallel_for(nt, b->groups, 1, layout_lists, b));
    return la_parallel_for(nt, b->groups, 1, fill_lists, b);
}

/* Slots of the held-out shingles' table an item of the filter's loop. */
enum { FILTER_SLOTS_PER_ITEM = 1 << 16 };

/* The filter's loop: with two threads or more, the filter each thread but the first sets its bits
 * in (own[w]), ORed into the table's afterwards: the slots' keys set bits anywhere in the filter,
 * and threads setting bits of one filter (atomically) took each other's cache lines. */
typedef struct filter_job {
    near_ctx *c;
    uint64_t **own;
} filter_job;

/* The keys of slots [begin, end) of the held-out shingles' table into the worker's filter. */
static la_status filter_slots(void *ctx, int worker, size_t begin, size_t end)
{
    const filter_job *j = ctx;
    const freq_table *f = &j->c->freq;
    uint64_t *filter = la_bits_of(f->filter, j->own, worker);
    for (size_t i = begin; i < end; i++)
        if (f->slot[i].n) la_bit_set(filter, freq_bit(f, f->slot[i].key));
    return LA_OK;
}

/* The frequency table of the held-out rows' shingles, counting the held-out rows (signed before
 * this), with the listed rows of each; the other side's rows add their counts as they are signed.
 * With the shingle sets kept, the parts of the table fill on every thread; without, on one (each
 * thread would shingle every held-out row again). The table is the same at any thread count. */
static la_status build_freq(near_ctx *c, int with_lsh)
{
    freq_table *f = &c->freq;
    size_t most = 0;
    for (size_t k = 0; k < c->nhrows; k++) {
        size_t i = c->hrows[k];
        if (c->r[i].norm) most += c->nsh[i] ? c->nsh[i] : la_shingle_bound(c->r[i].norm_len);
    }
    /* at most 80 % full even if every shingle were distinct; most repeat across rows */
    size_t cap = 16;
    while (cap < most + most / 4) cap <<= 1;
    if (cap > UINT32_MAX) return la_error(LA_EINVAL, "near: %zu held-out shingles: more than a table of 2^31 slots holds", most);
    freq_build *b = calloc(1, sizeof *b);
    size_t nheld = c->nhrows;
    uint32_t *held = c->hrows;
    la_status st = b ? LA_OK : la_error(LA_ENOMEM, "near: out of memory for the held-out shingles' table");
    /* in parts; should one run out of room (the keys are hashes: they do not crowd one part), in one */
    for (int parts = 1; st == LA_OK && parts >= 0; parts--) {
        if ((st = freq_alloc(f, cap, parts)) != LA_OK) break;
        if (b->groups) groups_free(b);
        split_free(b);
        *b = (freq_build){.c = c, .lsh_items = with_lsh ? 1 : 0, .held = held, .nheld = nheld};
        /* the LSH table an item of the same loop, not a thread of its own: a third thread on two
         * CPUs was left sharing one of them with a worker for up to 10 ms while the other idled.
         * With two threads or more, four groups a thread, the rows' shingles split among them
         * first: with one group a thread, the LSH item and the groups were three like items on two
         * threads, and one thread idled through the last of them; with two, each group filtered
         * every set and one worker still ended ~4 ms after the other. */
        b->groups = !c->set ? 1 : c->nthreads > 1 ? 4 * (size_t)c->nthreads : 1;
        if (b->groups > freq_nparts(f)) b->groups = freq_nparts(f);
        /* the LSH item first (the longest), then the split's, then the groups' */
        split_begin(b);
        st = la_parallel_for(c->nthreads, b->lsh_items + b->split_items + b->groups, 1, count_held, b);
        if (st == LA_OK) with_lsh = 0; /* built, should the table be filled again in one part */
        if (st == LA_OK && !atomic_load(&b->overflow)) break;
    }
    if (b) split_free(b);
    if (st == LA_OK && atomic_load(&b->overflow)) st = la_error(LA_EINTERNAL, "near: the held-out shingles' table is full");
    if (st == LA_OK) {
        for (size_t p = 0; p < freq_nparts(f); p++) f->keys += b->fill[p];
        st = fit_freq(b);
    }
    if (st == LA_OK) st = list_held_rows(b);
    if (b) groups_free(b);
    free(b);
    LA_TRY(st);
    f->filter_log2 = FILTER_MIN_LOG2;
    while (f->filter_log2 < 40 && ((size_t)1 << f->filter_log2) < f->keys * FILTER_BITS_PER_ENTRY) f->filter_log2++;
    size_t words = (size_t)1 << (f->filter_log2 - 6);
    f->filter = la_zalloc_n(words, sizeof *f->filter);
    if (!f->filter) return la_error(LA_ENOMEM, "near: out of memory for the filter of %zu held-out shingles", f->keys);
    /* copies only where the loop has more than one item */
    int nt = c->nthreads, failed;
    filter_job fj = {c, la_bits_copies(f->mask + 1 > FILTER_SLOTS_PER_ITEM ? nt : 1, words, &failed)};
    if (failed) return la_error(LA_ENOMEM, "near: out of memory for the filter of %zu held-out shingles", f->keys);
    st = la_parallel_for(nt, f->mask + 1, FILTER_SLOTS_PER_ITEM, filter_slots, &fj);
    la_bits_merge(f->filter, fj.own, nt, words, st == LA_OK);
    return st;
}

static void freq_free(freq_table *f)
{
    free(f->slot);
    free(f->filter);
    free(f->held_rows);
    memset(f, 0, sizeof *f);
}

/* ---- phase 1: signatures ----------------------------------------------------------------------- */

/* Row i's distinct shingles u[0..n) into the frequencies (fused: an other-side row into the
 * held-out shingles' table; with --within every row into the sketch). */
static la_status count_frequencies(near_ctx *c, int worker, size_t i, const uint64_t *u, size_t n)
{
    if (c->fused) {
        if (c->pass_side == SIDE_OTHER &&
            (c->shared[i] = freq_count(c, u, n, &c->sc[worker].pass, &c->sc[worker].passcap)) == UINT32_MAX)
            return la_error(LA_ENOMEM, "near: out of memory counting shingles");
    } else if (c->contain) {
        for (size_t k = 0; k < n; k++) {
            /* the counters are a table far larger than the cache: start the misses early */
            if (k + PROBE_AHEAD < n) LA_PREFETCH_WRITE(&c->df[df_slot(u[k + PROBE_AHEAD])]);
            atomic_fetch_add_explicit(&c->df[df_slot(u[k])], 1, memory_order_relaxed);
        }
    }
    return LA_OK;
}

/* One row of the batch: its shingle multiset into mh at its slot (in text order), the sorted
 * distinct set into uh at the same slot, the distinct count into nsh and the distinct set into the
 * frequencies (fused: an other-side row into the held-out shingles' table; with --within every row
 * into the sketch). */
static la_status shingle_batch(void *ctx, int worker, size_t begin, size_t end)
{
    near_ctx *c = ctx;
    scratch *s = &c->sc[worker];
    for (size_t j = begin; j < end; j++) {
        size_t i = c->brow[j];
        c->nsh[i] = 0;
        c->mcnt[j] = 0;
        int skip = c->p.skip && c->p.skip[i];
        if (!c->r[i].norm || (skip && !c->contain)) continue;
        uint64_t *m = c->mh + c->slot[j], *u = c->uh + c->slot[j];
        size_t cap = (size_t)(c->slot[j + 1] - c->slot[j]);
        size_t n = la_cpu_shingle(c->r[i].norm, c->r[i].norm_len, c->p.shingle_kind, c->p.shingle_size, m, cap);
        c->mcnt[j] = (uint32_t)n;
        if (!dtab_room(s, n)) return la_error(LA_ENOMEM, "near: out of memory signing row %zu", i);
        n = la_cpu_shingle_distinct(m, n, u, s->dtab);
        c->nsh[i] = (uint32_t)n;
        LA_TRY(count_frequencies(c, worker, i, u, n));
        if (skip) c->nsh[i] = 0, c->mcnt[j] = 0; /* counted in the frequencies, and no further */
    }
    phase_adds(c, end - begin);
    return LA_OK;
}

/* Pack the batch's shingles from their slots into CSR (moff for mh, uoff for uh), in place. */
static void pack_batch(near_ctx *c)
{
    size_t nb = c->nb;
    uint64_t mw = 0, uw = 0;
    for (size_t j = 0; j < nb; j++) {
        size_t i = c->brow[j], nm = c->mcnt[j], nu = c->nsh[i];
        if (nm) memmove(c->mh + mw, c->mh + c->slot[j], nm * sizeof *c->mh);
        if (nu) memmove(c->uh + uw, c->uh + c->slot[j], nu * sizeof *c->uh);
        c->moff[j] = mw;
        c->uoff[j] = uw;
        mw += nm;
        uw += nu;
    }
    c->moff[nb] = mw;
    c->uoff[nb] = uw;
}

/* Room in the set cache for the batch's `add` more distinct shingles; past p.set_cache_bytes the
 * cache is given up (every phase then rebuilds the sets from the text, with the same result), and
 * *kept is 0. */
static la_status set_room(near_ctx *c, size_t add, int *kept)
{
    size_t nb = c->nb, used = c->set_used;
    *kept = 0;
    for (size_t j = 0; j < nb; j++) c->text_done += c->r[c->brow[j]].norm_len;
    /* the sets so far per byte of text, times every byte to come: a cache that would be given up
     * later is given up now, before it has taken its share of memory */
    double expect = c->text_done ? (double)(used + add) * ((double)c->text_total / (double)c->text_done) : 0.0;
    if ((used + add) * sizeof *c->set > c->p.set_cache_bytes || expect * (double)sizeof *c->set > (double)c->p.set_cache_bytes) {
        free(c->set);
        free(c->set_start);
        c->set = c->set_start = NULL;
        return LA_OK;
    }
    if (used + add > c->set_cap) {
        size_t cap = c->set_cap * 2 > used + add ? c->set_cap * 2 : used + add;
        uint64_t *v = la_realloc_n(c->set, cap, sizeof *v);
        if (!v) return la_error(LA_ENOMEM, "near: out of memory keeping %zu shingles", used + add);
        c->set = v;
        c->set_cap = cap;
    }
    *kept = 1;
    return LA_OK;
}

/* Append the packed batch's distinct sets to the set cache. */
static la_status keep_sets(near_ctx *c)
{
    if (!c->set) return LA_OK;
    size_t nb = c->nb, used = c->set_used, add = (size_t)c->uoff[nb];
    int kept;
    LA_TRY(set_room(c, add, &kept));
    if (!kept) return LA_OK;
    if (add) memcpy(c->set + used, c->uh, add * sizeof *c->set);
    for (size_t j = 0; j < nb; j++) c->set_start[c->brow[j]] = used + c->uoff[j];
    c->set_used = used + add;
    return LA_OK;
}

/* Row i's band keys (bands of them): its key slot, like samp_of. */
static uint64_t *keys_of(const near_ctx *c, size_t i)
{
    return c->keys + (size_t)(c->sidx ? c->sidx[i] : i) * (size_t)c->bands;
}

/* The buffers of a signature batch, once for every pass; and the set cache, a cache only. */
static la_status batch_alloc(near_ctx *c)
{
    int host = c->x->be->host_loops;
    size_t n = c->n, cap = host ? BATCH_SLOTS_HOST : BATCH_SLOTS_DEVICE;
    size_t most = 0;
    for (size_t i = 0; i < n; i++) {
        if (c->r[i].norm && la_shingle_bound(c->r[i].norm_len) > most) most = la_shingle_bound(c->r[i].norm_len);
        c->text_total += c->r[i].norm_len;
    }
    if (cap < most) cap = most;
    size_t rows_cap = n < 65536 ? n : 65536;
    if (!rows_cap) rows_cap = 1;
    c->cap = cap;
    c->rows_cap = rows_cap;
    /* a host-loop backend's workers keep the batch's shingles in their scratch (sign_chunk); a
     * device's batches need mh and uh, and should the device fail, the CPU's batches after it uwk */
    c->uwk = malloc(rows_cap * sizeof *c->uwk);
    if (!host) {
        c->mh = malloc((cap ? cap : 1) * sizeof *c->mh);
        c->uh = malloc((cap ? cap : 1) * sizeof *c->uh);
    }
    c->brow = malloc(rows_cap * sizeof *c->brow);
    c->slot = malloc((rows_cap + 1) * sizeof *c->slot);
    c->moff = malloc((rows_cap + 1) * sizeof *c->moff);
    c->uoff = malloc((rows_cap + 1) * sizeof *c->uoff);
    c->mcnt = malloc((rows_cap + 1) * sizeof *c->mcnt);
    c->bsimh = malloc(rows_cap * sizeof *c->bsimh);
    c->bkeys = la_malloc_nm(rows_cap, (size_t)c->bands, sizeof *c->bkeys);
    if (!c->uwk || (!host && (!c->mh || !c->uh)) || !c->brow || !c->slot || !c->moff || !c->uoff || !c->mcnt ||
        !c->bsimh || !c->bkeys)
        return la_error(LA_ENOMEM, "near: out of memory for a signature batch of %zu shingles", cap);
    if (c->p.set_cache_bytes) {
        c->set_start = la_calloc_n(n ? n : 1, sizeof *c->set_start);
        c->set_cap = cap;
        c->set = la_malloc_n(c->set_cap, sizeof *c->set);
        if (!c->set || !c->set_start) { /* a cache only: go on without it */
            free(c->set);
            free(c->set_start);
            c->set = c->set_start = NULL;
        }
    }
    return LA_OK;
}

/* The fused path: each other-side row of the batch looks its band keys up in the held-out table
 * as soon as they are made, so they are never kept. */
static la_status probe_batch_keys(void *ctx, int worker, size_t begin, size_t end)
{
    near_ctx *c = ctx;
    scratch *s = &c->sc[worker];
    for (size_t j = begin; j < end; j++) {
        uint32_t x = c->brow[j];
        if (!c->nsh[x]) continue;
        const uint64_t *keys = c->bkeys + j * (size_t)c->bands;
        for (int b = 0; b < c->bands; b++) la_buckets_prefetch(c->lsh_h, keys[b]);
        for (int b = 0; b < c->bands; b++) {
            const la_bucket_entry *f;
            size_t k = la_buckets_find(c->lsh_h, keys[b], &f);
            for (size_t q = 0; q < k; q++)
                if (!emit(c, s, x, f[q].row, SRC_LSH)) return la_error(LA_ENOMEM, "near: out of memory collecting candidates");
        }
    }
    return LA_OK;
}

/* ---- signing on a host-loop backend ----
 * The batch's rows in chunks, each taken by one worker from shingles to band keys while its
 * shingles are in the cache: the chunk's rows are shingled one after another into the worker's
 * buffers (each row given room for its bound), so the chunk is CSR by itself and the backend's
 * ops run on it as they would on a packed batch. Then the rows' distinct sets join the set cache
 * and their keys are kept or looked up (store_batch), in parallel again. The same ops on the same
 * sets as the batch path: the same signatures, SimHashes and keys. */

enum { OP_SIMHASH, OP_MINHASH, OP_KEYS };

static la_status chunk_scratch(near_ctx *c, scratch *s, size_t rows)
{
    if (rows <= s->chunk_cap) return LA_OK;
    free(s->coff_m);
    free(s->coff_u);
    free(s->csig);
    s->coff_m = la_malloc_n(rows + 1, sizeof *s->coff_m);
    s->coff_u = la_malloc_n(rows + 1, sizeof *s->coff_u);
    s->csig = la_malloc_nm(rows, (size_t)c->K, sizeof *s->csig);
    s->chunk_cap = s->coff_m && s->coff_u && s->csig ? rows : 0;
    return s->chunk_cap ? LA_OK : la_error(LA_ENOMEM, "near: out of memory signing %zu rows", rows);
}

static la_status sign_chunk(void *ctx, int worker, size_t begin, size_t end)
{
    near_ctx *c = ctx;
    scratch *s = &c->sc[worker];
    const la_backend *be = c->x->be;
    size_t nr = end - begin;
    LA_TRY(chunk_scratch(c, s, nr));
    /* the shingles in the worker's own buffers, packed: the multisets from the start of one that
     * every chunk reuses (SimHash reads them here and nothing after it), the distinct sets after the
     * worker's last chunk of the batch (store_batch copies them from there). Buffers reused batch
     * after batch stay in the cache, where chunks written at their own places in the batch's (each
     * as far from the last as its rows' bounds) took fresh lines and pages. */
    size_t bound = (size_t)(c->slot[end] - c->slot[begin]) + 1; /* never a NULL buffer: the ops offset it */
    if (!grow((void **)&s->cmh, &s->cmhcap, bound, sizeof *s->cmh) ||
        !grow((void **)&s->cuh, &s->cuhcap, s->cuh_used + bound, sizeof *s->cuh))
        return la_error(LA_ENOMEM, "near: out of memory signing %zu rows", nr);
    uint64_t mpos = 0, upos = s->cuh_used;
    for (size_t j = begin; j < end; j++) {
        size_t i = c->brow[j];
        s->coff_m[j - begin] = mpos;
        s->coff_u[j - begin] = upos;
        c->uoff[j] = upos;
        c->uwk[j] = (uint16_t)worker;
        c->nsh[i] = 0;
        c->mcnt[j] = 0;
        int skip = c->p.skip && c->p.skip[i];
        if (!c->r[i].norm || (skip && !c->contain)) continue;
        uint64_t *m = s->cmh + mpos, *u = s->cuh + upos;
        size_t cap = (size_t)(c->slot[j + 1] - c->slot[begin]) - mpos;
        size_t n = la_cpu_shingle(c->r[i].norm, c->r[i].norm_len, c->p.shingle_kind, c->p.shingle_size, m, cap);
        size_t nm = n;
        /* the distinct set, without sorting the multiset (SimHash counts it in any order) */
        if (!dtab_room(s, n)) return la_error(LA_ENOMEM, "near: out of memory signing row %zu", i);
        n = la_cpu_shingle_distinct(m, n, u, s->dtab);
        LA_TRY(count_frequencies(c, worker, i, u, n));
        if (skip) continue; /* counted in the frequencies, and no further */
        c->nsh[i] = (uint32_t)n;
        c->mcnt[j] = (uint32_t)nm;
        mpos += nm;
        upos += n;
    }
    s->coff_m[nr] = mpos;
    s->coff_u[nr] = upos;
    s->cuh_used = upos;
    double t0 = la_now();
    LA_TRY(be->simhash(be, s->cmh, s->coff_m, nr, c->bsimh + begin));
    double t1 = la_now();
    LA_TRY(be->minhash(be, s->cuh, s->coff_u, nr, c->K, s->csig));
    double t2 = la_now();
    LA_TRY(be->lsh_keys(be, s->csig, nr, c->K, c->bands, c->rpb, c->bkeys + begin * (size_t)c->bands));
    double t3 = la_now();
    s->op_s[OP_SIMHASH] += t1 - t0;
    s->op_s[OP_MINHASH] += t2 - t1;
    s->op_s[OP_KEYS] += t3 - t2;
    phase_adds(c, nr);
    return LA_OK;
}

/* A signed batch's rows: SimHash, distinct set into the set cache (at set_start), keys kept or
 * looked up in the held-out LSH table. */
static la_status store_batch(void *ctx, int worker, size_t begin, size_t end)
{
    near_ctx *c = ctx;
    if (c->set && end > begin) {
        /* the item's sets are one run of the cache (place_sets): its fresh pages faulted in with one
         * call, on this worker, rather than one fault a page as the copies reach them */
        uint32_t first = c->brow[begin], last = c->brow[end - 1];
        size_t from = c->set_start[first], to = c->set_start[last] + c->nsh[last];
        if (to > from) la_populate(c->set + from, (to - from) * sizeof *c->set);
    }
    for (size_t j = begin; j < end; j++) {
        uint32_t i = c->brow[j];
        c->simh[i] = c->bsimh[j];
        if (c->set && c->nsh[i])
            memcpy(c->set + c->set_start[i], c->sc[c->uwk[j]].cuh + c->uoff[j], c->nsh[i] * sizeof *c->set);
        if (!c->probe_signed)
            memcpy(keys_of(c, i), c->bkeys + j * (size_t)c->bands, (size_t)c->bands * sizeof *c->bkeys);
    }
    return c->probe_signed ? probe_batch_keys(ctx, worker, begin, end) : LA_OK;
}

/* Where each of the batch's distinct sets will start in the set cache (store_batch copies them). */
static la_status place_sets(near_ctx *c)
{
    if (!c->set) return LA_OK;
    size_t nb = c->nb, used = c->set_used, add = 0;
    for (size_t j = 0; j < nb; j++) add += c->nsh[c->brow[j]];
    int kept;
    LA_TRY(set_room(c, add, &kept));
    if (!kept) return LA_OK;
    for (size_t j = 0; j < nb; j++) {
        c->set_start[c->brow[j]] = used;
        used += c->nsh[c->brow[j]];
    }
    c->set_used = used;
    return LA_OK;
}

/* A signing chunk at two threads or more takes a share of the batch's rows left (guided), at most
 * this many times the grain: each worker's shingle buffers grow to its largest chunk, and chunks of
 * a quarter of a batch took 1,000-1,500 more page faults a run, and left the allocator's state such
 * that grading's sets took 900 more afterwards. */
enum { GUIDED_MOST = 4 };

static la_status sign_batch_host(near_ctx *c)
{
    size_t nb = c->nb;
    size_t grain = la_parallel_grain(c->nthreads, nb, 256);
    for (int w = 0; w < c->nthreads; w++) {
        memset(c->sc[w].op_s, 0, sizeof c->sc[w].op_s);
        c->sc[w].cuh_used = 0;
    }
    double t0 = la_now();
    LA_TRY(la_parallel_for_guided(c->nthreads, nb, grain, GUIDED_MOST * grain, sign_chunk, c));
    double wall = la_now() - t0;
    /* the stages' seconds: the workers' time in each op over the workers, at most the loop's */
    double op[3] = {0, 0, 0};
    for (int w = 0; w < c->nthreads; w++)
        for (int k = 0; k < 3; k++) op[k] += c->sc[w].op_s[k];
    int workers = c->nthreads < 1 ? 1 : c->nthreads;
    size_t chunks = (nb + grain - 1) / grain;
    if ((size_t)workers > chunks) workers = (int)chunks;
    double shingles = 0, distinct = 0;
    for (size_t j = 0; j < nb; j++) {
        shingles += c->mcnt[j];
        distinct += c->nsh[c->brow[j]];
    }
    for (int k = 0; k < 3; k++) {
        op[k] /= workers;
        if (op[k] > wall) op[k] = wall;
    }
    LA_TRY(la_exec_log_host(c->x, "near_simhash", (double)nb, shingles * 8, op[OP_SIMHASH]));
    LA_TRY(la_exec_log_host(c->x, "near_signatures", (double)nb, distinct * 8, op[OP_MINHASH]));
    LA_TRY(la_exec_log_host(c->x, "near_band_keys", (double)nb, (double)nb * c->K * 4, op[OP_KEYS]));
    LA_TRY(place_sets(c));
    return la_parallel_for_guided(c->nthreads, nb, grain, GUIDED_MOST * grain, store_batch, c);
}

/* Signatures of the rows of the pass (c->pass_side), batch by batch: shingles on the CPU, SimHash,
 * MinHash and band keys on the backend (a host-loop backend's chunk by chunk, sign_batch_host). A
 * row's keys are kept in its key slot, or with probe_signed looked up in the held-out LSH table
 * and dropped. */
static la_status sign_rows(near_ctx *c)
{
    size_t cap = c->cap, rows_cap = c->rows_cap;
    const uint32_t *list;
    size_t n = pass_rows(c, &list);
    uint32_t *sig = NULL; /* a device batch's signatures */
    la_status st = LA_OK;
    for (size_t k = 0; k < n && st == LA_OK;) {
        size_t used = 0;
        c->nb = 0;
        c->slot[0] = 0;
        for (; k < n && c->nb < rows_cap; k++) {
            size_t i = row_at(list, k);
            if (!in_pass(c, i)) continue;
            size_t need = c->r[i].norm ? la_shingle_bound(c->r[i].norm_len) : 0;
            if (used + need > cap) break;
            used += need;
            c->brow[c->nb++] = (uint32_t)i;
            c->slot[c->nb] = used;
        }
        size_t nb = c->nb;
        if (!nb) break;
        if (c->x->be->host_loops) {
            st = sign_batch_host(c);
            continue;
        }
        if (!sig && !(sig = la_malloc_nm(rows_cap, (size_t)c->K, sizeof *sig))) {
            st = la_error(LA_ENOMEM, "near: out of memory for the signatures of %zu rows", rows_cap);
            break;
        }
        st = la_parallel_for(c->nthreads, nb, la_parallel_grain(c->nthreads, nb, 256), shingle_batch, c);
        if (st != LA_OK) break;
        pack_batch(c);
        st = keep_sets(c);
        if (st == LA_OK) st = la_exec_simhash(c->x, "near_simhash", c->mh, c->moff, nb, c->bsimh);
        if (st == LA_OK) st = la_exec_minhash(c->x, "near_signatures", c->uh, c->uoff, nb, c->K, sig);
        /* the signatures of a batch live only until their band keys are made: 512 bytes a row
         * at K = 128 that a million-row corpus does not keep (verification signs a reported
         * pair's two sets again, from the sets it has in hand) */
        if (st == LA_OK) st = la_exec_lsh_keys(c->x, "near_band_keys", sig, nb, c->K, c->bands, c->rpb, c->bkeys);
        if (st != LA_OK) break;
        for (size_t j = 0; j < nb; j++) c->simh[c->brow[j]] = c->bsimh[j];
        if (c->probe_signed)
            st = la_parallel_for(c->nthreads, nb, la_parallel_grain(c->nthreads, nb, 256), probe_batch_keys, c);
        else
            for (size_t j = 0; j < nb; j++)
                memcpy(keys_of(c, c->brow[j]), c->bkeys + j * (size_t)c->bands, (size_t)c->bands * sizeof *c->bkeys);
    }
    free(sig);
    return st;
}

/* Row i's sample slot (m hashes). */
static uint64_t *samp_of(const near_ctx *c, size_t i)
{
    return c->samp + (size_t)(c->sidx ? c->sidx[i] : i) * (size_t)c->m;
}

/* Containment sample of each row: its m rarest shingles among those seen in at least one other row
 * (ties broken by hash value). A contained text's shingles all occur in its host, so these are as
 * likely to be hit as any, while common shingles, which would hit unrelated hosts, are avoided. A row
 * whose shared shingles are fewer than threshold * its size cannot be the contained side of any pair
 * and gets no sample. */
static void sample_set(near_ctx *c, size_t i, const uint64_t *sh, size_t n, uint64_t *out)
{
    uint64_t best_h[MAX_SAMPLE];
    uint32_t best_df[MAX_SAMPLE];
    size_t nb = 0, shared = 0, m = (size_t)c->m;
    c->nsamp[i] = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t h = sh[k];
        freq_prefetch_of(c, sh, k, n);
        uint32_t d = freq_of(c, h);
        if (d < 2) continue;
        shared++;
        /* the m least by (df, hash): the set comes in no particular order */
        if (nb == m && (d > best_df[nb - 1] || (d == best_df[nb - 1] && h > best_h[nb - 1]))) continue;
        size_t j = nb < m ? nb++ : nb - 1;
        while (j > 0 && (best_df[j - 1] > d || (best_df[j - 1] == d && best_h[j - 1] > h))) {
            best_df[j] = best_df[j - 1];
            best_h[j] = best_h[j - 1];
            j--;
        }
        best_df[j] = d;
        best_h[j] = h;
    }
    if ((double)shared < c->p.containment_threshold * (double)n) return;
    memcpy(out, best_h, nb * sizeof *best_h);
    c->nsamp[i] = (uint32_t)nb;
}

/* Row i's distinct shingles, *n of them: from the set cache when it holds them, else built in *buf
 * (the same values in the same order). NULL when out of memory. */
static const uint64_t *distinct_set(const near_ctx *c, scratch *s, size_t i, uint64_t **buf, size_t *cap, size_t *n)
{
    if (c->set) {
        *n = c->nsh[i];
        return c->set + c->set_start[i];
    }
    size_t m = shingle_row(c, s, i, buf, cap);
    if (m == (size_t)-1) return NULL;
    *n = m;
    return *buf;
}

/* Whether a pass over the rows takes row i: every row, or only one side's (c->pass_side). */
static int in_pass(const near_ctx *c, size_t i)
{
    return c->pass_side < 0 || (c->r[i].part == c->held) == (c->pass_side == SIDE_HELD);
}

static la_status sample_rows(void *ctx, int worker, size_t begin, size_t end)
{
    near_ctx *c = ctx;
    scratch *s = &c->sc[worker];
    for (size_t i = begin; i < end; i++) {
        if (!in_pass(c, i)) continue;
        c->nsamp[i] = 0;
        if (c->nsh[i] < (uint32_t)c->p.containment_min_shingles) continue;
        size_t n;
        const uint64_t *sh = distinct_set(c, s, i, &s->sh, &s->shcap, &n);
        if (!sh) return la_error(LA_ENOMEM, "near: out of memory sampling rows");
        sample_set(c, i, sh, n, samp_of(c, i));
    }
    return LA_OK;
}

/* ---- phase 2: tables --------------------------------------------------------------------------- */

static uint32_t con_aux(const near_ctx *c, uint32_t i)
{
    uint32_t nsh = c->nsh[i] < CON_NSH_MASK ? c->nsh[i] : CON_NSH_MASK;
    return c->need[c->nsamp[i]] << CON_NSH_BITS | nsh;
}

/* A bucket table over n entries (owned), sorted by key on the backend; with `con`, each entry's aux
 * then holds what a containment hit needs of its row (con_aux). */
static la_status bucket_table(near_ctx *c, la_bucket_entry *e, size_t n, int con, la_buckets **out)
{
    la_status s = la_exec_sort_keys(c->x, "near_buckets", e, n);
    if (s != LA_OK) {
        free(e);
        return s;
    }
    for (size_t k = 0; con && k < n; k++) e[k].aux = con_aux(c, e[k].row);
    return la_buckets_new_sorted(e, n, out);
}

static int on_side(const near_ctx *c, size_t i, side sd)
{
    return c->nsh[i] && ((c->r[i].part == c->held) == (sd == SIDE_HELD));
}

static la_status build_lsh(near_ctx *c, side sd, la_buckets **out)
{
    const uint32_t *list;
    size_t rows = side_rows(c, sd, &list), n = 0;
    for (size_t k = 0; k < rows; k++) n += on_side(c, row_at(list, k), sd) ? (size_t)c->bands : 0;
    la_bucket_entry *e = la_malloc_n(n, sizeof *e);
    if (!e) return la_error(LA_ENOMEM, "out of memory for %zu LSH bucket entries", n);
    size_t w = 0;
    for (size_t k = 0; k < rows; k++) {
        size_t i = row_at(list, k);
        if (!on_side(c, i, sd)) continue;
        const uint64_t *keys = keys_of(c, i);
        for (int j = 0; j < c->bands; j++) e[w++] = (la_bucket_entry){.key = keys[j], .row = (uint32_t)i};
    }
    return bucket_table(c, e, n, 0, out);
}

/* The held-out side's LSH table and (fused) its shingles' frequency table. They do not depend on
 * each other: on the host, the LSH table (its sort runs on one thread: 11 ms for the 210k band keys
 * at 50k x 5k) is the first item of the loop that fills the frequency table's parts, so another
 * thread fills parts while it is built. The same tables either way. */
static la_status held_tables(near_ctx *c)
{
    if (!c->fused) return build_lsh(c, SIDE_HELD, &c->lsh_h);
    if (!c->x->be->host_loops) {
        LA_TRY(build_lsh(c, SIDE_HELD, &c->lsh_h));
        return build_freq(c, 0);
    }
    return build_freq(c, 1);
}

static la_status build_sim(near_ctx *c, side sd, la_buckets **out)
{
    const uint32_t *list;
    size_t rows = side_rows(c, sd, &list), n = 0;
    for (size_t k = 0; k < rows; k++) n += on_side(c, row_at(list, k), sd) ? (size_t)c->blocks : 0;
    la_bucket_entry *e = la_malloc_n(n, sizeof *e);
    if (!e) return la_error(LA_ENOMEM, "out of memory for %zu SimHash block entries", n);
    size_t w = 0;
    for (size_t k = 0; k < rows; k++) {
        size_t i = row_at(list, k);
        if (!on_side(c, i, sd)) continue;
        for (int j = 0; j < c->blocks; j++) e[w++] = (la_bucket_entry){.key = block_key(j, block_value(c, c->simh[i], j)), .row = (uint32_t)i};
    }
    return bucket_table(c, e, n, 0, out);
}

/* How many of a sample of ns shingles (rarest first) the containment tables list. A row needs
 * need[ns] of its sample in a host, so a host holds at least one of any ns - need[ns] + 1 of them
 * (were it to hold none, it would hold at most need[ns] - 1): the tables list only the rarest that
 * many, whose buckets are the smallest, and a row one of them hits has its whole sample counted in
 * the host's shingles (probe_row). The same pairs as listing every sample shingle and counting the
 * hits, with far fewer entries read where samples share shingles: rows drawn from one vocabulary
 * have their samples' shingles in many rows' samples (the generator's 200k x 20k rows: 190.7 M
 * entries read when every sample shingle was listed, 1.1 M now, and 1.04 M whole samples counted). */
static uint32_t con_prefix(const near_ctx *c, uint32_t ns) { return ns ? ns - c->need[ns] + 1 : 0; }

static la_status build_con(near_ctx *c, side sd, la_buckets **out)
{
    const uint32_t *list;
    size_t rows = side_rows(c, sd, &list), n = 0;
    for (size_t k = 0; k < rows; k++)
        if (on_side(c, row_at(list, k), sd)) n += con_prefix(c, c->nsamp[row_at(list, k)]);
    la_bucket_entry *e = la_malloc_n(n, sizeof *e);
    if (!e) return la_error(LA_ENOMEM, "out of memory for %zu containment sample entries", n);
    size_t w = 0;
    for (size_t k = 0; k < rows; k++) {
        size_t i = row_at(list, k);
        if (!on_side(c, i, sd)) continue;
        const uint64_t *smp = samp_of(c, i);
        for (size_t j = 0; j < con_prefix(c, c->nsamp[i]); j++) e[w++] = (la_bucket_entry){.key = smp[j], .row = (uint32_t)i};
    }
    return bucket_table(c, e, n, 1, out);
}

static size_t filter_bit(const near_ctx *c, uint64_t h) { return (size_t)(h >> (64 - c->filter_log2)); }

static int filter_has(const near_ctx *c, uint64_t h)
{
    size_t b = filter_bit(c, h);
    return (int)(c->filter[b >> 6] >> (b & 63) & 1);
}

/* The filter of the containment tables' shingles of the rows of the pass (c->pass_side, con_prefix
 * of each sample): a shingle whose bit is clear is listed for no row there, so the probe skips it
 * without touching the tables (a few MB in place of tens). */
static la_status build_filter(near_ctx *c)
{
    const uint32_t *list;
    size_t rows = pass_rows(c, &list), entries = 0;
    for (size_t k = 0; k < rows; k++) entries += in_pass(c, row_at(list, k)) ? con_prefix(c, c->nsamp[row_at(list, k)]) : 0;
    free(c->filter);
    c->filter_log2 = FILTER_MIN_LOG2;
    while (c->filter_log2 < 40 && ((size_t)1 << c->filter_log2) < entries * FILTER_BITS_PER_ENTRY) c->filter_log2++;
    c->filter = la_zalloc_n((size_t)1 << (c->filter_log2 - 6), sizeof *c->filter);
    if (!c->filter) return la_error(LA_ENOMEM, "near: out of memory for the filter of %zu containment samples", entries);
    for (size_t k = 0; k < rows; k++) {
        size_t i = row_at(list, k);
        for (size_t j = 0; in_pass(c, i) && j < con_prefix(c, c->nsamp[i]); j++) {
            size_t b = filter_bit(c, samp_of(c, i)[j]);
            c->filter[b >> 6] |= 1ull << (b & 63);
        }
    }
    return LA_OK;
}

/* ---- phase 3: candidates ----------------------------------------------------------------------- */

/* Orientation: b is the held-out row across the boundary, the larger index within a partition. */
static int emit(near_ctx *c, scratch *s, uint32_t x, uint32_t y, uint32_t src)
{
    int xh = c->r[x].part == c->held, yh = c->r[y].part == c->held;
    if (xh != yh) return xh ? push_cand(s, y, x, src) : push_cand(s, x, y, src);
    return x < y ? push_cand(s, x, y, src) : push_cand(s, y, x, src);
}

/* Would (x, y) be a pair at all? Across the boundary, or inside one partition with `within`. */
static int pairable(const near_ctx *c, uint32_t x, uint32_t y)
{
    if (x == y) return 0;
    int xh = c->r[x].part == c->held, yh = c->r[y].part == c->held;
    if (xh != yh) return 1;
    return c->p.within && c->r[x].part == c->r[y].part;
}

/* Room for k more tallied rows: taken before a list's hits, so that tally_hit has no branch. */
static int tally_room(scratch *s, size_t k)
{
    return grow((void **)&s->hits, &s->hitcap, s->nhits + k, sizeof *s->hits);
}

/* A containment hit on row y, which needs `need` hits, when `ok`: counted per row in place of
 * sorting the hits (linear in them). The row is listed on its first hit. Branch-free: whether a
 * hit is a row's first follows no pattern, and a branch on it was mispredicted in a good share
 * of the probe's time; the entry is written whatever, and kept by counting it. */
static void tally_hit(scratch *s, uint32_t y, uint32_t need, int ok)
{
    uint8_t h = s->nhit[y];
    s->hits[s->nhits] = (con_hit){y, need};
    s->nhits += (size_t)(ok & (h == 0));
    s->nhit[y] = (uint8_t)(h + (ok & (h < UINT8_MAX)));
}

/* Pair x with every tallied row that got the hits it needs (emit orients the pair), and clear the
 * tally for the next probing row. Returns 0 when out of memory. */
static int emit_tallied(near_ctx *c, scratch *s, uint32_t x)
{
    int ok = 1;
    for (size_t i = 0; i < s->nhits; i++) {
        const con_hit *h = &s->hits[i];
        if (ok && s->nhit[h->row] >= h->need && !emit(c, s, x, h->row, SRC_CON)) ok = 0;
        s->nhit[h->row] = 0;
    }
    s->nhits = 0;
    return ok;
}

/* Row x probes the tables of the other side. sh[0 .. nsh_x): its distinct shingles when the
 * caller has them, else sh is NULL and the containment probe gets them. Returns 0 when out of
 * memory. */
static int probe_row(near_ctx *c, scratch *s, uint32_t x, const uint64_t *sh, size_t nsh_x)
{
    int xh = c->r[x].part == c->held;
    /* Symmetric keys (bands, blocks): other rows probe the held-out table; with `within`, each row
     * also probes its own side's table and keeps partners with a larger index. */
    /* (across the boundary only, the other side's rows probed the LSH table as they were signed) */
    la_buckets *lsh[2] = {xh || c->across ? NULL : c->lsh_h, c->p.within ? (xh ? c->lsh_h : c->lsh_o) : NULL};
    la_buckets *sim[2] = {xh ? NULL : c->sim_h, c->p.within ? (xh ? c->sim_h : c->sim_o) : NULL};
    for (int t = 0; t < 2; t++) {
        const la_bucket_entry *f;
        if (lsh[t]) {
            const uint64_t *keys = keys_of(c, x);
            for (int j = 0; j < c->bands; j++) la_buckets_prefetch(lsh[t], keys[j]);
            for (int j = 0; j < c->bands; j++) {
                size_t k = la_buckets_find(lsh[t], keys[j], &f);
                for (size_t q = 0; q < k; q++) {
                    uint32_t y = f[q].row;
                    if (t == 1 && (y <= x || !pairable(c, x, y))) continue;
                    if (!emit(c, s, x, y, SRC_LSH)) return 0;
                }
            }
        }
        if (sim[t]) {
            for (int j = 0; j < c->blocks; j++) {
                size_t k = la_buckets_find(sim[t], block_key(j, block_value(c, c->simh[x], j)), &f);
                for (size_t q = 0; q < k; q++) {
                    uint32_t y = f[q].row;
                    if (t == 1 && (y <= x || !pairable(c, x, y))) continue;
                    if (la_simhash_dist(c->simh[x], c->simh[y]) > c->p.simhash_k) continue;
                    if (!emit(c, s, x, y, SRC_SIM)) return 0;
                }
            }
        }
    }
    if (!c->contain || c->nsh[x] < (uint32_t)c->p.containment_min_shingles) return 1;

    /* Containment: x is the longer side; look every shingle of x up in the samples of the rows it
     * may contain. Both directions across the boundary, so the held-out row can be either side. */
    la_buckets *con[2] = {xh ? c->con_o : c->con_h, c->p.within ? (xh ? c->con_h : c->con_o) : NULL};
    size_t n = nsh_x;
    if (!sh && !(sh = distinct_set(c, s, x, &s->sh, &s->shcap, &n))) return 0;
    uint32_t nx = c->nsh[x];
    /* the shingles that pass the filter first (a branch-free pass over the set), then their
     * lookups, which do not depend on each other: their cache misses start PROBE_AHEAD early */
    if (!grow((void **)&s->pass, &s->passcap, n, sizeof *s->pass)) return 0;
    uint64_t *pass = s->pass;
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        pass[np] = sh[i];
        np += (size_t)filter_has(c, sh[i]);
    }
    for (size_t i = 0; i < np; i++) {
        if (i + PROBE_AHEAD < np)
            for (int t = 0; t < 2; t++)
                if (con[t]) la_buckets_prefetch(con[t], pass[i + PROBE_AHEAD]);
        for (int t = 0; t < 2; t++) {
            if (!con[t]) continue;
            const la_bucket_entry *f;
            size_t k = la_buckets_find(con[t], pass[i], &f);
            if (!tally_room(s, k)) return 0;
            for (size_t q = 0; q < k; q++) {
                uint32_t y = f[q].row, ny = f[q].aux & CON_NSH_MASK;
                if (ny == CON_NSH_MASK) ny = c->nsh[y];
                /* every row of the other side's table is across the boundary; only the own side's
                 * (with `within`) needs the check */
                if (ny > nx || (t == 1 && !pairable(c, x, y))) continue;
                tally_hit(s, y, f[q].aux >> CON_NSH_BITS, 1);
            }
        }
    }
    if (!s->nhits) return 1;
    /* the rows a listed shingle hit, their whole samples counted in x's shingles (those that pass
     * the filter hold every listed one, and the rest of a sample may be anywhere in x) */
    if (!vtab_room(s, n)) return 0;
    la_cpu_shingle_index(&s->vx, sh, n, s->vtab);
    int ok = 1;
    for (size_t i = 0; i < s->nhits; i++) {
        uint32_t y = s->hits[i].row;
        if (ok && la_cpu_shingle_index_overlap(&s->vx, samp_of(c, y), c->nsamp[y]) >= s->hits[i].need &&
            !emit(c, s, x, y, SRC_CON))
            ok = 0;
        s->nhit[y] = 0;
    }
    s->nhits = 0;
    la_cpu_shingle_index_clear(&s->vx);
    return ok;
}

/* Fused: the held-out rows that hold enough of row y's sample, y being the contained side (its
 * sample in s->smp). The unfused path finds the same pairs the other way round: each held-out row
 * looks its shingles up in a table of the other side's samples; here each sample finds the held-out
 * rows listed under its shingle in the frequency table (freq_slot.at), which stays the size of the
 * held-out side however large the other. The conditions are the same: a held-out row of at least
 * containment_min_shingles shingles and no fewer than y's, holding need[nsamp[y]] of the sample.
 * Returns 0 when out of memory. */
static int probe_held_lists(near_ctx *c, scratch *s, uint32_t y)
{
    uint32_t ns = c->nsamp[y], ny = c->nsh[y];
    if (!ns) return 1;
    /* every sample is a held-out shingle (a shingle no held-out row has counts 0 and is never
     * sampled): its slot, which sampling read a moment ago, then its list, whose misses start
     * together */
    uint32_t at[MAX_SAMPLE];
    for (uint32_t j = 0; j < ns; j++) {
        const freq_slot *fs = freq_find(&c->freq, s->smp[j]);
        at[j] = fs ? fs->at : 0;
        LA_PREFETCH(&c->freq.held_rows[at[j]]);
    }
    for (uint32_t j = 0; j < ns; j++) {
        const uint32_t *list = c->freq.held_rows + at[j];
        if (!tally_room(s, list[0])) return 0;
        for (uint32_t q = 1; q <= list[0]; q++) tally_hit(s, list[q], c->need[ns], c->nsh[list[q]] >= ny);
    }
    return emit_tallied(c, s, y);
}

static la_status find_candidates(void *ctx, int worker, size_t begin, size_t end)
{
    near_ctx *c = ctx;
    scratch *s = &c->sc[worker];
    size_t done = 0;
    for (size_t i = begin; i < end; i++) {
        if (!in_pass(c, i)) continue;
        done++;
        if (!c->nsh[i]) continue;
        /* fused: a row of the other side is sampled here, from the shingles its containment probe
         * reads anyway, instead of in a pass of its own before the tables are built */
        int have = c->sample_in_probe && c->nsh[i] >= (uint32_t)c->p.containment_min_shingles;
        /* sample_set would find too few shared shingles to sample it (those of an other-side row
         * are the ones a held-out row has, counted as it was signed): not even its set is read */
        if (have && (double)c->shared[i] < c->p.containment_threshold * (double)c->nsh[i]) have = 0;
        size_t n = 0;
        const uint64_t *sh = have ? distinct_set(c, s, i, &s->sh, &s->shcap, &n) : NULL;
        if (have && !sh) return la_error(LA_ENOMEM, "near: out of memory collecting candidates");
        if (have) sample_set(c, i, sh, n, s->smp);
        if (!probe_row(c, s, (uint32_t)i, sh, n) || (have && !probe_held_lists(c, s, (uint32_t)i)))
            return la_error(LA_ENOMEM, "near: out of memory collecting candidates");
    }
    phase_adds(c, done);
    return LA_OK;
}

/* ---- phase 4: verification --------------------------------------------------------------------- */

static la_status verify(void *ctx, int worker, size_t begin, size_t end)
{
    near_ctx *c = ctx;
    scratch *s = &c->sc[worker];
    s->cached = UINT32_MAX;
    s->sigb_row = UINT32_MAX;
    for (size_t k = begin; k < end; k++) {
        uint32_t a = (uint32_t)(c->cands[k].key & 0xffffffffu), b = (uint32_t)(c->cands[k].key >> 32);
        c->keep[k] = 0;
        if (s->cached != b) {
            /* candidates come by b: b's set is indexed once for all its candidates */
            la_cpu_shingle_index_clear(&s->vx);
            if (!(s->bset = distinct_set(c, s, b, &s->sh2, &s->sh2cap, &s->ncached)) || !vtab_room(s, s->ncached))
                return la_error(LA_ENOMEM, "near: out of memory verifying candidates");
            la_cpu_shingle_index(&s->vx, s->bset, s->ncached, s->vtab);
            s->cached = b;
        }
        size_t na, nb = s->ncached;
        const uint64_t *aset = distinct_set(c, s, a, &s->sh, &s->shcap, &na);
        if (!aset) return la_error(LA_ENOMEM, "near: out of memory verifying candidates");
        size_t inter = la_cpu_shingle_index_overlap(&s->vx, aset, na);
        size_t mn = na < nb ? na : nb;
        double jac = (double)inter / (double)(na + nb - inter);
        double con = (double)inter / (double)mn;
        int hit = jac >= c->p.threshold;
        if (c->contain && mn >= (size_t)c->p.containment_min_shingles && con >= c->p.containment_threshold) hit = 1;
        if (!hit) continue;
        la_pair p = la_pair_make(a, b, LA_KIND_NEAR);
        p.jaccard = (float)jac;
        p.containment = (float)con;
        /* the signatures signing made, again (la_cpu_minhash gives every backend's bits) */
        if (!s->siga && (!(s->siga = la_malloc_n((size_t)c->K, sizeof *s->siga)) ||
                         !(s->sigb = la_malloc_n((size_t)c->K, sizeof *s->sigb))))
            return la_error(LA_ENOMEM, "near: out of memory verifying candidates");
        if (s->sigb_row != b) {
            la_cpu_minhash(s->bset, nb, c->K, s->sigb);
            s->sigb_row = b;
        }
        la_cpu_minhash(aset, na, c->K, s->siga);
        p.minhash = (float)la_cpu_minhash_agree(s->siga, s->sigb, c->K) / (float)c->K;
        p.simhash_dist = la_simhash_dist(c->simh[a], c->simh[b]);
        c->res[k] = p;
        c->keep[k] = 1;
    }
    la_cpu_shingle_index_clear(&s->vx); /* the table all zero for the next items */
    phase_adds(c, end - begin);
    return LA_OK;
}

/* ---- entry point ------------------------------------------------------------------------------- */

static la_status check_params(const la_near_params *p)
{
    if (p->shingle_kind != LA_SHINGLE_WORD && p->shingle_kind != LA_SHINGLE_CHAR)
        return la_error(LA_EINVAL, "near: shingle kind %d: expected word or char", p->shingle_kind);
    if (p->shingle_size < 1 || p->shingle_size > LA_SHINGLE_MAX_N)
        return la_error(LA_EINVAL, "near: shingle size %d: expected 1..%d", p->shingle_size, LA_SHINGLE_MAX_N);
    if (p->num_perm < 1 || p->num_perm > LA_MINHASH_MAX_PERM)
        return la_error(LA_EINVAL, "near: %d permutations: expected 1..%d", p->num_perm, LA_MINHASH_MAX_PERM);
    if (!(p->threshold > 0.0 && p->threshold <= 1.0))
        return la_error(LA_EINVAL, "near: threshold %g: expected a value in (0, 1]", p->threshold);
    if (!(p->containment_threshold > 0.0))
        return la_error(LA_EINVAL, "near: containment threshold %g: expected a value in (0, 1] (above 1 disables)",
                        p->containment_threshold);
    if (p->containment_sample < 1 || p->containment_sample > MAX_SAMPLE)
        return la_error(LA_EINVAL, "near: containment sample %d: expected 1..%d", p->containment_sample, MAX_SAMPLE);
    if (p->simhash_k < -1 || p->simhash_k > 7)
        return la_error(LA_EINVAL, "near: SimHash distance %d: expected 0..7, or -1 to disable", p->simhash_k);
    return LA_OK;
}

static void free_ctx(near_ctx *c)
{
    free(c->nsh);
    free(c->keys);
    free(c->simh);
    free(c->samp);
    free(c->sidx);
    free(c->hrows);
    free(c->nsamp);
    free(c->df);
    freq_free(&c->freq);
    free(c->shared);
    free(c->filter);
    la_buckets_free(c->lsh_h);
    la_buckets_free(c->lsh_o);
    la_buckets_free(c->sim_h);
    la_buckets_free(c->sim_o);
    la_buckets_free(c->con_h);
    la_buckets_free(c->con_o);
    free(c->cands);
    free(c->res);
    free(c->keep);
    free(c->mh);
    free(c->uh);
    free(c->slot);
    free(c->moff);
    free(c->uoff);
    free(c->mcnt);
    free(c->uwk);
    free(c->brow);
    free(c->bsimh);
    free(c->bkeys);
    free(c->set);
    free(c->set_start);
    if (c->sc) {
        for (int i = 0; i < c->nthreads; i++) {
            free(c->sc[i].sh);
            free(c->sc[i].sh2);
            free(c->sc[i].hits);
            free(c->sc[i].pass);
            free(c->sc[i].nhit);
            free(c->sc[i].c);
            free(c->sc[i].siga);
            free(c->sc[i].sigb);
            free(c->sc[i].cmh);
            free(c->sc[i].cuh);
            free(c->sc[i].coff_m);
            free(c->sc[i].coff_u);
            free(c->sc[i].csig);
            free(c->sc[i].dtab);
            free(c->sc[i].vtab);
            free(c->sc[i].multi);
        }
        free(c->sc);
    }
}

static la_status run(near_ctx *c, la_pairs *out, la_near_stats *st)
{
    size_t n = c->n;
    c->nsh = la_malloc_n(n, sizeof *c->nsh);
    c->simh = la_malloc_n(n, sizeof *c->simh);
    /* Across the boundary only (no --within), the held-out rows are signed first and their LSH
     * table built; the other side's rows then look their band keys up in it batch by batch as they
     * are signed, and keep none. They are sampled during their probe of the held-out tables, which
     * shingles them anyway, and look their samples up in the held-out rows' sets there and then:
     * one pass over them fewer, and no table of their keys or samples. Only the held-out rows keep
     * key and sample slots. With --within every row probes its own side's tables too, which need
     * every row's keys and sample first. */
    c->across = !c->p.within;
    c->fused = c->contain && c->across;
    /* one pass over the rows: room for all of them, then the list's own size */
    if (!(c->hrows = la_malloc_n(n ? n : 1, sizeof *c->hrows)))
        return la_error(LA_ENOMEM, "near: out of memory for the list of the held-out rows of %zu", n);
    for (size_t i = 0; i < n; i++) {
        c->hrows[c->nhrows] = (uint32_t)i;
        c->nhrows += c->r[i].part == c->held;
    }
    uint32_t *fit = realloc(c->hrows, (c->nhrows ? c->nhrows : 1) * sizeof *c->hrows);
    if (fit) c->hrows = fit;
    size_t slots = n;
    if (c->across) {
        c->sidx = la_calloc_n(n, sizeof *c->sidx);
        if (!c->sidx) return la_error(LA_ENOMEM, "near: out of memory for the sample slots of %zu rows", n);
        for (size_t k = 0; k < c->nhrows; k++) c->sidx[c->hrows[k]] = (uint32_t)k;
        slots = c->nhrows;
    }
    c->keys = la_malloc_nm(slots, (size_t)c->bands, sizeof *c->keys);
    c->samp = la_malloc_nm(slots, (size_t)c->m, sizeof *c->samp);
    c->nsamp = la_calloc_n(n, sizeof *c->nsamp);
    c->sc = calloc((size_t)c->nthreads, sizeof *c->sc);
    if (c->contain && !c->fused) c->df = calloc(DF_SIZE, sizeof *c->df);
    if (c->fused && !(c->shared = la_calloc_n(n, sizeof *c->shared)))
        return la_error(LA_ENOMEM, "near: out of memory for the shared shingle counts of %zu rows", n);
    if (!c->nsh || !c->keys || !c->simh || !c->samp || !c->nsamp || !c->sc || (c->contain && !c->fused && !c->df))
        return la_error(LA_ENOMEM, "near: out of memory for the signatures of %zu rows", n);
    for (int i = 0; c->contain && i < c->nthreads; i++)
        if (!(c->sc[i].nhit = la_calloc_n(n, sizeof *c->sc[i].nhit)))
            return la_error(LA_ENOMEM, "near: out of memory for the containment counters of %zu rows", n);

    double t0 = la_now();
    phase_begins(c, "signatures", n, "rows");
    LA_TRY(batch_alloc(c));
    if (c->across) {
        c->pass_side = SIDE_HELD;
        LA_TRY(sign_rows(c));
        LA_TRY(held_tables(c));
        c->pass_side = SIDE_OTHER;
        c->probe_signed = 1;
        LA_TRY(sign_rows(c));
        c->probe_signed = 0;
    } else {
        c->pass_side = -1;
        LA_TRY(sign_rows(c));
        LA_TRY(build_lsh(c, SIDE_HELD, &c->lsh_h));
        LA_TRY(build_lsh(c, SIDE_OTHER, &c->lsh_o));
    }
    for (size_t i = 0; i < n; i++) {
        st->rows_signed += c->nsh[i] != 0;
        st->rows_signed_heldout += c->nsh[i] != 0 && c->r[i].part == c->held;
    }
    c->pass_side = c->fused ? SIDE_HELD : -1;
    if (c->contain) LA_TRY(la_parallel_for(c->nthreads, n, 256, sample_rows, c));
    double t1 = la_now();

    if (c->p.simhash_k >= 0) {
        LA_TRY(build_sim(c, SIDE_HELD, &c->sim_h));
        if (c->p.within) LA_TRY(build_sim(c, SIDE_OTHER, &c->sim_o));
    }
    phase_begins(c, "candidates", n, "rows");
    if (c->fused) {
        LA_TRY(build_con(c, SIDE_HELD, &c->con_h));
        LA_TRY(build_filter(c));
        c->pass_side = SIDE_OTHER;
        c->sample_in_probe = 1;
        LA_TRY(la_parallel_for(c->nthreads, n, 64, find_candidates, c));
        c->sample_in_probe = 0;
        /* verification needs none of the tables, keys, samples or frequencies */
        freq_free(&c->freq);
        free(c->keys);
        c->keys = NULL;
    } else {
        free(c->df);
        c->df = NULL;
        if (c->contain) {
            LA_TRY(build_con(c, SIDE_HELD, &c->con_h));
            LA_TRY(build_con(c, SIDE_OTHER, &c->con_o));
            LA_TRY(build_filter(c));
        }
        LA_TRY(la_parallel_for(c->nthreads, n, 64, find_candidates, c));
    }
    size_t total = 0;
    for (int i = 0; i < c->nthreads; i++) total += c->sc[i].nc;
    c->cands = la_malloc_n(total, sizeof *c->cands);
    if (!c->cands) return la_error(LA_ENOMEM, "near: out of memory for %zu candidates", total);
    for (int i = 0; i < c->nthreads; i++) {
        if (c->sc[i].nc) memcpy(c->cands + c->ncand, c->sc[i].c, c->sc[i].nc * sizeof *c->cands);
        c->ncand += c->sc[i].nc;
        free(c->sc[i].c);
        c->sc[i].c = NULL;
        c->sc[i].nc = c->sc[i].ccap = 0;
    }
    LA_TRY(la_sort_key_rows(c->cands, c->ncand));
    size_t w = 0;
    for (size_t i = 0; i < c->ncand; i++) {
        if (w > 0 && c->cands[w - 1].key == c->cands[i].key)
            c->cands[w - 1].row |= c->cands[i].row;
        else
            c->cands[w++] = c->cands[i];
    }
    c->ncand = w;
    for (size_t i = 0; i < w; i++) {
        st->candidates_lsh += (c->cands[i].row & SRC_LSH) != 0;
        st->candidates_simhash += (c->cands[i].row & SRC_SIM) != 0;
        st->candidates_containment += (c->cands[i].row & SRC_CON) != 0;
    }
    st->candidates = w;
    double t2 = la_now();

    c->res = la_malloc_n(w, sizeof *c->res);
    c->keep = la_malloc_n(w, 1);
    if (!c->res || !c->keep) return la_error(LA_ENOMEM, "near: out of memory verifying %zu candidates", w);
    phase_begins(c, "verification", w, "candidates");
    LA_TRY(la_parallel_for(c->nthreads, w, 64, verify, c));
    size_t kept = 0;
    for (size_t i = 0; i < w; i++) kept += c->keep[i];
    if (out->cap - out->n < kept) {
        size_t cap = out->n + kept;
        la_pair *v = la_realloc_n(out->v, cap, sizeof *v);
        if (!v) return la_error(LA_ENOMEM, "near: out of memory appending %zu pairs", kept);
        out->v = v;
        out->cap = cap;
    }
    for (size_t i = 0; i < w; i++)
        if (c->keep[i]) out->v[out->n++] = c->res[i];
    st->verified = kept;
    double t3 = la_now();
    st->seconds_signatures = t1 - t0;
    st->seconds_candidates = t2 - t1;
    st->seconds_verify = t3 - t2;
    return LA_OK;
}

la_status la_near_find(const la_table *t, uint32_t heldout_part, const la_near_params *p, la_pairs *out,
                       la_near_stats *stats)
{
    la_near_params def;
    if (!p) {
        la_near_params_default(&def);
        p = &def;
    }
    LA_TRY(check_params(p));
    if (heldout_part >= la_table_npart(t))
        return la_error(LA_EINVAL, "near: held-out partition %u does not exist", heldout_part);
    if (la_table_nrows(t) >= UINT32_MAX) return la_error(LA_EINVAL, "near: at most 2^32 - 1 rows");

    near_ctx c;
    memset(&c, 0, sizeof c);
    c.r = la_table_rows_const(t);
    c.n = la_table_nrows(t);
    c.held = heldout_part;
    c.p = *p;
    c.K = p->num_perm;
    c.m = p->containment_sample;
    c.blocks = p->simhash_k + 1;
    c.contain = p->containment_threshold <= 1.0;
    double recall;
    LA_TRY(la_lsh_choose(p->threshold, c.K, p->lsh_fp_weight, p->lsh_fn_weight, &c.bands, &c.rpb, &recall));
    /* Hits needed from a sample of m shingles: about 2.5 standard deviations below the mean count
     * of a pair at exactly the containment threshold, so nearly all such pairs become candidates. */
    double ct = p->containment_threshold < 1.0 ? p->containment_threshold : 1.0;
    for (int m = 0; m <= MAX_SAMPLE; m++) {
        double need = floor(m * ct - 2.5 * sqrt(m * ct * (1.0 - ct)));
        c.need[m] = need < 1.0 ? 1u : (uint32_t)need;
    }
    c.nthreads = la_parallel_threads(p->threads);
    la_exec local;
    if (p->exec) {
        c.x = p->exec;
    } else {
        la_exec_init(&local, &la_backend_cpu, NULL, c.nthreads);
        c.x = &local;
    }

    la_near_stats st;
    memset(&st, 0, sizeof st);
    st.bands = c.bands;
    st.rows = c.rpb;
    st.expected_recall = recall;
    la_status s = run(&c, out, &st);
    free_ctx(&c);
    if (s == LA_OK && stats) *stats = st;
    return s;
}
