/*
 * test_spill.c - the spill store: blocks keep their bytes after the store releases its pages, the
 * process's resident set falls back when it does (and stays when there is room), a table's strings live in it once asked, and a
 * directory that cannot hold the file, or a file that cannot grow, is an error naming the directory.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "la_arena.h"
#include "la_spill.h"
#include "leakaudit.h"

/* VmRSS of this process in KiB. */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6)) kib = strtol(line + 6, NULL, 10);
    fclose(f);
    return kib;
}

static char *scratch_dir(void)
{
    const char *base = getenv("TMPDIR");
    size_t n = strlen(base ? base : "/tmp") + 32;
    char *d = malloc(n);
    snprintf(d, n, "%s/spill-XXXXXX", base ? base : "/tmp");
    assert_non_null(mkdtemp(d));
    return d;
}

static void test_blocks_keep_their_bytes(void **state)
{
    (void)state;
    char *dir = scratch_dir();
    la_spill *s = NULL;
    assert_int_equal(la_spill_open(dir, &s), LA_OK);
    assert_string_equal(la_spill_dir(s), dir);
    /* 160 blocks of 1 MiB, each filled with its own pattern */
    enum { NB = 160, MB = 1 << 20 };
    unsigned char *b[NB];
    long before = rss_kib();
    for (int k = 0; k < NB; k++) {
        void *p = NULL;
        assert_int_equal(la_spill_alloc(s, MB, &p), LA_OK);
        assert_int_equal((uintptr_t)p % 64, 0);
        b[k] = p;
        assert_int_equal(b[k][0], 0); /* zero-filled */
        for (size_t i = 0; i < MB; i++) b[k][i] = (unsigned char)(k * 31 + i * 7);
    }
    assert_true(la_spill_bytes(s) >= (size_t)NB * MB);
    /* the release thread unmaps the pages once more than 64 MiB are mapped: what stays resident
     * is well under the 160 MiB written */
    long after = rss_kib();
    for (int i = 0; i < 20 && after > before + 80 * 1024; i++) {
        usleep(100 * 1000);
        after = rss_kib();
    }
    assert_true(after < before + 80 * 1024);
    /* every byte is still there, read back from the file's pages */
    for (int k = 0; k < NB; k++)
        for (size_t i = 0; i < MB; i += 4093) assert_int_equal(b[k][i], (unsigned char)(k * 31 + i * 7));
    la_spill_close(s);
    rmdir(dir);
    free(dir);
}

/* With room for them (la_spill_set_mapped_max), the pages stay mapped: read again, they are not
 * faulted in a second time. */
static void test_room_keeps_pages_mapped(void **state)
{
    (void)state;
    char *dir = scratch_dir();
    la_spill *s = NULL;
    assert_int_equal(la_spill_open(dir, &s), LA_OK);
    la_spill_set_mapped_max(s, (size_t)512 << 20);
    enum { NB = 160, MB = 1 << 20 };
    long before = rss_kib();
    for (int k = 0; k < NB; k++) {
        unsigned char *p = NULL;
        assert_int_equal(la_spill_alloc(s, MB, (void **)&p), LA_OK);
        memset(p, k + 1, MB);
    }
    usleep(200 * 1000); /* ten looks of the release thread */
    assert_true(rss_kib() > before + 150 * 1024);
    /* the default again: the next look releases them */
    la_spill_set_mapped_max(s, 0);
    long after = rss_kib();
    for (int i = 0; i < 20 && after > before + 80 * 1024; i++) {
        usleep(100 * 1000);
        after = rss_kib();
    }
    assert_true(after < before + 80 * 1024);
    la_spill_close(s);
    rmdir(dir);
    free(dir);
}

static void test_table_strings_in_the_store(void **state)
{
    (void)state;
    char *dir = scratch_dir();
    la_table *t = NULL;
    assert_int_equal(la_table_new(&t), LA_OK);
    const char *early = NULL;
    assert_int_equal(la_table_strdup(t, "before the spill", 16, &early), LA_OK);
    uint32_t part;
    assert_int_equal(la_table_part(t, "dev", &part), LA_OK);
    la_row r0 = {.id = early, .part = part};
    assert_int_equal(la_table_append(t, &r0, NULL), LA_OK);
    la_raw_place at0 = {.offset = 7, .len = 3, .check = 11};
    assert_int_equal(la_table_set_raw_place(t, 0, &at0), LA_OK);
    assert_null(la_table_spill(t));
    assert_int_equal(la_table_spill_to(t, dir, 0), LA_OK);
    assert_non_null(la_table_spill(t));
    /* the row read before is moved with its place; the rows keep one address as they grow */
    const la_row *rows = la_table_rows_const(t);
    assert_string_equal(rows[0].id, "before the spill");
    enum { NR = 5000 };
    for (size_t i = 1; i < NR; i++) {
        char id[32];
        const char *sid = NULL;
        snprintf(id, sizeof id, "row-%zu", i);
        assert_int_equal(la_table_strdup(t, id, strlen(id), &sid), LA_OK);
        la_row r = {.id = sid, .part = part, .line = (uint32_t)i};
        size_t at = 0;
        assert_int_equal(la_table_append(t, &r, &at), LA_OK);
        assert_int_equal(at, i);
        if (i % 2) {
            la_raw_place pl = {.offset = i * 100, .len = (uint32_t)i, .check = (uint32_t)i * 3};
            assert_int_equal(la_table_set_raw_place(t, i, &pl), LA_OK);
        }
    }
    assert_ptr_equal(la_table_rows_const(t), rows);
    assert_int_equal(la_table_nrows(t), NR);
    la_raw_place got;
    assert_int_equal(la_table_raw_place(t, 0, &got), 1);
    assert_int_equal(got.offset, 7);
    assert_int_equal(la_table_raw_place(t, 4000, &got), 0);
    assert_int_equal(la_table_raw_place(t, 4001, &got), 1);
    assert_int_equal(got.check, 4001 * 3);
    assert_int_equal(la_table_find_id(t, "row-4321"), 4321);
    assert_int_equal(rows[4321].line, 4321);
    assert_int_equal(la_table_find_id(t, "row-5000"), (size_t)-1);
    /* strings of the table and of a worker's arena adopted by it */
    const char *mine = NULL, *worker = NULL;
    assert_int_equal(la_table_strdup(t, "in the store", 12, &mine), LA_OK);
    la_arena a;
    la_table_arena(t, &a, 4096);
    assert_ptr_equal(a.spill, la_table_spill(t));
    char big[10000];
    memset(big, 'x', sizeof big);
    assert_int_equal(la_arena_strdup(&a, big, sizeof big, &worker), LA_OK); /* longer than a block */
    la_table_adopt(t, &a);
    assert_true(la_spill_bytes(la_table_spill(t)) >= sizeof big);
    usleep(500 * 1000); /* released at least once */
    assert_string_equal(early, "before the spill");
    assert_string_equal(mine, "in the store");
    assert_int_equal(strlen(worker), sizeof big);
    assert_int_equal(worker[9999], 'x');
    la_table_free(t);
    rmdir(dir);
    free(dir);
}

static void test_errors_name_the_directory(void **state)
{
    (void)state;
    la_spill *s = NULL;
    assert_int_equal(la_spill_open("/nonexistent/spill/dir", &s), LA_EIO);
    assert_null(s);
    assert_non_null(strstr(la_last_error(), "/nonexistent/spill/dir"));
    assert_non_null(strstr(la_last_error(), "TMPDIR"));
    /* a file that cannot grow past 1 MiB: the second block is refused, not a fault later */
    char *dir = scratch_dir();
    assert_int_equal(la_spill_open(dir, &s), LA_OK);
    struct rlimit old, small = {1 << 20, 1 << 20};
    getrlimit(RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    void *p = NULL;
    assert_int_equal(la_spill_alloc(s, 512 << 10, &p), LA_OK);
    assert_int_equal(la_spill_alloc(s, 4 << 20, &p), LA_EIO);
    assert_null(p);
    assert_non_null(strstr(la_last_error(), dir));
    assert_non_null(strstr(la_last_error(), "cannot spill"));
    setrlimit(RLIMIT_FSIZE, &old);
    la_spill_close(s);
    rmdir(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_keep_their_bytes),
        cmocka_unit_test(test_room_keeps_pages_mapped),
        cmocka_unit_test(test_table_strings_in_the_store),
        cmocka_unit_test(test_errors_name_the_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
