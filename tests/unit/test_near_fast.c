/* test_near_fast.c - the host fast paths of the near tier give the integers of the reference math in
 * kernels/shingle_core.h and minhash_core.h, which the CUDA kernels share: la_cpu_hash_bytes against
 * la_hash_bytes, la_cpu_shingle (64-byte mask scan, 8-byte loads) against a byte-at-a-time shingler
 * written here from the core functions, and la_cpu_minhash (AVX-512 where the host has it) against the
 * portable loop and against la_minhash_key and la_minhash_perm themselves; the portable scan helpers (other hosts) too. Random inputs: lengths 0..100 and longer, every
 * byte value, valid and malformed UTF-8, words across 64-byte block edges and at the end of the text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "minhash_core.h"
#include "near_kernels.h"
#include "shingle_core.h"
/* The portable variants of the scan helpers, compiled here: the library uses SSE2 and little-endian
 * loads on this host, these check the byte-at-a-time code other hosts run. */
#define LA_SHINGLE_PORTABLE 1
#include "shingle_scan.h"

static uint64_t rng_state = 0x1234567887654321ull;

static uint64_t rnd(void)
{
    rng_state += 0x9e3779b97f4a7c15ull;
    return la_mix64(rng_state);
}

/* Random text of len bytes in one of several styles. */
static void fill(unsigned char *p, size_t len, int style)
{
    static const char *utf8[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xd0\xb4", "\xe4\xb8\xad"};
    static const char *bad[] = {"\xc3", "\xe2\x82", "\x80", "\xff", "\xf0\x9f", "\xc0\xaf", "\xed\xa0\x80"};
    static const char punct[] = " \t\n\r\v\f.,;:!?'\"()-_/@[]{}`~";
    size_t i = 0;
    while (i < len) {
        uint64_t r = rnd();
        const char *piece;
        char one[2] = {0, 0};
        switch (style) {
        case 0: /* every byte value */
            p[i++] = (unsigned char)r;
            continue;
        case 1: /* ASCII words of 1..20 letters and single separators */
            if (r % 5 == 0) {
                one[0] = punct[(r >> 8) % (sizeof punct - 1)];
            } else {
                one[0] = (char)("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[(r >> 8) % 62]);
            }
            piece = one;
            break;
        case 2: /* valid UTF-8 mixed with ASCII */
            if (r % 3 == 0)
                piece = utf8[(r >> 8) % 5];
            else {
                one[0] = (char)(r % 7 == 1 ? ' ' : 'a' + (r >> 16) % 26);
                piece = one;
            }
            break;
        default: /* malformed UTF-8 among everything else */
            if (r % 3 == 0)
                piece = bad[(r >> 8) % 7];
            else if (r % 3 == 1)
                piece = utf8[(r >> 8) % 5];
            else {
                one[0] = punct[(r >> 8) % (sizeof punct - 1)];
                piece = one;
            }
            break;
        }
        for (size_t k = 0; piece[k] && i < len; k++) p[i++] = (unsigned char)piece[k];
    }
}

/* The word shingler as the rules state it, one byte at a time, on the core functions only. */
static size_t ref_shingle_words(const unsigned char *p, size_t len, int n, uint64_t *out)
{
    return la_shingle_words(p, len, n, out, (size_t)-1);
}

static void test_hash_bytes(void **state)
{
    unsigned char buf[300];
    for (int it = 0; it < 20000; it++) {
        size_t len = it < 101 ? (size_t)it : rnd() % 101;
        if (it % 50 == 0) len = rnd() % 300;
        fill(buf, len, it % 4);
        /* Every offset 0..7 from an allocation, so the loads meet every alignment; the copy ends at
         * the end of a heap block, so a read past it would show under a memory checker. */
        size_t off = (size_t)it % 8;
        unsigned char *q = malloc(off + len + 1);
        memcpy(q + off, buf, len);
        assert_true(la_cpu_hash_bytes(q + off, len) == la_hash_bytes(q + off, len));
        free(q);
    }
    assert_true(la_cpu_hash_bytes(NULL, 0) == la_hash_bytes((const unsigned char *)"", 0));
}

static void test_portable_helpers(void **state)
{
    unsigned char buf[300];
    for (int it = 0; it < 5000; it++) {
        size_t len = rnd() % 101;
        fill(buf, 200, it % 4);
        assert_true(la_scan_hash_bytes(buf, len) == la_hash_bytes(buf, len));
        uint64_t want = 0;
        for (int j = 0; j < 64; j++) want |= (uint64_t)la_is_word_byte(buf[j]) << j;
        assert_true(la_scan_word_mask64(buf) == want);
        uint64_t digits = 0, want_digits = 0;
        for (int j = 0; j < 64; j++) want_digits |= (uint64_t)(buf[j] >= '0' && buf[j] <= '9') << j;
        assert_true(la_scan_word_digit_mask64(buf, &digits) == want && digits == want_digits);
        size_t base = rnd() % 64, blen = base + rnd() % 100;
        uint64_t bd = 0, bw = la_scan_block_masks(buf, blen, base, &bd), ww = 0, wd = 0;
        for (size_t j = base; j < blen && j < base + 64; j++) {
            ww |= (uint64_t)la_is_word_byte(buf[j]) << (j - base);
            wd |= (uint64_t)(buf[j] >= '0' && buf[j] <= '9') << (j - base);
        }
        assert_true(bw == ww && bd == wd);
        size_t s = rnd() % 50, l = 1 + rnd() % 20;
        assert_true(la_scan_word_token(buf, s, l, s + l + rnd() % 20) == la_hash_bytes(buf + s, l));
    }
}

static void test_word_shingles(void **state)
{
    enum { MAXLEN = 400 };
    unsigned char *buf = malloc(MAXLEN);
    uint64_t got[MAXLEN + 1], want[MAXLEN + 1];
    for (int it = 0; it < 20000; it++) {
        size_t len = it % 3 == 0 ? rnd() % MAXLEN : rnd() % 101;
        if (it < 2 * 101) len = (size_t)it % 101;
        if (it % 97 == 0) len = 64 * (1 + rnd() % 4); /* a word may end exactly at a block edge */
        fill(buf, len, it % 4);
        int n = 1 + (int)(rnd() % 5);
        if (it % 11 == 0) n = 1 + (int)(rnd() % LA_SHINGLE_MAX_N);
        /* The text at the end of its own allocation: the scan must not read past it. */
        unsigned char *q = malloc(len ? len : 1);
        memcpy(q, buf, len);
        size_t nw = ref_shingle_words(q, len, n, want);
        size_t ng = la_cpu_shingle((const char *)q, len, LA_SHINGLE_WORD, n, got, la_shingle_bound(len));
        assert_int_equal(ng, nw);
        assert_memory_equal(got, want, nw * sizeof *got);
        /* A short buffer: the count is still the full count, the prefix the same. */
        if (nw > 1) {
            size_t cap = nw / 2;
            assert_int_equal(la_cpu_shingle((const char *)q, len, LA_SHINGLE_WORD, n, got, cap), nw);
            assert_memory_equal(got, want, cap * sizeof *got);
        }
        free(q);
    }
    free(buf);
}

static void test_minhash_paths(void **state)
{
    static uint64_t h[700];
    static uint32_t fast[LA_MINHASH_MAX_PERM], port[LA_MINHASH_MAX_PERM];
    static const int ks[] = {1, 7, 8, 9, 31, 32, 33, 64, 100, 127, 128, 129, 136, 200, 256, 1024};
    for (int it = 0; it < 400; it++) {
        size_t n = rnd() % 700;
        if (it < 20) n = (size_t)it;
        for (size_t i = 0; i < n; i++) h[i] = it % 5 == 0 ? rnd() % 16 : rnd(); /* also duplicates */
        int k = ks[it % (int)(sizeof ks / sizeof *ks)];
        la_cpu_minhash(h, n, k, fast);
        la_cpu_minhash_portable(h, n, k, port);
        assert_memory_equal(fast, port, (size_t)k * sizeof *fast);
        /* And both against the definition. */
        for (int j = 0; j < k; j += 1 + j / 8) {
            uint32_t a, b;
            la_minhash_param((uint32_t)j, &a, &b);
            uint32_t m = UINT32_MAX;
            for (size_t i = 0; i < n; i++) m = la_minhash_min(m, la_minhash_perm(la_minhash_key(h[i]), a, b));
            assert_true(fast[j] == m);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_bytes),
        cmocka_unit_test(test_portable_helpers),
        cmocka_unit_test(test_word_shingles),
        cmocka_unit_test(test_minhash_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
