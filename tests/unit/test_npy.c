/* test_npy.c - the .npy embeddings reader: float32 and float16 (both byte orders) read back exactly;
 * every bad file (dtype, order, shape, row count, truncation, NaN/inf) is an LA_EINPUT whose message
 * names the file and, for values, the row and column. Files live in a mkdtemp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"

static char dir[64];
static char path[128];

static int setup(void **state) {
    strcpy(dir, "/tmp/la_npy_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Write a .npy with a given header dict and raw payload. */
static const char *write_npy(const char *name, int version, const char *dict, const void *data,
                             size_t nbytes) {
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    size_t dl = strlen(dict), pre = version == 1 ? 10 : 12;
    size_t pad = (64 - (pre + dl + 1) % 64) % 64, hl = dl + pad + 1;
    fwrite("\x93NUMPY", 1, 6, f);
    fputc(version, f);
    fputc(0, f);
    fputc((int)(hl & 0xFF), f);
    fputc((int)((hl >> 8) & 0xFF), f);
    if (version != 1) fputc(0, f), fputc(0, f);
    fwrite(dict, 1, dl, f);
    for (size_t i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    if (nbytes) fwrite(data, 1, nbytes, f);
    fclose(f);
    return path;
}

static void expect_error(const char *p, size_t er, size_t ec, la_status want, const char *needle) {
    float *m = (float *)1;
    size_t r, c;
    assert_int_equal(la_npy_read(p, er, ec, &m, &r, &c), want);
    assert_null(m);
    if (!strstr(la_last_error(), needle)) fail_msg("message '%s' lacks '%s'", la_last_error(), needle);
    assert_non_null(strstr(la_last_error(), p));
}

static void test_float32_round_trip(void **state) {
    float v[6] = {0.5f, -1.25f, 3.0f, 1e-30f, -0.0f, 65504.0f};
    snprintf(path, sizeof path, "%s/ok.npy", dir);
    assert_int_equal(la_npy_write(path, v, 2, 3), LA_OK);
    float *m;
    size_t r, c;
    assert_int_equal(la_npy_read(path, 2, 3, &m, &r, &c), LA_OK);
    assert_int_equal(r, 2);
    assert_int_equal(c, 3);
    assert_memory_equal(m, v, sizeof v);
    free(m);
    assert_int_equal(la_npy_read(path, 0, 0, &m, &r, &c), LA_OK);
    free(m);
}

/* Read through a pipe (no size to check the header against): the matrix grows as values arrive,
 * past its first 1M values, and comes back exact; a pipe that ends early is the same error. */
static void read_through_fifo(const char *file, size_t rows, size_t cols, float **m, la_status *st) {
    char fifo[160];
    snprintf(fifo, sizeof fifo, "%s/pipe.npy", dir);
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the writer: the file's bytes into the pipe */
        FILE *in = fopen(file, "rb"), *out = fopen(fifo, "wb");
        char b[65536];
        size_t n;
        while (in && out && (n = fread(b, 1, sizeof b, in)) > 0) fwrite(b, 1, n, out);
        if (out) fclose(out);
        _exit(0);
    }
    size_t r = 0, c = 0;
    *st = la_npy_read(fifo, 0, 0, m, &r, &c);
    int status;
    waitpid(pid, &status, 0);
    if (*st == LA_OK) {
        assert_int_equal(r, rows);
        assert_int_equal(c, cols);
    }
    unlink(fifo);
}

static void test_read_from_a_pipe(void **state) {
    size_t rows = 300, cols = 4096;
    float *v = malloc(rows * cols * sizeof *v);
    for (size_t i = 0; i < rows * cols; i++) v[i] = (float)((double)(i % 1000) / 7.0 - 50.0);
    char file[160];
    snprintf(file, sizeof file, "%s/big.npy", dir);
    assert_int_equal(la_npy_write(file, v, rows, cols), LA_OK);
    float *m = NULL;
    la_status st;
    read_through_fifo(file, rows, cols, &m, &st);
    if (st != LA_OK) fail_msg("%s", la_last_error());
    assert_memory_equal(m, v, rows * cols * sizeof *v);
    free(m);
    /* the header says 5 rows of 4,000,000; the pipe holds 6 values */
    float f4[6] = {1, 2, 3, 4, 5, 6};
    write_npy("liar.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 4000000), }", f4, sizeof f4);
    snprintf(file, sizeof file, "%s", path);
    m = NULL;
    read_through_fifo(file, 0, 0, &m, &st);
    assert_int_equal(st, LA_EINPUT);
    assert_null(m);
    assert_non_null(strstr(la_last_error(), "row 0: file ends early (header says 5 rows)"));
    free(v);
}

static void test_float16_and_big_endian(void **state) {
    /* 1.0, -2.0, 0.5, smallest subnormal, 65504, -0 */
    unsigned short h[6] = {0x3C00, 0xC000, 0x3800, 0x0001, 0x7BFF, 0x8000};
    const char *p = write_npy("h.npy", 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (3, 2), }",
                              h, sizeof h);
    float *m;
    size_t r, c;
    assert_int_equal(la_npy_read(p, 3, 2, &m, &r, &c), LA_OK);
    assert_true(m[0] == 1.0f && m[1] == -2.0f && m[2] == 0.5f);
    assert_true(m[3] == ldexpf(1.0f, -24));
    assert_true(m[4] == 65504.0f && m[5] == 0.0f && signbit(m[5]));
    free(m);
    unsigned char be[8] = {0x3F, 0x80, 0, 0, 0xC0, 0x40, 0, 0}; /* 1.0, -3.0 */
    p = write_npy("be.npy", 2, "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 2), }", be, 8);
    assert_int_equal(la_npy_read(p, 1, 2, &m, &r, &c), LA_OK);
    assert_true(m[0] == 1.0f && m[1] == -3.0f);
    free(m);
}

static void test_bad_files(void **state) {
    double d8[4] = {0};
    float f4[6] = {1, 2, 3, 4, 5, 6};
    expect_error(write_npy("f8.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }",
                           d8, sizeof d8),
                 0, 0, LA_EINPUT, "dtype '<f8' is not supported");
    expect_error(write_npy("i4.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
                           f4, sizeof f4),
                 0, 0, LA_EINPUT, "dtype '<i4'");
    expect_error(write_npy("fo.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                           f4, sizeof f4),
                 0, 0, LA_EINPUT, "Fortran order");
    expect_error(write_npy("1d.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }",
                           f4, sizeof f4),
                 0, 0, LA_EINPUT, "1 dimension; embeddings must be 2-D");
    expect_error(write_npy("3d.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }",
                           f4, sizeof f4),
                 0, 0, LA_EINPUT, "3 dimensions");
    const char *ok = write_npy("23.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                               f4, sizeof f4);
    expect_error(ok, 5, 0, LA_EINPUT, "2 rows, but the partition has 5 input rows");
    ok = write_npy("23b.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f4,
                   sizeof f4);
    expect_error(ok, 0, 384, LA_EINPUT, "shape (2, 3): expected 384 dimensions");
    expect_error(write_npy("short.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), }",
                           f4, sizeof f4),
                 0, 0, LA_EINPUT, "row 2: file ends early");
    expect_error(write_npy("long.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }",
                           f4, sizeof f4),
                 0, 0, LA_EINPUT, "data continues past the 1 rows");
    /* a small file whose header claims 80 GB: refused from the file size, nothing allocated */
    expect_error(write_npy("huge.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 4000000000), }",
                           f4, sizeof f4),
                 0, 0, LA_EINPUT, "row 0: file ends early (header says 5 rows)");
    /* zero rows of a vast width: a file of no data bytes is that, read as it is with no buffer of
     * the width (tests/fuzz/corpus/npy3.bin holds such a header for libFuzzer's allocation limit) */
    {
        float *m = NULL;
        size_t r = 1, c = 0;
        assert_int_equal(la_npy_read(write_npy("wide0.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 888888888), }",
                                               NULL, 0),
                                     0, 0, &m, &r, &c),
                         LA_OK);
        assert_int_equal(r, 0);
        assert_int_equal(c, 888888888);
        free(m);
    }
    float nan[6] = {1, 2, 3, 4, NAN, 6};
    expect_error(write_npy("nan.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                           nan, sizeof nan),
                 0, 0, LA_EINPUT, "nan.npy: row 1: column 1: value is NaN");
    unsigned short hinf[2] = {0x3C00, 0x7C00};
    expect_error(write_npy("inf.npy", 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2), }",
                           hinf, sizeof hinf),
                 0, 0, LA_EINPUT, "row 0: column 1: value is infinite");
    snprintf(path, sizeof path, "%s/text.npy", dir);
    FILE *f = fopen(path, "w");
    fputs("id,vec\n1,0.5\n", f);
    fclose(f);
    expect_error(path, 0, 0, LA_EINPUT, "not a .npy file");
    snprintf(path, sizeof path, "%s/missing.npy", dir);
    expect_error(path, 0, 0, LA_EIO, "cannot open");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float32_round_trip),
        cmocka_unit_test(test_float16_and_big_endian),
        cmocka_unit_test(test_read_from_a_pipe),
        cmocka_unit_test(test_bad_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
