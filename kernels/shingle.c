/*
 * shingle.c - the CPU loop of shingling: text -> 64-bit shingle hashes (see shingle_core.h for the
 * token and hash rules), plus the set helpers the near tier needs on those hashes (sort, unique,
 * overlap). No allocation, no threads.
 */
#include "near_kernels.h"
#include "shingle_core.h"

/* la_is_word_byte as a table: the scan below touches every byte once. */
static unsigned char word_table[256];
static int word_table_ready;

static void word_table_init(void)
{
    for (int c = 0; c < 256; c++) word_table[c] = (unsigned char)la_is_word_byte((unsigned char)c);
    __atomic_store_n(&word_table_ready, 1, __ATOMIC_RELEASE);
}

/* Words of up to 8 bytes are gathered while they are scanned and hashed exactly as la_hash_bytes
 * does (one la_mix64 of the zero-padded word and its length); longer words call la_hash_bytes. */
static size_t shingle_words(const unsigned char *p, size_t len, int n, uint64_t *out, size_t cap)
{
    if (!__atomic_load_n(&word_table_ready, __ATOMIC_ACQUIRE)) word_table_init();
    uint64_t ring[LA_SHINGLE_MAX_N];
    size_t ntok = 0, nout = 0;
    int end = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && !word_table[p[i]]) i++;
        if (i >= len) break;
        size_t s = i;
        uint64_t w = 0;
        while (i < len && word_table[p[i]]) {
            if (i - s < 8) w |= (uint64_t)p[i] << (8 * (i - s));
            i++;
        }
        size_t wl = i - s;
        ring[end] = wl <= 8 ? la_mix64(LA_SHINGLE_BYTES_SEED ^ w ^ ((uint64_t)wl << 56) ^ (uint64_t)wl)
                            : la_hash_bytes(p + s, wl);
        if (++end == n) end = 0;
        ntok++;
        if (ntok >= (size_t)n) {
            if (nout < cap) out[nout] = la_shingle_fold(ring, n, end, n);
            nout++;
        }
    }
    if (ntok > 0 && ntok < (size_t)n) {
        if (nout < cap) out[nout] = la_shingle_fold(ring, n, end, (int)ntok);
        nout++;
    }
    return nout;
}

static size_t shingle_chars(const unsigned char *p, size_t len, int n, uint64_t *out, size_t cap)
{
    uint64_t ring[LA_SHINGLE_MAX_N];
    size_t ntok = 0, nout = 0;
    int end = 0;
    size_t i = 0;
    while (len > 0 && la_is_space_byte(p[len - 1])) len--;
    while (i < len && la_is_space_byte(p[i])) i++;
    while (i < len) {
        uint64_t cp;
        if (la_is_space_byte(p[i])) {
            while (i < len && la_is_space_byte(p[i])) i++;
            cp = ' ';
        } else {
            size_t l;
            cp = la_utf8_next(p + i, len - i, &l);
            i += l;
        }
        ring[end] = la_char_token((uint32_t)cp);
        if (++end == n) end = 0;
        ntok++;
        if (ntok >= (size_t)n) {
            if (nout < cap) out[nout] = la_shingle_fold(ring, n, end, n);
            nout++;
        }
    }
    if (ntok > 0 && ntok < (size_t)n) {
        if (nout < cap) out[nout] = la_shingle_fold(ring, n, end, (int)ntok);
        nout++;
    }
    return nout;
}

size_t la_cpu_shingle(const char *text, size_t len, int kind, int n, uint64_t *out, size_t cap)
{
    if (!text || n < 1 || n > LA_SHINGLE_MAX_N) return 0;
    const unsigned char *p = (const unsigned char *)text;
    if (kind == LA_SHINGLE_WORD) return shingle_words(p, len, n, out, cap);
    if (kind == LA_SHINGLE_CHAR) return shingle_chars(p, len, n, out, cap);
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

void la_cpu_shingle_sort(uint64_t *h, size_t n)
{
    int depth = 2;
    for (size_t m = n; m > 1; m >>= 1) depth += 2;
    quick_sort(h, n, depth);
}

size_t la_cpu_shingle_unique(uint64_t *h, size_t n)
{
    if (n == 0) return 0;
    size_t w = 1;
    for (size_t i = 1; i < n; i++)
        if (h[i] != h[w - 1]) h[w++] = h[i];
    return w;
}

size_t la_cpu_shingle_overlap(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    size_t i = 0, j = 0, c = 0;
    while (i < na && j < nb) {
        if (a[i] < b[j])
            i++;
        else if (a[i] > b[j])
            j++;
        else {
            c++;
            i++;
            j++;
        }
    }
    return c;
}
