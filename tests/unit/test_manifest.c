/*
 * test_manifest.c - manifests of rows read from a plain JSONL file, whose records the table keeps
 * as places in the file (la_table_raw_place): the lines copied back are the lines read, in any row
 * order and across blocks; a file changed, truncated or removed after it was read is an error
 * naming the file and line; a file read whole keeps its records in memory. Each test runs with the
 * files mapped (the default) and read (LEAKAUDIT_READ_MAP=0); a mapped file cut short while it is
 * mapped ends the process by SIGBUS with a message naming it, and leaves no output folder behind;
 * a SIGBUS elsewhere reaches the process's own handler, which is back once no file is mapped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "input.h"
#include "leakaudit.h"
#include "load.h"
#include "manifest.h"
#include "outdir.h"

typedef struct fixture {
    char dir[64];
    char path[128];
    la_table *t;
    la_loader L;
    la_load_opts o;
    char *want;      /* the lines a manifest of every row in input order holds */
    size_t wantlen;
} fixture;

/* Rows of many lengths, CRLF endings, blank lines, a BOM and one line longer than a copy block. */
static void write_input(fixture *f)
{
    FILE *fp = fopen(f->path, "wb");
    assert_non_null(fp);
    la_buf want = {0};
    fputs("\xEF\xBB\xBF", fp);
    for (int i = 0; i < 3000; i++) {
        char line[4200];
        int n = snprintf(line, sizeof line, "{\"id\": \"r%d\", \"text\": \"", i);
        for (int w = 0; w < (i * 37) % 400; w++) n += snprintf(line + n, sizeof line - (size_t)n, "w%d ", (i * w) % 97);
        n += snprintf(line + n, sizeof line - (size_t)n, "\"}");
        fwrite(line, 1, (size_t)n, fp);
        fputs(i % 7 == 0 ? "\r\n" : "\n", fp);
        if (i % 11 == 0) fputs("\n  \n", fp);
        la_buf_putn(&want, line, (size_t)n);
        la_buf_putc(&want, '\n');
        if (i == 1500) { /* a line of 5 MB */
            static char big[5 << 20];
            int m = snprintf(big, sizeof big, "{\"id\": \"big\", \"text\": \"");
            memset(big + m, 'x', sizeof big - (size_t)m - 3);
            memcpy(big + sizeof big - 3, "\"}", 2);
            fwrite(big, 1, sizeof big - 1, fp);
            fputc('\n', fp);
            la_buf_putn(&want, big, sizeof big - 1);
            la_buf_putc(&want, '\n');
        }
    }
    fputs("{\"id\": \"last\", \"text\": \"no newline\"}", fp);
    la_buf_puts(&want, "{\"id\": \"last\", \"text\": \"no newline\"}\n");
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(la_buf_status(&want), LA_OK);
    f->want = want.p;
    f->wantlen = want.n;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/la-test-manifest-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    snprintf(f->path, sizeof f->path, "%s/rows.jsonl", f->dir);
    write_input(f);
    if (la_table_new(&f->t) != LA_OK) return -1;
    la_load_opts_default(&f->o);
    f->o.limits.max_row_bytes = 8 << 20; /* the 5 MB line is a row */
    la_loader_init(&f->L, f->t, &f->o);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    unlink(f->path);
    rmdir(f->dir);
    la_loader_free(&f->L);
    la_table_free(f->t);
    free(f->want);
    free(f);
    unsetenv("LEAKAUDIT_READ_BLOCK");
    unsetenv("LEAKAUDIT_READ_MAP");
    return 0;
}

/* The same fixture, the files read rather than mapped. */
static int setup_read(void **state)
{
    setenv("LEAKAUDIT_READ_MAP", "0", 1);
    return setup(state);
}

/* The manifest of every row, in input order or reversed. */
static la_status manifest(const fixture *f, int reversed, la_buf *out)
{
    size_t n = la_table_nrows(f->t);
    uint32_t *rows = malloc(n * sizeof *rows);
    assert_non_null(rows);
    for (size_t i = 0; i < n; i++) rows[i] = (uint32_t)(reversed ? n - 1 - i : i);
    out->n = 0;
    la_status s = la_manifest_buf(f->t, rows, n, out);
    if (s != LA_OK) print_message("manifest (%s): %s\n", reversed ? "reversed" : "in order", la_last_error());
    free(rows);
    return s;
}

/* The lines of want in reverse order. */
static char *reversed_lines(const char *p, size_t n)
{
    char *r = malloc(n);
    assert_non_null(r);
    size_t w = 0, end = n;
    while (end > 0) {
        size_t start = end - 1;
        while (start > 0 && p[start - 1] != '\n') start--;
        memcpy(r + w, p + start, end - start);
        w += end - start;
        end = start;
    }
    return r;
}

static void test_lines_come_back_from_the_file(void **state)
{
    fixture *f = *state;
    assert_int_equal(la_load_file(&f->L, f->path, "dev"), LA_OK);
    size_t n = la_table_nrows(f->t);
    assert_int_equal(n, 3002);
    const la_row *r = la_table_rows_const(f->t);
    la_raw_place at;
    for (size_t i = 0; i < n; i++) {
        assert_null(r[i].raw); /* the table holds no copy of the input */
        assert_true(la_table_raw_place(f->t, i, &at));
    }
    la_buf b = {0};
    assert_int_equal(manifest(f, 0, &b), LA_OK);
    assert_int_equal(b.n, f->wantlen);
    assert_memory_equal(b.p, f->want, b.n);
    /* backwards: every line's block read again, each line staged before the next read (the
     * staging buffer fills many times over, and the 5 MB line does not fit it) */
    assert_int_equal(manifest(f, 1, &b), LA_OK);
    char *rev = reversed_lines(f->want, f->wantlen);
    assert_int_equal(b.n, f->wantlen);
    assert_memory_equal(b.p, rev, b.n);
    free(rev);
    /* rows scattered through the file, with gaps of every size between them (a block ends before
     * a gap of more than LA_MANIFEST_GAP bytes): every fifth row, then runs of rows with none, and the
     * 5 MB line among them */
    const char **line = malloc(n * sizeof *line);
    size_t *len = malloc(n * sizeof *len);
    uint32_t *rows = malloc(n * sizeof *rows);
    assert_non_null(line);
    assert_non_null(len);
    assert_non_null(rows);
    for (size_t i = 0, at0 = 0; i < n; i++) {
        const char *e = memchr(f->want + at0, '\n', f->wantlen - at0);
        assert_non_null(e);
        line[i] = f->want + at0;
        len[i] = (size_t)(e - line[i]) + 1;
        at0 += len[i];
    }
    for (int round = 0; round < 2; round++) {
        size_t m = 0;
        la_buf want = {0};
        for (size_t i = 0; i < n; i++) {
            int take = round ? (i / 40) % 3 == 0 && i % 40 < 17 : i % 5 == 0 || i == 1501;
            if (!take) continue;
            rows[m++] = (uint32_t)i;
            la_buf_putn(&want, line[i], len[i]);
        }
        b.n = 0;
        assert_int_equal(la_manifest_buf(f->t, rows, m, &b), LA_OK);
        assert_int_equal(b.n, want.n);
        assert_memory_equal(b.p, want.p, b.n);
        la_buf_free(&want);
    }
    free(line);
    free(len);
    free(rows);
    la_buf_free(&b);
}

/* Overwrite one byte at `off` of the file. */
static void poke(const char *path, long off, char c)
{
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, off, SEEK_SET), 0);
    fputc(c, fp);
    assert_int_equal(fclose(fp), 0);
}

static void test_a_changed_file_is_an_error(void **state)
{
    fixture *f = *state;
    assert_int_equal(la_load_file(&f->L, f->path, "dev"), LA_OK);
    const la_row *r = la_table_rows_const(f->t);
    la_raw_place at;
    assert_true(la_table_raw_place(f->t, 2000, &at));
    char line[64];
    snprintf(line, sizeof line, "rows.jsonl:%u: the line is not the one the audit read", r[2000].line);
    poke(f->path, (long)at.offset + 12, 'Z'); /* same size, one byte of row 2000's line */
    la_buf b = {0};
    assert_int_equal(manifest(f, 0, &b), LA_EINPUT);
    assert_non_null(strstr(la_last_error(), line));
    assert_non_null(strstr(la_last_error(), "run the audit again"));
    /* shorter: the last row's line is gone */
    assert_true(la_table_raw_place(f->t, la_table_nrows(f->t) - 1, &at));
    assert_int_equal(truncate(f->path, (off_t)at.offset + 5), 0);
    size_t last = la_table_nrows(f->t) - 1;
    uint32_t rows[1] = {(uint32_t)last};
    b.n = 0;
    assert_int_equal(la_manifest_buf(f->t, rows, 1, &b), LA_EINPUT);
    assert_non_null(strstr(la_last_error(), "shorter than when the audit read it"));
    /* removed */
    assert_int_equal(unlink(f->path), 0);
    b.n = 0;
    assert_int_equal(la_manifest_buf(f->t, rows, 1, &b), LA_EINPUT);
    assert_non_null(strstr(la_last_error(), "cannot open it again"));
    la_buf_free(&b);
}

/* Read whole (LEAKAUDIT_READ_BLOCK=0), the table keeps every record: no file needed afterwards. */
static void test_a_file_read_whole_keeps_its_records(void **state)
{
    fixture *f = *state;
    setenv("LEAKAUDIT_READ_BLOCK", "0", 1);
    assert_int_equal(la_load_file(&f->L, f->path, "dev"), LA_OK);
    la_raw_place at;
    for (size_t i = 0; i < la_table_nrows(f->t); i++) {
        assert_non_null(la_table_rows_const(f->t)[i].raw);
        assert_false(la_table_raw_place(f->t, i, &at));
    }
    assert_int_equal(unlink(f->path), 0);
    la_buf b = {0};
    assert_int_equal(manifest(f, 0, &b), LA_OK);
    assert_int_equal(b.n, f->wantlen);
    assert_memory_equal(b.p, f->want, b.n);
    la_buf_free(&b);
}

/* Runs touch(f) in a child whose standard error goes to err (a file); returns its wait status. */
static int in_child(fixture *f, const char *err, void (*touch)(fixture *))
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 2) < 0) _exit(99);
        touch(f);
        _exit(0); /* not reached: the touch faults */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void assert_says_cut_short(const fixture *f, const char *err)
{
    char text[4096] = {0};
    FILE *fp = fopen(err, "r");
    assert_non_null(fp);
    size_t n = fread(text, 1, sizeof text - 1, fp);
    fclose(fp);
    assert_true(n > 0);
    char want[256];
    snprintf(want, sizeof want, "leakaudit: %s: the file was cut short while the audit read it", f->path);
    if (!strstr(text, want)) fail_msg("stderr: %s", text);
    assert_non_null(strstr(text, "run the audit again"));
}

/* Map the input, cut it short, and read a byte past its new end. */
static void touch_cut(fixture *f)
{
    int fd = open(f->path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) _exit(98);
    const char *p = la_input_map(fd, (size_t)st.st_size, f->path, 0);
    if (!p || truncate(f->path, 100) != 0) _exit(97);
    volatile char c = p[(size_t)st.st_size - 10];
    (void)c;
}

/* The same while an output folder is being written: the handler removes it. */
static void touch_cut_writing(fixture *f)
{
    char out[160];
    snprintf(out, sizeof out, "%s/out", f->dir);
    la_outdir od;
    la_buf b = {0};
    la_buf_puts(&b, "x");
    if (la_outdir_begin(out, &od) != LA_OK || la_outdir_write(&od, "a.txt", &b) != LA_OK) _exit(96);
    touch_cut(f);
}

static void test_a_file_cut_short_while_mapped(void **state)
{
    fixture *f = *state;
    char err[160];
    snprintf(err, sizeof err, "%s/err.txt", f->dir);
    int status = in_child(f, err, touch_cut);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGBUS);
    assert_says_cut_short(f, err);

    free(f->want);
    write_input(f); /* whole again */
    status = in_child(f, err, touch_cut_writing);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGBUS);
    assert_says_cut_short(f, err);
    /* nothing of the output was left: no folder out, none beside it */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -v -x -e rows.jsonl -e err.txt", f->dir);
    FILE *ls = popen(cmd, "r");
    assert_non_null(ls);
    char left[256] = {0};
    size_t n = fread(left, 1, sizeof left - 1, ls);
    pclose(ls);
    if (n) fail_msg("left in %s: %s", f->dir, left);
    unlink(err);
}

static void own_bus(int sig)
{
    (void)sig;
    _exit(42);
}

/* A SIGBUS of a mapping that is no input's, while an input is mapped: the process's own handler. */
static void touch_other(fixture *f)
{
    signal(SIGBUS, own_bus);
    int fd = open(f->path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !la_input_map(fd, (size_t)st.st_size, f->path, 0)) _exit(98);
    char other[160];
    snprintf(other, sizeof other, "%s/other.bin", f->dir);
    int fo = open(other, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || ftruncate(fo, 3 * 4096) != 0) _exit(97);
    const char *q = mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, fo, 0);
    if (q == MAP_FAILED || ftruncate(fo, 0) != 0) _exit(96);
    volatile char c = q[2 * 4096];
    (void)c;
}

static void test_other_sigbus_reaches_the_process_handler(void **state)
{
    fixture *f = *state;
    char err[160], other[160];
    snprintf(err, sizeof err, "%s/err.txt", f->dir);
    snprintf(other, sizeof other, "%s/other.bin", f->dir);
    int status = in_child(f, err, touch_other);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 42);
    unlink(other);
    unlink(err);
    /* the handler goes in with the first mapping and out with the last */
    struct sigaction own, now;
    memset(&own, 0, sizeof own);
    own.sa_handler = own_bus;
    sigemptyset(&own.sa_mask);
    struct sigaction before;
    assert_int_equal(sigaction(SIGBUS, &own, &before), 0);
    int fd = open(f->path, O_RDONLY);
    assert_true(fd >= 0);
    const char *a = la_input_map(fd, 100, f->path, 0), *b = la_input_map(fd, 200, f->path, 1);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(sigaction(SIGBUS, NULL, &now), 0);
    assert_true(now.sa_handler != own_bus);
    la_input_unmap(a);
    assert_int_equal(sigaction(SIGBUS, NULL, &now), 0);
    assert_true(now.sa_handler != own_bus);
    la_input_unmap(b);
    assert_int_equal(sigaction(SIGBUS, NULL, &now), 0);
    assert_true(now.sa_handler == own_bus);
    close(fd);
    sigaction(SIGBUS, &before, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lines_come_back_from_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_changed_file_is_an_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_file_read_whole_keeps_its_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lines_come_back_from_the_file, setup_read, teardown),
        cmocka_unit_test_setup_teardown(test_a_changed_file_is_an_error, setup_read, teardown),
        cmocka_unit_test_setup_teardown(test_a_file_cut_short_while_mapped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_sigbus_reaches_the_process_handler, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
