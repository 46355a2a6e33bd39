/* blake2b.c - BLAKE2b as RFC 7693 gives it (see la_blake2b.h). */
#include "la_blake2b.h"

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

static void compress(la_blake2b_state *st, const unsigned char *block, int last)
{
    uint64_t m[16], v[16];
    for (int i = 0; i < 16; i++) m[i] = load64(block + 8 * i);
    for (int i = 0; i < 8; i++) {
        v[i] = st->h[i];
        v[i + 8] = k_iv[i];
    }
    v[12] ^= st->t[0];
    v[13] ^= st->t[1];
    if (last) v[14] = ~v[14];
    /* rounds written out, so each message word's index is a constant and m stays in registers */
#define ROUND(r)                                                          \
    do {                                                                  \
        G(v[0], v[4], v[8], v[12], m[k_sigma[r][0]], m[k_sigma[r][1]]);   \
        G(v[1], v[5], v[9], v[13], m[k_sigma[r][2]], m[k_sigma[r][3]]);   \
        G(v[2], v[6], v[10], v[14], m[k_sigma[r][4]], m[k_sigma[r][5]]);  \
        G(v[3], v[7], v[11], v[15], m[k_sigma[r][6]], m[k_sigma[r][7]]);  \
        G(v[0], v[5], v[10], v[15], m[k_sigma[r][8]], m[k_sigma[r][9]]);  \
        G(v[1], v[6], v[11], v[12], m[k_sigma[r][10]], m[k_sigma[r][11]]); \
        G(v[2], v[7], v[8], v[13], m[k_sigma[r][12]], m[k_sigma[r][13]]);  \
        G(v[3], v[4], v[9], v[14], m[k_sigma[r][14]], m[k_sigma[r][15]]);  \
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
    for (int i = 0; i < 8; i++) st->h[i] ^= v[i] ^ v[i + 8];
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
