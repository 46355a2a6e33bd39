/*
 * shingle.c - the CPU loop of shingling: text -> 64-bit shingle hashes (see shingle_core.h for the
 * token and hash rules), plus the set helpers the near tier needs on those hashes (sort, unique,
 * overlap). No allocation, no threads.
 */
#include "near_kernels.h"
#include "shingle_core.h"

#include "shingle_scan.h"
#include <string.h>

uint64_t la_cpu_hash_bytes(const void *p, size_t n) { return la_scan_hash_bytes(p, n); }

/* Word shingles. Per block of 64 bytes, the word starts (a word byte after a non-word byte) and ends
 * (the reverse) are bit masks; inside a block they alternate, start first, so each word is one pop of
 * each mask with count-trailing-zeros: no per-byte loop and no branch per byte. A word still open at
 * the end of a block is closed by the first end of a later one. Inlined with n = 2 (the default) as a
 * constant: then the two tokens of a shingle stay in registers. */
static inline __attribute__((always_inline)) size_t shingle_words_n(const unsigned char *p, size_t len, int n,
                                                                     uint64_t *out, size_t cap)
{
    uint64_t ring[LA_SHINGLE_MAX_N] = {0}, prev = 0;
    size_t ntok = 0, nout = 0;
    int end = 0;
    uint64_t in = 0;         /* the last byte of the previous block is a word byte */
    size_t open = SIZE_MAX;  /* start of a word still open at the end of the previous block */
#define WORD_EMIT(s, e)                                                                                \
    do {                                                                                               \
        uint64_t tok_ = la_scan_word_token(p, (s), (e) - (s), len);                                    \
        if (n == 2) {                                                                                  \
            if (ntok >= 1) {                                                                           \
                uint64_t pair_[2] = {prev, tok_};                                                      \
                if (nout < cap) out[nout] = la_shingle_fold(pair_, 2, 2, 2);                           \
                nout++;                                                                                \
            }                                                                                          \
            ring[0] = prev = tok_;                                                                     \
            end = 1;                                                                                   \
        } else {                                                                                       \
            ring[end] = tok_;                                                                          \
            if (++end == n) end = 0;                                                                   \
            if (ntok + 1 >= (size_t)n) {                                                               \
                if (nout < cap) out[nout] = la_shingle_fold(ring, n, end, n);                          \
                nout++;                                                                                \
            }                                                                                          \
        }                                                                                              \
        ntok++;                                                                                        \
    } while (0)
    for (size_t base = 0; base < len; base += 64) {
        uint64_t m = la_scan_block_mask(p, len, base);
        uint64_t before = m << 1 | in; /* bit j: the byte before byte j is a word byte */
        uint64_t st = m & ~before, en = ~m & before;
        in = m >> 63;
        if (open != SIZE_MAX) {
            if (!en) continue; /* the open word spans this whole block */
            size_t e = base + (size_t)__builtin_ctzll(en);
            en &= en - 1;
            WORD_EMIT(open, e);
            open = SIZE_MAX;
        }
        while (en) {
            size_t s = base + (size_t)__builtin_ctzll(st), e = base + (size_t)__builtin_ctzll(en);
            st &= st - 1;
            en &= en - 1;
            WORD_EMIT(s, e);
        }
        if (st) open = base + (size_t)__builtin_ctzll(st);
    }
    if (open != SIZE_MAX) WORD_EMIT(open, len); /* a word ending a text of a multiple of 64 bytes */
#undef WORD_EMIT
    if (ntok > 0 && ntok < (size_t)n) {
        if (nout < cap) out[nout] = la_shingle_fold(ring, n, end, (int)ntok);
        nout++;
    }
    return nout;
}

static size_t shingle_words(const unsigned char *p, size_t len, int n, uint64_t *out, size_t cap)
{
    if (n == 2) return shingle_words_n(p, len, 2, out, cap);
    return shingle_words_n(p, len, n, out, cap);
}

size_t la_cpu_shingle(const char *text, size_t len, int kind, int n, uint64_t *out, size_t cap)
{
    if (!text || n < 1 || n > LA_SHINGLE_MAX_N) return 0;
    const unsigned char *p = (const unsigned char *)text;
    if (kind == LA_SHINGLE_WORD) return shingle_words(p, len, n, out, cap);
    if (kind == LA_SHINGLE_CHAR) return la_shingle_chars(p, len, n, out, cap);
    return 0;
}

/* ---- sort: Hoare quicksort (median of three), insertion sort below 24, heapsort past a depth
 * limit so that no input takes quadratic time. */

static void insertion_sort(uint64_t *h, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t v = h[i];
        size_t j = i;
        while (j > 0 && h[j - 1] > v) {
            h[j] = h[j - 1];
            j--;
        }
        h[j] = v;
    }
}

static void sift_down(uint64_t *h, size_t root, size_t n)
{
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && h[c + 1] > h[c]) c++;
        if (h[root] >= h[c]) return;
        uint64_t t = h[root];
        h[root] = h[c];
        h[c] = t;
        root = c;
    }
}

static void heap_sort(uint64_t *h, size_t n)
{
    for (size_t i = n / 2; i-- > 0;) sift_down(h, i, n);
    for (size_t e = n; e-- > 1;) {
        uint64_t t = h[0];
        h[0] = h[e];
        h[e] = t;
        sift_down(h, 0, e);
    }
}

static void quick_sort(uint64_t *h, size_t n, int depth)
{
    while (n > 24) {
        if (depth-- == 0) {
            heap_sort(h, n);
            return;
        }
        uint64_t a = h[0], b = h[n / 2], c = h[n - 1];
        uint64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (h[i] < pivot) i++;
            while (h[j] > pivot) j--;
            if (i >= j) break;
            uint64_t t = h[i];
            h[i] = h[j];
            h[j] = t;
            i++;
            j--;
        }
        /* [0, j] <= pivot <= [j+1, n): recurse on the smaller side. */
        size_t left = j + 1;
        if (left < n - left) {
            quick_sort(h, left, depth);
            h += left;
            n -= left;
        } else {
            quick_sort(h + left, n - left, depth);
            n = left;
        }
    }
    insertion_sort(h, n);
}

static void quick_sort_n(uint64_t *h, size_t n)
{
    int depth = 2;
    for (size_t m = n; m > 1; m >>= 1) depth += 2;
    quick_sort(h, n, depth);
}

/* Shingle hashes are close to uniform, so one in-place pass over their top bits (American flag
 * sort: each element is swapped into its bucket along a cycle) leaves buckets of one or two, which
 * insertion sort finishes in about linear time; rows with more shingles than buckets sort each
 * bucket on its own. About three times faster than quick_sort for rows of hundreds of shingles.
 * Skewed input (many equal or clustered hashes) only makes the buckets uneven: still sorted. */
enum { SORT_MIN = 128, SORT_BITS = 12 };

void la_cpu_shingle_sort(uint64_t *h, size_t n)
{
    if (n < SORT_MIN || n > UINT32_MAX) {
        quick_sort_n(h, n);
        return;
    }
    int bits = 0;
    while (bits < SORT_BITS && ((size_t)2 << bits) <= n) bits++;
    size_t nb = (size_t)1 << bits;
    int shift = 64 - bits;
    uint32_t next[1 << SORT_BITS], end[1 << SORT_BITS];
    memset(end, 0, nb * sizeof *end);
    for (size_t i = 0; i < n; i++) end[h[i] >> shift]++;
    uint32_t sum = 0;
    for (size_t b = 0; b < nb; b++) {
        next[b] = sum;
        sum += end[b];
        end[b] = sum;
    }
    for (size_t b = 0; b < nb; b++) {
        while (next[b] < end[b]) {
            uint64_t v = h[next[b]];
            size_t d = (size_t)(v >> shift);
            while (d != b) {
                uint64_t t = h[next[d]];
                h[next[d]++] = v;
                v = t;
                d = (size_t)(v >> shift);
            }
            h[next[b]++] = v;
        }
    }
    if (n <= 4 * nb) {
        insertion_sort(h, n); /* every element is in its bucket: it moves only within it */
        return;
    }
    for (size_t b = 0, start = 0; b < nb; start = end[b++])
        if (end[b] - start > 1) quick_sort_n(h + start, end[b] - start);
}

size_t la_cpu_shingle_unique(uint64_t *h, size_t n)
{
    if (n == 0) return 0;
    size_t w = 1;
    for (size_t i = 1; i < n; i++)
        if (h[i] != h[w - 1]) h[w++] = h[i];
    return w;
}

/* Home slots of la_cpu_shingle_distinct's table for n values: a power of two, at least twice n and
 * 64. */
static size_t distinct_homes(size_t n)
{
    size_t slots = 64;
    while (slots < 2 * n && slots <= SIZE_MAX / 4) slots *= 2;
    return slots;
}

size_t la_shingle_distinct_table(size_t n) { return distinct_homes(n); }

/* Fewer than DISTINCT_MIN values are sorted (the table costs more than it saves); past
 * DISTINCT_STEPS probe steps a value, so are the rest (values crowded into a few homes). */
enum { DISTINCT_MIN = 16, DISTINCT_STEPS = 8 };

/* The distinct values of h[0..n) by sorting a copy in out. */
static size_t sort_distinct(const uint64_t *h, size_t n, uint64_t *out)
{
    if (n) memcpy(out, h, n * sizeof *out);
    la_cpu_shingle_sort(out, n);
    return la_cpu_shingle_unique(out, n);
}

/*
 * A linear-probing table of the values met so far (home slot: the top bits; 0 marks an empty slot,
 * so the value 0 is kept apart). A value's probe ends at an empty slot or at itself; the value is
 * written there and at out[nout], and kept in out by counting it when the slot was empty: no branch
 * on whether it is new (a first occurrence follows no pattern). Nothing is kept in order and
 * nothing moves; the table is cleared with one memset. The ordered table this replaced kept each run
 * of slots ascending (a shift of the run at each insert) and read the sorted set from all its slots:
 * 90 against 53 ms of a one-thread audit at 50k x 5k. Only verification needed the order, and
 * counts its overlaps with la_cpu_shingle_index instead.
 */
size_t la_cpu_shingle_distinct(const uint64_t *h, size_t n, uint64_t *out, uint64_t *table)
{
    if (n < DISTINCT_MIN) return sort_distinct(h, n, out);
    size_t homes = distinct_homes(n), mask = homes - 1, nout = 0;
    int shift = 64 - __builtin_ctzll((unsigned long long)homes), zero = 0;
    /* slots passed beyond the home: about n/2 for hashes; values crowded in a few homes would make
     * the probes long, and past DISTINCT_STEPS a value the values are sorted instead */
    size_t steps = 0, most = DISTINCT_STEPS * n;
    for (size_t k = 0; k < n; k++) {
        uint64_t v = h[k];
        if (!v) {
            out[nout] = 0;
            nout += !zero;
            zero = 1;
            continue;
        }
        size_t i = (size_t)(v >> shift);
        uint64_t t = table[i];
        while (t != v && t) {
            i = (i + 1) & mask;
            t = table[i];
            steps++;
        }
        if (steps > most) {
            memset(table, 0, homes * sizeof *table);
            return sort_distinct(h, n, out);
        }
        out[nout] = v;
        nout += t != v;
        table[i] = v;
    }
    memset(table, 0, homes * sizeof *table);
    return nout;
}

/* Slots of la_cpu_shingle_index's table for n values: a power of two, at least 8n and 64. At most
 * an eighth full, a probe for a value the set lacks ends at its home slot but for about one in
 * eight, and so does a probe that finds its value: the count needs no branch on which. */
static size_t index_homes(size_t n)
{
    size_t slots = 64;
    while (slots < 8 * n && slots <= SIZE_MAX / 16) slots *= 2;
    return slots;
}

size_t la_shingle_index_table(size_t n) { return index_homes(n); }

void la_cpu_shingle_index(la_shingle_index *x, const uint64_t *set, size_t n, uint64_t *table)
{
    size_t homes = index_homes(n);
    x->slot = table;
    x->mask = homes - 1;
    x->shift = 64 - __builtin_ctzll((unsigned long long)homes);
    x->zero = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t v = set[k];
        if (!v) {
            x->zero = 1;
            continue;
        }
        size_t i = (size_t)(v >> x->shift);
        while (table[i] && table[i] != v) i = (i + 1) & x->mask;
        table[i] = v;
    }
}

size_t la_cpu_shingle_index_overlap(const la_shingle_index *x, const uint64_t *a, size_t na)
{
    size_t c = 0;
    for (size_t k = 0; k < na; k++) {
        uint64_t v = a[k];
        size_t i = (size_t)(v >> x->shift);
        uint64_t t = x->slot[i];
        while (t != v && t) {
            i = (i + 1) & x->mask;
            t = x->slot[i];
        }
        /* a value of 0 ends its probe at the first empty slot, which holds 0: kept apart */
        c += v ? t == v : (size_t)x->zero;
    }
    return c;
}

void la_cpu_shingle_index_clear(la_shingle_index *x)
{
    if (x->slot) memset(x->slot, 0, (x->mask + 1) * sizeof *x->slot);
    x->slot = NULL;
}

size_t la_cpu_shingle_overlap(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    /* without branches: whether a step advances i, j or both is as unpredictable as a coin, and a
     * mispredicted branch a step cost twice the time (two sets of 170 hashes: 1.2 against 0.6 us) */
    size_t i = 0, j = 0, c = 0;
    while (i < na && j < nb) {
        uint64_t x = a[i], y = b[j];
        c += x == y;
        i += x <= y;
        j += y <= x;
    }
    return c;
}
