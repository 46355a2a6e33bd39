/*
 * embed_lexical.c - the CPU loop of the built-in `lexical` embedding (see embed_lexical.h).
 *
 * Two passes over the texts: the first counts document frequencies per feature slot, the second
 * writes the vectors. Each text is handled by one thread from start to end; its features are counted
 * in a small open-addressing table and visited in the order they first occur in the text, so the
 * result does not depend on the thread count.
 *
 * What makes it fast, without changing a bit of the result (tests/unit/test_embed_lexical_ref.c
 * compares it with a plain reference):
 * - the first pass only tells each text's new features from repeats (no order, counts or keys kept)
 *   and counts a document for each new one as it goes;
 * - each thread counts document frequencies in a table of its own (the first thread in the shared
 *   one; 16 MB per further thread), summed after the first pass: plain increments instead of atomic
 *   ones, whose lock also kept the CPU from overlapping the cache misses of this 16 MB table;
 * - the sum replaces each slot's count by its inverse document frequency, so the second pass reads
 *   one float per feature instead of computing a logarithm and a division; small term frequencies
 *   have their weight in a table too (the same function, the same floats);
 * - the slots of the next features are prefetched: nearly every access to the table misses;
 * - the hashes are xxHash's inline ones (the same XXH3 values as the library's calls); where a CPU
 *   has AVX-512 (F, DQ, BW) or AVX2, the character 3-, 4- and 5-grams of eight positions whose code
 *   points are single bytes are hashed in vectors: xxHash's own arithmetic for 1-8 byte inputs,
 *   lane by lane (AVX2 builds its 64-bit products from 32-bit ones; la_cpu_lexical_loop picks the
 *   loop for tests);
 * - a text's distinct features and counts sit in arrays in order of first occurrence, which the
 *   later loops read in sequence; the table that finds them is sized per text, holds each feature's
 *   whole hash (one load tells a repeat from a new feature) and is prefetched a few features ahead;
 *   the scratch buffers live for the whole call, across both passes.
 */
#include "embed_lexical.h"
#include "la_cpus.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "embed_lexical_core.h"
#include "la_prefetch.h"

#ifdef LA_HAVE_OPENMP
#include <omp.h>
#define THREAD_NUM() omp_get_thread_num()
#else
#define THREAD_NUM() 0
#endif

/* How many features ahead the document-frequency slots are prefetched. */
#define PREFETCH_AHEAD 16

/* How many features ahead the count table's slots are prefetched. */
#define COUNT_AHEAD 8

#define DF_SLOTS ((size_t)1 << LA_LEX_DF_BITS)

/* Term frequencies below this have their weight looked up. */
#define TF_TABLE 64

void la_embed_lexical_params_default(la_embed_lexical_params *p) {
    p->dim = LA_EMBED_LEXICAL_DIM;
    p->word_weight = 0.5f;
    p->seed = 0x6c65616b61756469ull; /* "leakaudi" */
    p->threads = 0;
    p->skip = NULL;
}

/* Per-thread scratch, reused from text to text: the features of one text, high bit 0 for words,
 * 1 for characters, and their distinct values with counts in order of first occurrence. */
typedef struct feats {
    uint64_t *h;    /* every feature, in text order */
    size_t n, cap;
    char *pad;      /* " " + text + " " */
    size_t padcap;
    uint32_t *cp;   /* code point start offsets in pad */
    size_t cpcap;
    uint64_t *tab;  /* open addressing: a power of two of slots, at least twice n, per text: each
                       feature's hash, 0 = empty (a hash of 0 is counted aside) */
    uint32_t *pos;  /* per slot: the feature's place among the distinct ones */
    size_t tcap;
    uint64_t *key;  /* the distinct features, in order of first occurrence */
    uint32_t *cnt;  /* how often each occurs */
    size_t nused, keycap, cntcap;
    float *w;       /* weight of each distinct feature */
    size_t wcap;
} feats;

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

#define GROUP_CHAR (1ull << 63)

static int push(feats *f, uint64_t h) {
    if (f->n == f->cap && grow((void **)&f->h, &f->cap, f->n + 1, sizeof *f->h)) return -1;
    f->h[f->n++] = h;
    return 0;
}

/* An empty count table of at least 2 * f->n slots (a power of two); returns its mask. A table
 * sized for each text keeps short texts in a small one after a long text grew it. */
static int reset_table(feats *f, size_t *mask) {
    size_t need = 64;
    while (need < 2 * f->n) need *= 2;
    if (need > f->tcap) {
        free(f->tab);
        free(f->pos);
        f->tab = malloc(need * sizeof *f->tab);
        f->pos = malloc(need * sizeof *f->pos);
        f->tcap = f->tab && f->pos ? need : 0;
        if (!f->tcap) return -1;
    }
    memset(f->tab, 0, need * sizeof *f->tab);
    *mask = need - 1;
    return 0;
}

/* Find the non-zero hash x in the count table, or put it in the first empty slot; returns 1 when it
 * was not there, and its slot in *at. */
static inline int find_or_add(uint64_t *tab, size_t mask, uint64_t x, size_t *at) {
    for (size_t slot = (size_t)x & mask;; slot = (slot + 1) & mask) { /* the low bits: already mixed */
        const uint64_t e = tab[slot];
        if (e == x || e == 0) {
            if (e == 0) tab[slot] = x;
            *at = slot;
            return e == 0;
        }
    }
}

/* Count the distinct features of f->h into f->key and f->cnt, in order of first occurrence. */
static int count_feats(feats *f) {
    size_t mask;
    if (reset_table(f, &mask) || grow((void **)&f->key, &f->keycap, f->n + 1, sizeof *f->key) ||
        grow((void **)&f->cnt, &f->cntcap, f->n + 1, sizeof *f->cnt))
        return -1;
    uint64_t *tab = f->tab;
    uint32_t *pos = f->pos;
    uint64_t *key = f->key;
    uint32_t *cnt = f->cnt;
    const uint64_t *h = f->h;
    const size_t n = f->n;
    size_t nused = 0, zero = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (i + COUNT_AHEAD < n) LA_PREFETCH(&tab[(size_t)h[i + COUNT_AHEAD] & mask]);
        const uint64_t x = h[i];
        if (x == 0) { /* the empty slot's value: counted aside */
            if (zero == SIZE_MAX) zero = nused, key[nused] = 0, cnt[nused++] = 0;
            cnt[zero]++;
            continue;
        }
        size_t slot;
        if (find_or_add(tab, mask, x, &slot)) {
            pos[slot] = (uint32_t)nused;
            key[nused] = x;
            cnt[nused++] = 1;
        } else {
            cnt[pos[slot]]++;
        }
    }
    f->nused = nused;
    return 0;
}

#if defined(__GNUC__) && defined(__x86_64__)
#define LA_LEX_VECTORS 1
#include <immintrin.h>

/* XXH3_64bits_withSeed of 3, 4 and 5 bytes reduced to what varies with the bytes: xxHash's short
 * inputs (1-3 and 4-8 bytes) xor one constant made of the secret and the seed into the input word
 * and mix it; these are those constants for the three seeds. */
typedef struct gram_flips {
    uint64_t f3, f4, f5;
} gram_flips;

static gram_flips gram_flips_of(uint64_t s3, uint64_t s4, uint64_t s5) {
    uint32_t a, b;
    uint64_t c, d;
    memcpy(&a, XXH3_kSecret, 4);
    memcpy(&b, XXH3_kSecret + 4, 4);
    memcpy(&c, XXH3_kSecret + 8, 8);
    memcpy(&d, XXH3_kSecret + 16, 8);
    s4 ^= (uint64_t)__builtin_bswap32((uint32_t)s4) << 32;
    s5 ^= (uint64_t)__builtin_bswap32((uint32_t)s5) << 32;
    return (gram_flips){(uint64_t)(a ^ b) + s3, (c ^ d) - s4, (c ^ d) - s5};
}

#define LEX_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw")))

/* XXH64's avalanche, the mix of 1-3 byte inputs */
LEX_AVX512 static inline __m512i lex_avalanche(__m512i h) {
    h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 33));
    h = _mm512_mullo_epi64(h, _mm512_set1_epi64((long long)XXH_PRIME64_2));
    h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 29));
    h = _mm512_mullo_epi64(h, _mm512_set1_epi64((long long)XXH_PRIME64_3));
    return _mm512_xor_si512(h, _mm512_srli_epi64(h, 32));
}

/* XXH3's rrmxmx, the mix of 4-8 byte inputs */
LEX_AVX512 static inline __m512i lex_rrmxmx(__m512i h, long long len) {
    const __m512i m = _mm512_set1_epi64((long long)0x9FB21C651E98DF25ULL);
    h = _mm512_ternarylogic_epi64(h, _mm512_rol_epi64(h, 49), _mm512_rol_epi64(h, 24), 0x96); /* a ^ b ^ c */
    h = _mm512_mullo_epi64(h, m);
    h = _mm512_xor_si512(h, _mm512_add_epi64(_mm512_srli_epi64(h, 35), _mm512_set1_epi64(len)));
    h = _mm512_mullo_epi64(h, m);
    return _mm512_xor_si512(h, _mm512_srli_epi64(h, 28));
}

/* The 3-, 4- and 5-grams at g + k for k = 0..7, where g[0..12) are twelve code points of one byte
 * each (16 bytes readable from g), into out[0..24) in the scalar loop's order: the same hashes as
 * XXH3_64bits_withSeed, eight positions a vector. */
LEX_AVX512 static void grams8_avx512(const char *g, const gram_flips *fl, uint64_t *out) {
    static const uint8_t pick[64] = {0, 1, 2, 3, 4, 5, 6,  7,  1, 2, 3, 4,  5,  6,  7,  8, /* lane k: bytes k..k+7 */
                                     2, 3, 4, 5, 6, 7, 8,  9,  3, 4, 5, 6,  7,  8,  9,  10,
                                     4, 5, 6, 7, 8, 9, 10, 11, 5, 6, 7, 8,  9,  10, 11, 12,
                                     6, 7, 8, 9, 10, 11, 12, 13, 7, 8, 9, 10, 11, 12, 13, 14};
    const __m512i w = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)g)),
                                          _mm512_loadu_si512(pick));
    const __m512i lo32 = _mm512_and_si512(w, _mm512_set1_epi64(0xFFFFFFFF));
    /* 3 bytes c1 c2 c3: c1 << 16 | c2 << 24 | c3 | 3 << 8 */
    __m512i k3 = _mm512_or_si512(_mm512_slli_epi64(_mm512_and_si512(w, _mm512_set1_epi64(0xFFFF)), 16),
                                 _mm512_and_si512(_mm512_srli_epi64(w, 16), _mm512_set1_epi64(0xFF)));
    k3 = _mm512_or_si512(k3, _mm512_set1_epi64(3 << 8));
    /* 4 and 5 bytes: the last four bytes + (the first four << 32) */
    const __m512i hi = _mm512_slli_epi64(lo32, 32);
    const __m512i k4 = _mm512_add_epi64(lo32, hi);
    const __m512i k5 = _mm512_add_epi64(_mm512_and_si512(_mm512_srli_epi64(w, 8), _mm512_set1_epi64(0xFFFFFFFF)), hi);
    const __m512i top = _mm512_set1_epi64((long long)GROUP_CHAR);
    const __m512i a = _mm512_or_si512(lex_avalanche(_mm512_xor_si512(k3, _mm512_set1_epi64((long long)fl->f3))), top);
    const __m512i b = _mm512_or_si512(lex_rrmxmx(_mm512_xor_si512(k4, _mm512_set1_epi64((long long)fl->f4)), 4), top);
    const __m512i c = _mm512_or_si512(lex_rrmxmx(_mm512_xor_si512(k5, _mm512_set1_epi64((long long)fl->f5)), 5), top);
    /* a0 b0 c0 a1 b1 c1 ... a7 b7 c7: a and b by one permute, c put in by a masked one */
    const __m512i ab0 = _mm512_set_epi64(10, 2, 0, 9, 1, 0, 8, 0), c0 = _mm512_set_epi64(0, 0, 1, 0, 0, 0, 0, 0);
    const __m512i ab1 = _mm512_set_epi64(5, 0, 12, 4, 0, 11, 3, 0), c1 = _mm512_set_epi64(0, 4, 0, 0, 3, 0, 0, 2);
    const __m512i ab2 = _mm512_set_epi64(0, 15, 7, 0, 14, 6, 0, 13), c2 = _mm512_set_epi64(7, 0, 0, 6, 0, 0, 5, 0);
    _mm512_storeu_si512(out, _mm512_mask_permutexvar_epi64(_mm512_permutex2var_epi64(a, ab0, b), 0x24, c0, c));
    _mm512_storeu_si512(out + 8, _mm512_mask_permutexvar_epi64(_mm512_permutex2var_epi64(a, ab1, b), 0x49, c1, c));
    _mm512_storeu_si512(out + 16, _mm512_mask_permutexvar_epi64(_mm512_permutex2var_epi64(a, ab2, b), 0x92, c2, c));
}

#define LEX_AVX2 __attribute__((target("avx2")))

/* 64-bit products of four lanes by a constant (b, and bhi its high half) from 32-bit ones: AVX2 has
 * no 64-bit multiply */
LEX_AVX2 static inline __m256i lex_mul64(__m256i a, __m256i b, __m256i bhi) {
    const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b), _mm256_mul_epu32(a, bhi));
    return _mm256_add_epi64(_mm256_mul_epu32(a, b), _mm256_slli_epi64(cross, 32));
}

#define LEX_MUL64_K(a, k) lex_mul64((a), _mm256_set1_epi64x((long long)(k)), _mm256_set1_epi64x((long long)((k) >> 32)))

LEX_AVX2 static inline __m256i lex_avalanche4(__m256i h) {
    h = _mm256_xor_si256(h, _mm256_srli_epi64(h, 33));
    h = LEX_MUL64_K(h, XXH_PRIME64_2);
    h = _mm256_xor_si256(h, _mm256_srli_epi64(h, 29));
    h = LEX_MUL64_K(h, XXH_PRIME64_3);
    return _mm256_xor_si256(h, _mm256_srli_epi64(h, 32));
}

LEX_AVX2 static inline __m256i lex_rrmxmx4(__m256i h, long long len) {
    const __m256i r49 = _mm256_or_si256(_mm256_slli_epi64(h, 49), _mm256_srli_epi64(h, 15));
    const __m256i r24 = _mm256_or_si256(_mm256_slli_epi64(h, 24), _mm256_srli_epi64(h, 40));
    h = _mm256_xor_si256(h, _mm256_xor_si256(r49, r24));
    h = LEX_MUL64_K(h, 0x9FB21C651E98DF25ULL);
    h = _mm256_xor_si256(h, _mm256_add_epi64(_mm256_srli_epi64(h, 35), _mm256_set1_epi64x(len)));
    h = LEX_MUL64_K(h, 0x9FB21C651E98DF25ULL);
    return _mm256_xor_si256(h, _mm256_srli_epi64(h, 28));
}

/* grams8_avx512 with AVX2: four positions a vector, two vectors */
LEX_AVX2 static void grams8_avx2(const char *g, const gram_flips *fl, uint64_t *out) {
    static const uint8_t pick[32] = {0, 1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7, 8,   /* lane k: bytes k..k+7 */
                                     2, 3, 4, 5, 6, 7, 8, 9, 3, 4, 5, 6, 7, 8, 9, 10};
    const __m256i idx = _mm256_loadu_si256((const __m256i *)pick);
    const __m256i top = _mm256_set1_epi64x((long long)GROUP_CHAR), m32 = _mm256_set1_epi64x(0xFFFFFFFF);
    for (int half = 0; half < 2; half++) {
        const __m256i w = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(g + 4 * half))), idx);
        const __m256i lo32 = _mm256_and_si256(w, m32);
        __m256i k3 = _mm256_or_si256(_mm256_slli_epi64(_mm256_and_si256(w, _mm256_set1_epi64x(0xFFFF)), 16),
                                     _mm256_and_si256(_mm256_srli_epi64(w, 16), _mm256_set1_epi64x(0xFF)));
        k3 = _mm256_or_si256(k3, _mm256_set1_epi64x(3 << 8));
        const __m256i hi = _mm256_slli_epi64(lo32, 32);
        const __m256i k4 = _mm256_add_epi64(lo32, hi);
        const __m256i k5 = _mm256_add_epi64(_mm256_and_si256(_mm256_srli_epi64(w, 8), m32), hi);
        uint64_t t[12];
        _mm256_storeu_si256((__m256i *)t, _mm256_or_si256(lex_avalanche4(_mm256_xor_si256(k3, _mm256_set1_epi64x((long long)fl->f3))), top));
        _mm256_storeu_si256((__m256i *)(t + 4), _mm256_or_si256(lex_rrmxmx4(_mm256_xor_si256(k4, _mm256_set1_epi64x((long long)fl->f4)), 4), top));
        _mm256_storeu_si256((__m256i *)(t + 8), _mm256_or_si256(lex_rrmxmx4(_mm256_xor_si256(k5, _mm256_set1_epi64x((long long)fl->f5)), 5), top));
        for (int k = 0; k < 4; k++) {
            out[12 * half + 3 * k] = t[k];
            out[12 * half + 3 * k + 1] = t[4 + k];
            out[12 * half + 3 * k + 2] = t[8 + k];
        }
    }
}

enum { LEX_PORTABLE, LEX_AVX2_LOOP, LEX_AVX512_LOOP };
static int lex_level = -1; /* unknown yet */

static int lex_best(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw"))
        return LEX_AVX512_LOOP;
    return __builtin_cpu_supports("avx2") ? LEX_AVX2_LOOP : LEX_PORTABLE;
}

static int lex_loop(void) { return la_cpu_probe_once(&lex_level, lex_best); }
#endif

const char *la_cpu_lexical_kernel(void) {
#ifdef LA_LEX_VECTORS
    static const char *const names[] = {"portable loop", "AVX2", "AVX-512"};
    return names[lex_loop()];
#else
    return "portable loop";
#endif
}

int la_cpu_lexical_loop(int most) {
#ifdef LA_LEX_VECTORS
    int best = lex_best();
    __atomic_store_n(&lex_level, most < best ? (most < 0 ? 0 : most) : best, __ATOMIC_RELAXED);
    return best;
#else
    (void)most;
    return 0;
#endif
}

/* The 3-, 4- and 5-grams at code point j of pad (cp: the code points' offsets, five more after j)
 * into out[0..3). Where the five are single bytes the lengths are constants: the same calls,
 * without the hash's dispatch on the length, three chains side by side. */
static inline void grams1(const char *pad, const uint32_t *cp, size_t j, const uint64_t seeds[3], uint64_t *out) {
    const char *g = pad + cp[j];
    if (cp[j + 5] - cp[j] == 5) {
        out[0] = XXH3_64bits_withSeed(g, 3, seeds[0]) | GROUP_CHAR;
        out[1] = XXH3_64bits_withSeed(g, 4, seeds[1]) | GROUP_CHAR;
        out[2] = XXH3_64bits_withSeed(g, 5, seeds[2]) | GROUP_CHAR;
    } else {
        for (size_t n = 3; n <= 5; n++) out[n - 3] = XXH3_64bits_withSeed(g, cp[j + n] - cp[j], seeds[n - 3]) | GROUP_CHAR;
    }
}

/* Collect the features of one text into f->h, in text order. The group bit replaces the top bit of
 * the hash, so the df slot (top bits) differs per group as well. */
static int collect(const char *s, size_t len, uint64_t seed, feats *f) {
    f->n = 0;
    if (!s) len = 0;
    /* words: unigrams and bigrams */
    size_t i = 0, prev_b = 0, prev_e = 0;
    int have_prev = 0;
    while (i < len) {
        while (i < len && !la_lex_word_byte((unsigned char)s[i])) i++;
        size_t b = i;
        while (i < len && la_lex_word_byte((unsigned char)s[i])) i++;
        if (i == b) break;
        uint64_t h = XXH3_64bits_withSeed(s + b, i - b, seed ^ 0x1ull);
        if (push(f, h & ~GROUP_CHAR)) return -1;
        if (have_prev) {
            uint64_t h1 = XXH3_64bits_withSeed(s + prev_b, prev_e - prev_b, seed ^ 0x2ull);
            uint64_t h2 = XXH3_64bits_withSeed(s + b, i - b, h1);
            if (push(f, h2 & ~GROUP_CHAR)) return -1;
        }
        prev_b = b, prev_e = i, have_prev = 1;
    }
    /* characters: 3-5 code points of " " + text + " " */
    if (len > 0) {
        /* 16 bytes more: the vector loop reads 16 from a position 12 code points before the end */
        if (grow((void **)&f->pad, &f->padcap, len + 2 + 16, 1)) return -1;
        f->pad[0] = ' ';
        memcpy(f->pad + 1, s, len);
        f->pad[len + 1] = ' ';
        memset(f->pad + len + 2, 0, 16);
        size_t plen = len + 2, ncp = 0;
        if (grow((void **)&f->cp, &f->cpcap, plen + 1, sizeof *f->cp)) return -1;
        for (size_t j = 0; j < plen; j++)
            if (la_lex_cp_start((unsigned char)f->pad[j])) f->cp[ncp++] = (uint32_t)j;
        f->cp[ncp] = (uint32_t)plen;
        /* every n-gram of n code points, 3 <= n <= 5; room for them all at once */
        if (grow((void **)&f->h, &f->cap, f->n + 3 * ncp, sizeof *f->h)) return -1;
        const uint64_t seeds[3] = {seed ^ 0x13ull, seed ^ 0x14ull, seed ^ 0x15ull};
        const char *pad = f->pad;
        const uint32_t *cp = f->cp;
        uint64_t *out = f->h + f->n;
        size_t j = 0;
#ifdef LA_LEX_VECTORS
        const int loop = lex_loop();
        if (loop != LEX_PORTABLE) {
            /* where the twelve code points from j are single bytes, eight positions at once */
            const gram_flips fl = gram_flips_of(seeds[0], seeds[1], seeds[2]);
            while (j + 12 <= ncp) {
                if (cp[j + 12] - cp[j] == 12) {
                    if (loop == LEX_AVX512_LOOP)
                        grams8_avx512(pad + cp[j], &fl, out);
                    else
                        grams8_avx2(pad + cp[j], &fl, out);
                    out += 24;
                    j += 8;
                } else {
                    grams1(pad, cp, j++, seeds, out);
                    out += 3;
                }
            }
        }
#endif
        for (; j + 5 <= ncp; j++, out += 3) grams1(pad, cp, j, seeds, out);
        for (; j < ncp; j++)
            for (size_t n = 3; n <= 5 && j + n <= ncp; n++)
                *out++ = XXH3_64bits_withSeed(pad + cp[j], cp[j + n] - cp[j], seeds[n - 3]) | GROUP_CHAR;
        f->n = (size_t)(out - f->h);
    }
    return 0;
}

/* The features of one text, counted (count_feats). */
static int extract(const char *s, size_t len, uint64_t seed, feats *f) {
    return collect(s, len, seed, f) || count_feats(f);
}

static void feats_free(feats *f) {
    free(f->tab);
    free(f->pos);
    free(f->key);
    free(f->cnt);
    free(f->w);
    free(f->h);
    free(f->pad);
    free(f->cp);
}

/* Pass 1 for one collected text: one more document for each distinct feature's slot in df. The
 * count table only tells a new feature from a repeat here: no order, counts or keys are kept. */
static int add_document(feats *f, uint32_t *df) {
    size_t mask;
    if (reset_table(f, &mask)) return -1;
    uint64_t *tab = f->tab;
    const uint64_t *h = f->h;
    const size_t n = f->n;
    int zero = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + COUNT_AHEAD < n) {
            LA_PREFETCH(&tab[(size_t)h[i + COUNT_AHEAD] & mask]);
            LA_PREFETCH(&df[la_lex_df_slot(h[i + COUNT_AHEAD])]);
        }
        const uint64_t x = h[i];
        if (x == 0) { /* the empty slot's value: counted aside */
            if (!zero) zero = 1, df[la_lex_df_slot(0)]++;
            continue;
        }
        size_t slot;
        if (find_or_add(tab, mask, x, &slot)) df[la_lex_df_slot(x)]++;
    }
    return 0;
}

/* The idf that df_finish_slot left in slot s of the shared table. */
static inline float idf_of(const uint32_t *idf, size_t s) {
    float v;
    memcpy(&v, &idf[s], sizeof v);
    return v;
}

/* la_lex_dim, with a mask in place of the division when dim is a power of two (the same value). */
static inline uint32_t dim_of(uint64_t h, uint32_t dim, uint32_t pow2_mask) {
    return pow2_mask ? (uint32_t)h & pow2_mask : la_lex_dim(h, dim);
}

/* The vector of one counted text: sublinear tf times idf per distinct feature, each group (words,
 * characters) scaled to carry `share` of the squared norm, hashed into out (dim floats, zeroed). */
static int write_vector(feats *f, const uint32_t *idf, const float *tf_table, uint32_t dim, float word_share,
                        float *out) {
    if (grow((void **)&f->w, &f->wcap, f->nused + 1, sizeof *f->w)) return -1;
    const uint64_t *key = f->key;
    double ss[2] = {0.0, 0.0};
    for (size_t i = 0; i < f->nused; i++) {
        if (i + PREFETCH_AHEAD < f->nused) LA_PREFETCH(&idf[la_lex_df_slot(key[i + PREFETCH_AHEAD])]);
        uint32_t c = f->cnt[i];
        float tf = c < TF_TABLE ? tf_table[c] : la_lex_tf(c);
        float w = tf * idf_of(idf, la_lex_df_slot(key[i]));
        f->w[i] = w;
        ss[(key[i] & GROUP_CHAR) != 0] += (double)w * w;
    }
    double scale[2];
    scale[0] = ss[0] > 0.0 ? sqrt((double)word_share / ss[0]) : 0.0;
    scale[1] = ss[1] > 0.0 ? sqrt((double)(1.0f - word_share) / ss[1]) : 0.0;
    const uint32_t pow2_mask = (dim & (dim - 1)) == 0 ? dim - 1 : 0;
    for (size_t i = 0; i < f->nused; i++) {
        uint64_t h = key[i];
        out[dim_of(h, dim, pow2_mask)] += (float)(f->w[i] * scale[(h & GROUP_CHAR) != 0]) * la_lex_sign(h);
    }
    return 0;
}

/* Scale v (dim floats) to unit length; a zero vector stays zero. */
static void normalize_row(float *v, uint32_t dim) {
    double ss = 0.0;
    for (uint32_t k = 0; k < dim; k++) ss += (double)v[k] * v[k];
    if (ss > 0.0) {
        float inv = (float)(1.0 / sqrt(ss));
        for (uint32_t k = 0; k < dim; k++) v[k] *= inv;
    }
}

/* The document-frequency tables: the shared one (df: counts during the first pass, then the bits of
 * each slot's idf as a float) and one per thread after the first. */
typedef struct df_tables {
    uint32_t *df;
    uint32_t **extra;
    int nextra;
} df_tables;

static void df_tables_free(df_tables *t) {
    for (int i = 0; i < t->nextra; i++) free(t->extra[i]);
    free(t->extra);
    free(t->df);
}

static int df_tables_new(int threads, df_tables *t) {
    memset(t, 0, sizeof *t);
    t->df = calloc(DF_SLOTS, sizeof *t->df);
    if (!t->df) return -1;
    if (threads <= 1) return 0;
    t->extra = calloc((size_t)threads - 1, sizeof *t->extra);
    if (!t->extra) return -1;
    for (; t->nextra < threads - 1; t->nextra++) {
        t->extra[t->nextra] = calloc(DF_SLOTS, sizeof **t->extra);
        if (!t->extra[t->nextra]) return -1;
    }
    return 0;
}

/* The table thread `tid` counts into. */
static uint32_t *df_table_of(const df_tables *t, int tid) {
    return tid == 0 || tid > t->nextra ? t->df : t->extra[tid - 1];
}

/* Slot s after the first pass: the sum of every thread's count, turned into the slot's idf. */
static void df_finish_slot(df_tables *t, size_t s, uint64_t ndocs) {
    uint32_t d = t->df[s];
    for (int i = 0; i < t->nextra; i++) d += t->extra[i][s];
    float idf = d ? la_lex_idf(ndocs, d) : 0.0f;
    memcpy(&t->df[s], &idf, sizeof idf);
}

static void set_failed(int *failed) {
#ifdef LA_HAVE_OPENMP
#pragma omp atomic write
#endif
    *failed = 1;
}

static int get_failed(const int *failed) {
    int v;
#ifdef LA_HAVE_OPENMP
#pragma omp atomic read
#endif
    v = *failed;
    return v;
}

static la_status check_params(const la_embed_lexical_params *p, size_t n, const void *texts, const void *lens,
                              const void *out) {
    if (!p || p->dim == 0 || !(p->word_weight >= 0.0f && p->word_weight <= 1.0f) ||
        (n && (!texts || !lens || !out)))
        return la_error(LA_EINVAL, "lexical embedding: bad parameters");
    return LA_OK;
}

static int threads_of(const la_embed_lexical_params *p) {
    int nt = 1;
#ifdef LA_HAVE_OPENMP
    nt = la_omp_threads(p->threads);
#endif
    return nt < 1 ? 1 : nt;
}

struct la_lexical_idf {
    df_tables t; /* t.df: each slot's idf as the bits of a float */
    uint64_t seed;
};

void la_lexical_idf_free(la_lexical_idf *idf) {
    if (!idf) return;
    df_tables_free(&idf->t);
    free(idf);
}

la_status la_cpu_lexical_idf(const char *const *texts, const size_t *lens, size_t n,
                             const la_embed_lexical_params *p, la_lexical_idf **out) {
    *out = NULL;
    LA_TRY(check_params(p, n, texts, lens, out));
    const int nt = threads_of(p);
    la_lexical_idf *idf = calloc(1, sizeof *idf);
    if (!idf || df_tables_new(nt, &idf->t)) {
        la_lexical_idf_free(idf);
        return la_error(LA_ENOMEM, "lexical embedding: out of memory");
    }
    idf->seed = p->seed;
    int failed = 0;
#ifdef LA_HAVE_OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        feats f = {0};
        uint32_t *mine = df_table_of(&idf->t, THREAD_NUM());
#ifdef LA_HAVE_OPENMP
#pragma omp for schedule(dynamic, 64)
#endif
        for (size_t r = 0; r < n; r++) {
            if (collect(texts[r], lens[r], p->seed, &f) || add_document(&f, mine)) set_failed(&failed);
        }
#ifdef LA_HAVE_OPENMP
#pragma omp for schedule(static)
#endif
        for (size_t s = 0; s < DF_SLOTS; s++) df_finish_slot(&idf->t, s, n);
        feats_free(&f);
    }
    /* the per-thread counts are summed into the shared table: only it is read from here on */
    for (int i = 0; i < idf->t.nextra; i++) free(idf->t.extra[i]);
    free(idf->t.extra);
    idf->t.extra = NULL;
    idf->t.nextra = 0;
    if (failed) {
        la_lexical_idf_free(idf);
        return la_error(LA_ENOMEM, "lexical embedding: out of memory");
    }
    *out = idf;
    return LA_OK;
}

la_status la_cpu_embed_lexical_with(const la_lexical_idf *idf, const char *const *texts, const size_t *lens,
                                    size_t n, const la_embed_lexical_params *p, float *out) {
    LA_TRY(check_params(p, n, texts, lens, out));
    if (!idf || idf->seed != p->seed)
        return la_error(LA_EINVAL, "lexical embedding: the frequencies were counted with another seed");
    if (n == 0) return LA_OK;
    const uint32_t dim = p->dim;
    const int nt = threads_of(p);
    float tf_table[TF_TABLE];
    tf_table[0] = 0.0f;
    for (uint32_t c = 1; c < TF_TABLE; c++) tf_table[c] = la_lex_tf(c);
    int failed = 0;
#ifdef LA_HAVE_OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        feats f = {0};
#ifdef LA_HAVE_OPENMP
#pragma omp for schedule(dynamic, 64)
#endif
        for (size_t r = 0; r < n; r++) {
            if (get_failed(&failed)) continue;
            float *v = out + r * dim;
            memset(v, 0, dim * sizeof *v);
            if (p->skip && p->skip[r]) continue;
            if (extract(texts[r], lens[r], p->seed, &f) ||
                write_vector(&f, idf->t.df, tf_table, dim, p->word_weight, v))
                set_failed(&failed);
            else
                normalize_row(v, dim);
        }
        feats_free(&f);
    }
    if (failed) return la_error(LA_ENOMEM, "lexical embedding: out of memory");
    return LA_OK;
}

la_status la_cpu_embed_lexical(const char *const *texts, const size_t *lens, size_t n,
                               const la_embed_lexical_params *p, float *out) {
    LA_TRY(check_params(p, n, texts, lens, out));
    if (n == 0) return LA_OK;
    la_lexical_idf *idf;
    LA_TRY(la_cpu_lexical_idf(texts, lens, n, p, &idf));
    la_status s = la_cpu_embed_lexical_with(idf, texts, lens, n, p, out);
    la_lexical_idf_free(idf);
    return s;
}
