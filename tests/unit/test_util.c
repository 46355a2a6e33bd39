/*
 * test_util.c - the util layer: checked allocation refuses products that overflow, la_grow
 * doubles and keeps the buffer on failure, and la_sort sorts with its context, stably, the same
 * way as the row comparisons the library uses; `--threads 0` counts the CPUs of the cgroup quota;
 * BLAKE2b gives RFC 7693's digest and libsodium's for every length, key and way of feeding it; an
 * arena hands out aligned memory and strings that keep their bytes, a request larger than a block in
 * a block of its own while the block being filled goes on taking the small ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <sodium.h>

#include "la_alloc.h"
#include "la_arena.h"
#include "la_blake2b.h"
#include "la_cpus.h"
#include "la_scan.h"
#include "la_sort.h"
#include "la_time.h"

static void test_size_products(void **state)
{
    (void)state;
    size_t out = 7;
    assert_int_equal(la_size_mul(3, 5, &out), 1);
    assert_int_equal(out, 15);
    assert_int_equal(la_size_mul(SIZE_MAX / 2 + 1, 2, &out), 0);
    assert_int_equal(out, 15); /* untouched on overflow */
    assert_int_equal(la_size_mul(SIZE_MAX, 0, &out), 1);
    assert_int_equal(out, 0);
    /* a product past SIZE_MAX is a failed allocation, never a short buffer */
    assert_null(la_malloc_n(SIZE_MAX / 4 + 1, 8));
    assert_null(la_malloc_nm(SIZE_MAX / 2, 3, 1));
    assert_null(la_malloc_nm(1u << 20, SIZE_MAX / 4, 8));
    assert_null(la_realloc_n(NULL, SIZE_MAX / 2 + 1, 4));
    /* a count of zero still gives a pointer that may be written once and freed */
    uint32_t *p = la_malloc_n(0, sizeof *p);
    assert_non_null(p);
    p[0] = 1;
    free(p);
    double *z = la_calloc_n(0, sizeof *z);
    assert_non_null(z);
    assert_true(z[0] == 0.0);
    free(z);
}

static void test_grow(void **state)
{
    (void)state;
    int *v = NULL;
    size_t cap = 0;
    assert_int_equal(la_grow((void **)&v, &cap, 1, sizeof *v, 16), 1);
    assert_int_equal(cap, 16);
    assert_int_equal(la_grow((void **)&v, &cap, 17, sizeof *v, 16), 1);
    assert_int_equal(cap, 32);
    for (int i = 0; i < 32; i++) v[i] = i;
    int *before = v;
    assert_int_equal(la_grow((void **)&v, &cap, SIZE_MAX / 2, sizeof *v, 16), 0);
    assert_ptr_equal(v, before); /* kept, still ours to free */
    assert_int_equal(cap, 32);
    assert_int_equal(v[31], 31);
    free(v);
}

typedef struct item {
    int key;
    int seq;
} item;

/* By key, compared through the context's sign, so only a sort that passes ctx gets it right. */
static int cmp_key(const void *x, const void *y, void *ctx)
{
    int sign = *(const int *)ctx;
    const item *a = x, *b = y;
    return sign * ((a->key > b->key) - (a->key < b->key));
}

static void test_sort_context_and_stability(void **state)
{
    (void)state;
    enum { N = 1000 };
    item *v = malloc(N * sizeof *v);
    assert_non_null(v);
    uint32_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 1664525u + 1013904223u;
        v[i].key = (int)(x >> 24) % 17; /* many ties */
        v[i].seq = i;
    }
    int descending = -1;
    la_sort(v, N, sizeof *v, cmp_key, &descending);
    for (int i = 1; i < N; i++) {
        assert_true(v[i - 1].key >= v[i].key);
        if (v[i - 1].key == v[i].key) assert_true(v[i - 1].seq < v[i].seq); /* stable */
    }
    la_sort(v, 0, sizeof *v, cmp_key, &descending); /* nothing to do, no access */
    free(v);
}

static void test_sort_rows_by_id(void **state)
{
    (void)state;
    la_row rows[5];
    memset(rows, 0, sizeof rows);
    const char *ids[5] = {"q3", "a1", "q10", "b", "a0"};
    for (int i = 0; i < 5; i++) rows[i].id = ids[i];
    uint32_t idx[5] = {0, 1, 2, 3, 4};
    la_sort_rows_by_id(idx, 5, rows);
    const uint32_t want[5] = {4, 1, 3, 2, 0}; /* a0 a1 b q10 q3 (byte order) */
    for (int i = 0; i < 5; i++) assert_int_equal(idx[i], want[i]);
}

static int cmp_id_strcmp(const void *x, const void *y, void *ctx)
{
    const la_row *rows = ctx;
    return strcmp(rows[*(const uint32_t *)x].id, rows[*(const uint32_t *)y].id);
}

/* Ids of many shapes (a prefix they all share, lengths across the 8 bytes the sort reads at once,
 * bytes above 0x7F, ties past those 8 bytes, one id a prefix of another): the order of a merge
 * sort by strcmp, index for index. */
static void test_sort_rows_by_id_shapes(void **state)
{
    (void)state;
    enum { N = 3000 };
    static la_row rows[N];
    static char text[N][40];
    static uint32_t idx[N], want[N];
    const char *prefix[4] = {"", "doc-", "gsm8k-train-0000", "\xc3\xa9t\xc3\xa9-"};
    uint64_t x = 88172645463325252ull;
    for (int shape = 0; shape < 8; shape++) {
        size_t n = shape == 7 ? 2 : N;
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int len = (int)(x % (shape < 4 ? 12 : 20));
            int w = snprintf(text[i], sizeof text[i], "%s", prefix[shape % 4]);
            for (int k = 0; k < len && w < 38; k++) {
                uint64_t r = x >> (k * 5 % 59);
                text[i][w++] = shape == 5 ? (char)(0x80 + r % 0x7F) : (char)("ab0129xyz~" [r % 10]);
            }
            text[i][w] = 0;
            if (shape == 6 && i % 3 == 0) snprintf(text[i], sizeof text[i], "same-long-prefix-%05zu", i % 50);
            memset(&rows[i], 0, sizeof rows[i]);
            rows[i].id = text[i];
            idx[i] = want[i] = (uint32_t)(n - 1 - i);
        }
        la_sort_rows_by_id(idx, n, rows);
        la_sort(want, n, sizeof *want, cmp_id_strcmp, rows);
        for (size_t i = 0; i < n; i++) assert_int_equal(idx[i], want[i]);
    }
}

static void test_clock(void **state)
{
    (void)state;
    double a = la_now(), b = la_now();
    assert_true(b >= a);
}

/* A file under the scratch root, its folders made first. */
static void put(const char *root, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* cgroup v2: the smallest quota from the process's cgroup up to the root, rounded up; "max" is
 * none. v1: cpu.cfs_quota_us over cpu.cfs_period_us, -1 is none. No file, no quota. */
static void test_cpu_quota(void **state)
{
    (void)state;
    char root[] = "/tmp/la_cpus_XXXXXX";
    assert_non_null(mkdtemp(root));
    char fs[600], self[600];
    snprintf(fs, sizeof fs, "%s/fs", root);
    snprintf(self, sizeof self, "%s/self", root);
    mkdir(fs, 0755);

    put(root, "self", "0::/kubepods/pod1/c1\n");
    put(root, "fs/cpu.max", "max 100000\n");
    assert_int_equal(la_cpu_quota(fs, self), 0);
    put(root, "fs/kubepods/pod1/c1/cpu.max", "max 100000\n");
    put(root, "fs/kubepods/pod1/cpu.max", "150000 100000\n"); /* 1.5 CPUs: two threads */
    assert_int_equal(la_cpu_quota(fs, self), 2);
    put(root, "fs/kubepods/cpu.max", "100000 100000\n");
    assert_int_equal(la_cpu_quota(fs, self), 1);
    put(root, "self", "0::/\n"); /* inside a container's own cgroup namespace */
    put(root, "fs/cpu.max", "400000 100000\n");
    assert_int_equal(la_cpu_quota(fs, self), 4);

    put(root, "self", "12:memory:/docker/x\n4:cpu,cpuacct:/docker/x\n");
    put(root, "fs/cpu,cpuacct/docker/x/cpu.cfs_quota_us", "250000\n");
    put(root, "fs/cpu,cpuacct/docker/x/cpu.cfs_period_us", "100000\n");
    assert_int_equal(la_cpu_quota(fs, self), 3);
    put(root, "fs/cpu,cpuacct/docker/x/cpu.cfs_quota_us", "-1\n");
    assert_int_equal(la_cpu_quota(fs, self), 0);

    char missing[700];
    snprintf(missing, sizeof missing, "%s/no-such-file", root);
    assert_int_equal(la_cpu_quota(fs, missing), 0);

    /* the memory limit, read the same way: v1's memory hierarchy, then v2's smallest on the path */
    put(root, "fs/memory/docker/x/memory.limit_in_bytes", "2147483648\n");
    assert_int_equal(la_memory_cgroup(fs, self), (size_t)2 << 30);
    put(root, "self", "0::/kubepods/pod1/c1\n");
    assert_int_equal(la_memory_cgroup(fs, self), 0); /* nothing written on the v2 path yet */
    put(root, "fs/kubepods/pod1/c1/memory.max", "max\n");
    put(root, "fs/kubepods/pod1/memory.max", "805306368\n"); /* a pod's 768Mi */
    put(root, "fs/kubepods/memory.max", "4294967296\n");
    assert_int_equal(la_memory_cgroup(fs, self), (size_t)768 << 20);
    assert_int_equal(la_memory_cgroup(fs, missing), 0);
    assert_true(la_memory_usable() >= ((size_t)16 << 20));

    long online = sysconf(_SC_NPROCESSORS_ONLN);
    assert_true(la_cpu_count() >= 1 && la_cpu_count() <= (online > 0 ? online : 1));
    assert_int_equal(la_omp_threads(3), 3);
    assert_true(la_omp_threads(0) >= 1 && la_omp_threads(0) <= la_cpu_count());
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static void test_blake2b(void **state)
{
    (void)state;
    /* RFC 7693, appendix A: BLAKE2b-512("abc") */
    static const unsigned char abc[64] = {
        0xba, 0x80, 0xa5, 0x3f, 0x98, 0x1c, 0x4d, 0x0d, 0x6a, 0x27, 0x97, 0xb6, 0x9f, 0x12, 0xf6, 0xe9,
        0x4c, 0x21, 0x2f, 0x14, 0x68, 0x5a, 0xc4, 0xb7, 0x4b, 0x12, 0xbb, 0x6f, 0xdb, 0xff, 0xa2, 0xd1,
        0x7d, 0x87, 0xc5, 0x39, 0x2a, 0xab, 0x79, 0x2d, 0xc2, 0x52, 0xd5, 0xde, 0x45, 0x33, 0xcc, 0x95,
        0x18, 0xd3, 0x8a, 0xa8, 0xdb, 0xf1, 0x92, 0x5a, 0xb9, 0x23, 0x86, 0xed, 0xd4, 0x00, 0x99, 0x23};
    unsigned char got[64], want[64], key[64];
    assert_int_equal(la_blake2b(got, 64, (const unsigned char *)"abc", 3, NULL, 0), 0);
    assert_memory_equal(got, abc, 64);
    assert_int_equal(la_blake2b(got, 0, (const unsigned char *)"abc", 3, NULL, 0), -1);
    assert_int_equal(la_blake2b(got, 65, (const unsigned char *)"abc", 3, NULL, 0), -1);
    size_t big = (1u << 16) + 77;
    unsigned char *in = malloc(big);
    assert_non_null(in);
    for (size_t i = 0; i < big; i++) in[i] = (unsigned char)(i * 131 + 7);
    for (int i = 0; i < 64; i++) key[i] = (unsigned char)(255 - i);
    static const size_t lens[] = {0, 1, 63, 127, 128, 129, 255, 256, 257, 1000, 4096, (1u << 16) + 77};
    static const size_t keylens[] = {0, 1, 32, 64};
    static const size_t outlens[] = {1, 16, 32, 64};
    /* both compiled rounds where the CPU has BMI2 (portable 1: the baseline's), else the one */
    for (int portable = 0; portable < 2; portable++) {
        la_blake2b_portable(portable);
        for (size_t a = 0; a < sizeof lens / sizeof *lens; a++)
            for (size_t b = 0; b < sizeof keylens / sizeof *keylens; b++)
                for (size_t c = 0; c < sizeof outlens / sizeof *outlens; c++) {
                    size_t n = lens[a], kl = keylens[b], ol = outlens[c];
                    assert_int_equal(crypto_generichash(want, ol, in, n, kl ? key : NULL, kl), 0);
                    assert_int_equal(la_blake2b(got, ol, in, n, kl ? key : NULL, kl), 0);
                    assert_memory_equal(got, want, ol);
                    /* fed in pieces of every size from 0 to 300 bytes */
                    la_blake2b_state st;
                    assert_int_equal(la_blake2b_init(&st, kl ? key : NULL, kl, ol), 0);
                    uint32_t r = (uint32_t)(n * 7 + kl + ol);
                    for (size_t at = 0; at < n;) {
                        r = r * 1103515245u + 12345u;
                        size_t piece = (r >> 16) % 301;
                        if (piece > n - at) piece = n - at;
                        la_blake2b_update(&st, in + at, piece);
                        at += piece;
                    }
                    la_blake2b_final(&st, got, ol);
                    assert_memory_equal(got, want, ol);
                }
    }
    la_blake2b_portable(0);
    free(in);
}

/* The scans against byte loops: texts of 0 to 300 bytes at every offset of a buffer, plain or with
 * one stop byte (>= 0x80 for the ASCII scan; '"', '\\' or a control byte for the JSON one) at any
 * place, a stop byte just past the text (not read as part of it), with the CPU's loops and the
 * 8-byte ones. */
static void test_scans(void **state)
{
    (void)state;
    enum { MOST = 300, PAD = 80 };
    static unsigned char buf[MOST + 2 * PAD];
    static const unsigned char stops_json[] = {'"', '\\', 0, 0x1f, '\n'}, stops_ascii[] = {0x80, 0xc3, 0xff};
    uint32_t r = 12345;
    for (int portable = 0; portable < 2; portable++) {
        la_scan_portable(portable);
        for (int t = 0; t < 4000; t++) {
            r = r * 1103515245u + 12345u;
            size_t n = (r >> 8) % (MOST + 1), off = (r >> 20) % PAD;
            unsigned char *s = buf + off;
            for (size_t i = 0; i < sizeof buf; i++) {
                r = r * 1103515245u + 12345u;
                buf[i] = (unsigned char)(0x20 + (r >> 16) % 0x5f); /* printable ASCII but '"' and '\\' */
                if (buf[i] == '"' || buf[i] == '\\') buf[i] = 'x';
            }
            int json = t % 2;
            if (t % 3 && n) { /* one stop byte inside */
                r = r * 1103515245u + 12345u;
                s[(r >> 8) % n] = json ? stops_json[(r >> 20) % 5] : stops_ascii[(r >> 20) % 3];
            }
            s[n] = json ? '"' : 0x80; /* just past the text */
            size_t want = 0;
            while (want < n && (json ? !(s[want] == '"' || s[want] == '\\' || s[want] < 0x20) : s[want] < 0x80)) want++;
            assert_int_equal(json ? la_scan_json_plain(s, n) : la_scan_ascii(s, n), want);
        }
    }
    la_scan_portable(0);
}

static void test_arena(void **state)
{
    (void)state;
    la_arena a = {.block = 4096};
    void *p[64];
    size_t sizes[64];
    for (int k = 0; k < 64; k++) {
        size_t align = (size_t)1 << (k % 7); /* 1 .. 64 */
        sizes[k] = k == 20 ? 20000 : (size_t)(k * 37 % 300) + 1; /* one larger than a block */
        assert_int_equal(la_arena_take(&a, sizes[k], align, &p[k]), LA_OK);
        assert_int_equal((uintptr_t)p[k] % align, 0);
        memset(p[k], k, sizes[k]);
        if (k == 21) /* right after the large one: in the block the one before it used */
            assert_true((char *)p[21] > (char *)p[19] && (char *)p[21] < (char *)p[19] + 4096);
    }
    const char *str;
    assert_int_equal(la_arena_strdup(&a, "arena", 5, &str), LA_OK);
    assert_string_equal(str, "arena");
    for (int k = 0; k < 64; k++)
        for (size_t i = 0; i < sizes[k]; i++) assert_int_equal(((unsigned char *)p[k])[i], k);
    void *bad;
    assert_int_equal(la_arena_take(&a, 8, 3, &bad), LA_EINVAL);
    la_arena_free(&a);
    assert_null(a.head);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_products),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_cpu_quota),
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_sort_context_and_stability),
        cmocka_unit_test(test_sort_rows_by_id),
        cmocka_unit_test(test_sort_rows_by_id_shapes),
        cmocka_unit_test(test_clock),
        cmocka_unit_test(test_blake2b),
        cmocka_unit_test(test_scans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
