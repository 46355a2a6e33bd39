/* blake2b.c - BLAKE2b as RFC 7693 gives it (see la_blake2b.h). */
#include "la_blake2b.h"
#include "la_cpus.h"

#include <string.h>

static const uint64_t k_iv[8] = {0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull,
                                 0xa54ff53a5f1d36f1ull, 0x510e527fade682d1ull, 0x9b05688c2b3e6c1full,
                                 0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull};

static const uint8_t k_sigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

static uint64_t load64(const unsigned char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
#else
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
#endif
}

static void store64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t rotr(uint64_t x, int n) { return x >> n | x << (64 - n); }

#define G(a, b, c, d, x, y)                \
    do {                                   \
        a = a + b + (x);                   \
        d = rotr(d ^ a, 32);               \
        c = c + d;                         \
        b = rotr(b ^ c, 24);               \
        a = a + b + (y);                   \
        d = rotr(d ^ a, 16);               \
        c = c + d;                         \
        b = rotr(b ^ c, 63);               \
    } while (0)

/* The rounds on sixteen named locals rather than an array: GCC then keeps them in registers and
 * spills less (0.79 -> 0.84 GB/s on the Intel machine of the twelfth round, docs/performance.md). */
static inline __attribute__((always_inline)) void compress_body(la_blake2b_state *st, const unsigned char *block, int last)
{
    uint64_t m[16];
    for (int i = 0; i < 16; i++) m[i] = load64(block + 8 * i);
    uint64_t v0 = st->h[0], v1 = st->h[1], v2 = st->h[2], v3 = st->h[3];
    uint64_t v4 = st->h[4], v5 = st->h[5], v6 = st->h[6], v7 = st->h[7];
    uint64_t v8 = k_iv[0], v9 = k_iv[1], v10 = k_iv[2], v11 = k_iv[3];
    uint64_t v12 = k_iv[4] ^ st->t[0], v13 = k_iv[5] ^ st->t[1], v14 = last ? ~k_iv[6] : k_iv[6], v15 = k_iv[7];
    /* rounds written out, so each message word's index is a constant and m stays in registers */
#define ROUND(r)                                                        \
    do {                                                                \
        G(v0, v4, v8, v12, m[k_sigma[r][0]], m[k_sigma[r][1]]);         \
        G(v1, v5, v9, v13, m[k_sigma[r][2]], m[k_sigma[r][3]]);         \
        G(v2, v6, v10, v14, m[k_sigma[r][4]], m[k_sigma[r][5]]);        \
        G(v3, v7, v11, v15, m[k_sigma[r][6]], m[k_sigma[r][7]]);        \
        G(v0, v5, v10, v15, m[k_sigma[r][8]], m[k_sigma[r][9]]);        \
        G(v1, v6, v11, v12, m[k_sigma[r][10]], m[k_sigma[r][11]]);      \
        G(v2, v7, v8, v13, m[k_sigma[r][12]], m[k_sigma[r][13]]);       \
        G(v3, v4, v9, v14, m[k_sigma[r][14]], m[k_sigma[r][15]]);       \
    } while (0)
    ROUND(0);
    ROUND(1);
    ROUND(2);
    ROUND(3);
    ROUND(4);
    ROUND(5);
    ROUND(6);
    ROUND(7);
    ROUND(8);
    ROUND(9);
    ROUND(10);
    ROUND(11);
#undef ROUND
    st->h[0] ^= v0 ^ v8;
    st->h[1] ^= v1 ^ v9;
    st->h[2] ^= v2 ^ v10;
    st->h[3] ^= v3 ^ v11;
    st->h[4] ^= v4 ^ v12;
    st->h[5] ^= v5 ^ v13;
    st->h[6] ^= v6 ^ v14;
    st->h[7] ^= v7 ^ v15;
}

#if defined(__GNUC__) && defined(__x86_64__)
/* The same rounds where the CPU has BMI2: its rotate (rorx) takes three operands and leaves the
 * flags alone, which saves the copies a two-operand rotate needs (0.84 -> 0.87 GB/s). */
#define LA_BLAKE2B_BMI2 1
__attribute__((target("bmi2"))) static void compress_bmi2(la_blake2b_state *st, const unsigned char *block, int last)
{
    compress_body(st, block, last);
}
static int use_bmi2 = -1; /* unknown yet; la_blake2b_portable sets 0 */

static int have_bmi2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("bmi2") != 0;
}
#endif

static void compress(la_blake2b_state *st, const unsigned char *block, int last)
{
#ifdef LA_BLAKE2B_BMI2
    if (la_cpu_probe_once(&use_bmi2, have_bmi2)) {
        compress_bmi2(st, block, last);
        return;
    }
#endif
    compress_body(st, block, last);
}

int la_blake2b_portable(int portable)
{
#ifdef LA_BLAKE2B_BMI2
    int have = have_bmi2();
    __atomic_store_n(&use_bmi2, portable ? 0 : have, __ATOMIC_RELAXED);
    return have;
#else
    (void)portable;
    return 0;
#endif
}

static void count(la_blake2b_state *st, size_t n)
{
    st->t[0] += n;
    if (st->t[0] < n) st->t[1]++;
}

int la_blake2b_init(la_blake2b_state *st, const unsigned char *key, size_t keylen, size_t outlen)
{
    if (outlen < 1 || outlen > LA_BLAKE2B_OUT_MAX || keylen > LA_BLAKE2B_KEY_MAX || (keylen && !key)) return -1;
    memset(st, 0, sizeof *st);
    memcpy(st->h, k_iv, sizeof st->h);
    st->h[0] ^= 0x01010000ull ^ (uint64_t)keylen << 8 ^ (uint64_t)outlen;
    st->outlen = outlen;
    if (keylen) {
        memcpy(st->buf, key, keylen); /* the key is a first block, zero padded */
        st->buflen = LA_BLAKE2B_BLOCK;
    }
    return 0;
}

void la_blake2b_update(la_blake2b_state *st, const unsigned char *in, size_t n)
{
    if (!n) return;
    /* a full buffer is compressed only once more input follows: the last block is final's */
    if (st->buflen) {
        size_t take = LA_BLAKE2B_BLOCK - st->buflen;
        if (take > n) take = n;
        memcpy(st->buf + st->buflen, in, take);
        st->buflen += take;
        in += take;
        n -= take;
        if (!n) return;
        count(st, LA_BLAKE2B_BLOCK);
        compress(st, st->buf, 0);
        st->buflen = 0;
    }
    while (n > LA_BLAKE2B_BLOCK) {
        count(st, LA_BLAKE2B_BLOCK);
        compress(st, in, 0);
        in += LA_BLAKE2B_BLOCK;
        n -= LA_BLAKE2B_BLOCK;
    }
    memcpy(st->buf, in, n);
    st->buflen = n;
}

void la_blake2b_final(la_blake2b_state *st, unsigned char *out, size_t outlen)
{
    count(st, st->buflen);
    memset(st->buf + st->buflen, 0, LA_BLAKE2B_BLOCK - st->buflen);
    compress(st, st->buf, 1);
    unsigned char full[LA_BLAKE2B_OUT_MAX];
    for (int i = 0; i < 8; i++) store64(full + 8 * i, st->h[i]);
    memcpy(out, full, outlen < st->outlen ? outlen : st->outlen);
    memset(st, 0, sizeof *st);
}

int la_blake2b(unsigned char *out, size_t outlen, const unsigned char *in, size_t n, const unsigned char *key,
               size_t keylen)
{
    la_blake2b_state st;
    if (la_blake2b_init(&st, key, keylen, outlen) != 0) return -1;
    la_blake2b_update(&st, in, n);
    la_blake2b_final(&st, out, outlen);
    return 0;
}
