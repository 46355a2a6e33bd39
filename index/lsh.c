/*
 * lsh.c - LSH band selection and the bucket table (see lsh.h).
 *
 * The bucket table sorts its entries by key with a stable radix sort (util/la_keysort.h, or a
 * backend's twin of it for la_buckets_new_sorted) and indexes the first entry of every distinct key in an open-addressing table of 32-bit positions, with
 * 24 high bits of the key as a tag so most misses cost one memory access, and the key's entry count
 * beside it. A table larger than a core's
 * second-level cache has a bit filter of its keys in front (8 bits a key, a few hundred KB at
 * most-used sizes): most probes miss, and the filter turns them away without the slot's miss.
 * Keys are expected to be well mixed hashes (they index the table and the filter directly).
 */
#include "lsh.h"
#include "la_alloc.h"
#include "la_prefetch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double la_lsh_candidate_prob(double s, int bands, int rows)
{
    return 1.0 - pow(1.0 - pow(s, rows), bands);
}

/* Simpson weight of grid point i of STEPS intervals (composite rule: 1, 4, 2, 4, ..., 4, 1). */
enum { STEPS = 256 };
static double simpson_weight(int i) { return (i == 0 || i == STEPS) ? 1.0 : (i % 2 ? 4.0 : 2.0); }

/*
 * The composite Simpson rule over [lo, hi] of the candidate probability (complement = 0) or of its
 * complement (1), for r rows and every band count b = 1 .. nb at once, into sum[b - 1]. The
 * complement (1 - s^r)^b is carried from b to b + 1 by one multiplication per grid point, so a
 * row count costs STEPS + 1 pow calls instead of that many per band count.
 */
static void integrate_bands(double lo, double hi, int r, int nb, int complement, double *acc, double *sum)
{
    for (int b = 0; b < nb; b++) sum[b] = 0.0;
    if (hi <= lo) return;
    double h = (hi - lo) / STEPS;
    for (int i = 0; i <= STEPS; i++) acc[i] = 1.0;
    for (int b = 0; b < nb; b++) {
        double t = 0.0;
        for (int i = 0; i <= STEPS; i++) {
            if (b == 0) acc[STEPS + 1 + i] = 1.0 - pow(lo + i * h, r); /* 1 - s^r at point i */
            acc[i] *= acc[STEPS + 1 + i];
            t += simpson_weight(i) * (complement ? acc[i] : 1.0 - acc[i]);
        }
        sum[b] = t * h / 3.0;
    }
}

la_status la_lsh_choose(double threshold, int num_perm, double fp_weight, double fn_weight, int *bands,
                        int *rows, double *expected_recall)
{
    if (!(threshold > 0.0 && threshold <= 1.0))
        return la_error(LA_EINVAL, "near threshold %g: expected a value in (0, 1]", threshold);
    if (num_perm < 1) return la_error(LA_EINVAL, "number of permutations %d: expected at least 1", num_perm);
    if (!(fp_weight >= 0.0 && fn_weight >= 0.0) || fp_weight + fn_weight <= 0.0)
        return la_error(LA_EINVAL, "LSH weights %g, %g: expected non-negative, not both zero", fp_weight, fn_weight);
    /* err[b][r] for every b * r <= num_perm, row count by row count (integrate_bands), then read in
     * the order band count first, so ties keep the fewest bands */
    size_t *at = malloc(((size_t)num_perm + 2) * sizeof *at);
    double *acc = malloc(2 * (STEPS + 1) * sizeof *acc);
    double *fp = malloc((size_t)num_perm * sizeof *fp), *fn = malloc((size_t)num_perm * sizeof *fn);
    double *err = NULL;
    if (at && acc && fp && fn) {
        at[1] = 0;
        for (int b = 1; b <= num_perm; b++) at[b + 1] = at[b] + (size_t)(num_perm / b);
        err = malloc((at[num_perm + 1] ? at[num_perm + 1] : 1) * sizeof *err);
    }
    if (!err) {
        free(at), free(acc), free(fp), free(fn);
        return la_error(LA_ENOMEM, "out of memory choosing LSH bands for %d permutations", num_perm);
    }
    for (int r = 1; r <= num_perm; r++) {
        int nb = num_perm / r;
        integrate_bands(0.0, threshold, r, nb, 0, acc, fp);
        integrate_bands(threshold, 1.0, r, nb, 1, acc, fn);
        for (int b = 1; b <= nb; b++) err[at[b] + (size_t)(r - 1)] = fp_weight * fp[b - 1] + fn_weight * fn[b - 1];
    }
    double best = INFINITY;
    int bb = 1, br = num_perm;
    for (int b = 1; b <= num_perm; b++)
        for (int r = 1; r <= num_perm / b; r++)
            if (err[at[b] + (size_t)(r - 1)] < best - 1e-15) {
                best = err[at[b] + (size_t)(r - 1)];
                bb = b;
                br = r;
            }
    free(at), free(acc), free(fp), free(fn), free(err);
    *bands = bb;
    *rows = br;
    if (expected_recall) *expected_recall = la_lsh_candidate_prob(threshold, bb, br);
    return LA_OK;
}

/* ---- bucket table ---------------------------------------------------------------------------- */

/* A slot of the key index: one cache line holds both halves, so a probe (most probes of a table
 * miss) reads one line per slot, not one in each of two arrays. */
typedef struct key_slot {
    uint32_t pos;  /* first entry of the key + 1; 0 = empty slot */
    uint32_t tag;  /* high 24 bits of the key (above TAG_SHIFT), then the key's entries in the low
                      8 bits (COUNT_MAX: that many or more, counted in the entries) */
} key_slot;

/* The slot's count saves a find the loop that counts the key's entries (its end a mispredicted
 * branch at each hit); the tag, 24 bits, still turns away almost every other key met on the probe
 * before its entry is read. */
enum { TAG_SHIFT = 40, COUNT_MAX = 255 };

static uint32_t slot_tag(uint64_t key) { return (uint32_t)(key >> TAG_SHIFT) << 8; }

struct la_buckets {
    la_bucket_entry *e;
    size_t n, nkeys;
    key_slot *slots;
    size_t mask;
    uint64_t *filter;  /* bit (key >> (64 - filter_log2)) set for every key; NULL: no filter */
    int filter_log2;
};

/* Slot tables of at least this many slots (8 bytes each: 512 KB) get a filter. */
enum { FILTER_MIN_SLOTS = 1 << 16, FILTER_BITS_PER_KEY = 8 };

static size_t filter_bit(const la_buckets *b, uint64_t key) { return (size_t)(key >> (64 - b->filter_log2)); }

static int may_have(const la_buckets *b, uint64_t key)
{
    if (!b->filter) return 1;
    size_t f = filter_bit(b, key);
    return (int)(b->filter[f >> 6] >> (f & 63) & 1);
}

la_status la_buckets_new(la_bucket_entry *entries, size_t n, la_buckets **out)
{
    la_status s = la_sort_key_rows(entries, n);
    if (s != LA_OK) {
        free(entries);
        return s;
    }
    return la_buckets_new_sorted(entries, n, out);
}

/* How many entries ahead la_buckets_new_sorted prefetches the slot it will write. */
enum { PREFETCH_AHEAD = 16 };

la_status la_buckets_new_sorted(la_bucket_entry *entries, size_t n, la_buckets **out)
{
    if (n >= UINT32_MAX) {
        free(entries);
        return la_error(LA_EINVAL, "bucket table of %zu entries: at most 2^32 - 2", n);
    }
    la_buckets *b = calloc(1, sizeof *b);
    if (!b) {
        free(entries);
        return la_error(LA_ENOMEM, "out of memory creating a bucket table");
    }
    b->e = entries;
    b->n = n;
    size_t nkeys = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || entries[i].key != entries[i - 1].key) nkeys++;
    size_t cap = 16;
    while (cap < 2 * nkeys) cap <<= 1;
    b->nkeys = nkeys;
    b->mask = cap - 1;
    b->slots = la_zalloc_n(cap, sizeof *b->slots);
    if (!b->slots) {
        la_buckets_free(b);
        return la_error(LA_ENOMEM, "out of memory indexing %zu bucket keys", nkeys);
    }
    for (size_t i = 0; i < n; i++) {
        /* the slots are a table larger than the cache, written at random: each write's miss
         * starts PREFETCH_AHEAD entries early */
        if (i + PREFETCH_AHEAD < n) LA_PREFETCH_WRITE(&b->slots[(size_t)entries[i + PREFETCH_AHEAD].key & b->mask]);
        if (i > 0 && entries[i].key == entries[i - 1].key) continue;
        uint64_t k = entries[i].key;
        size_t c = 1;
        while (c < COUNT_MAX && i + c < n && entries[i + c].key == k) c++;
        size_t slot = (size_t)k & b->mask;
        while (b->slots[slot].pos) slot = (slot + 1) & b->mask;
        b->slots[slot] = (key_slot){(uint32_t)(i + 1), slot_tag(k) | (uint32_t)c};
    }
    if (cap >= FILTER_MIN_SLOTS) {
        b->filter_log2 = 12;
        while (b->filter_log2 < 40 && ((size_t)1 << b->filter_log2) < nkeys * FILTER_BITS_PER_KEY) b->filter_log2++;
        b->filter = la_zalloc_n((size_t)1 << (b->filter_log2 - 6), sizeof *b->filter);
        if (!b->filter) {
            la_buckets_free(b);
            return la_error(LA_ENOMEM, "out of memory for the filter of %zu bucket keys", nkeys);
        }
        for (size_t i = 0; i < n; i++) {
            size_t f = filter_bit(b, entries[i].key);
            b->filter[f >> 6] |= 1ull << (f & 63);
        }
    }
    *out = b;
    return LA_OK;
}

void la_buckets_free(la_buckets *b)
{
    if (!b) return;
    free(b->e);
    free(b->slots);
    free(b->filter);
    free(b);
}

size_t la_buckets_find(const la_buckets *b, uint64_t key, const la_bucket_entry **first)
{
    if (!may_have(b, key)) return 0;
    size_t slot = (size_t)key & b->mask;
    uint32_t tag = slot_tag(key);
    for (;;) {
        key_slot k = b->slots[slot];
        uint32_t p = k.pos;
        if (!p) return 0;
        if ((k.tag & ~0xffu) == tag && b->e[p - 1].key == key) {
            const la_bucket_entry *f = &b->e[p - 1];
            size_t c = k.tag & 0xffu;
            if (c == COUNT_MAX)
                while (p - 1 + c < b->n && f[c].key == key) c++;
            *first = f;
            return c;
        }
        slot = (slot + 1) & b->mask;
    }
}

void la_buckets_prefetch(const la_buckets *b, uint64_t key)
{
    /* the filter is in the cache: only a key that passes it has a slot worth loading */
    if (may_have(b, key)) LA_PREFETCH(&b->slots[(size_t)key & b->mask]);
}

size_t la_buckets_size(const la_buckets *b) { return b->n; }
size_t la_buckets_keys(const la_buckets *b) { return b->nkeys; }
