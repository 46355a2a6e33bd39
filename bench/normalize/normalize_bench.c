/*
 * normalize_bench.c - throughput of text normalization: la_normalize_ref (utf8proc over the whole
 * text) and la_normalize (ASCII fast path) on the same rows in the same run, on one thread.
 *
 *   normalize_bench [--mode nfkc|space|none] [--reps N] FILE...
 *
 * Each FILE is one input: a .jsonl file gives the "text" field of each line, any other file one row
 * per line. Per input it prints MB/s of input text for both paths (CPU time of this thread, best of
 * N alternating repetitions, so that a shared machine costs both paths alike; each call's malloc and
 * free included), the ratio, and whether the outputs were byte-identical (checked in a separate,
 * untimed pass). Not for: the normalize stage of an audit (threads, the arena copy
 * and hashing; see docs/performance.md).
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leakaudit.h"
#include "normalize.h"

typedef struct rows {
    char **v;
    size_t *len;
    size_t n, cap, bytes;
} rows;

static int rows_add(rows *r, const char *s, size_t n)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        char **v = realloc(r->v, cap * sizeof *v);
        size_t *len = v ? realloc(r->len, cap * sizeof *len) : NULL;
        if (v) r->v = v;
        if (!len) return -1;
        r->len = len;
        r->cap = cap;
    }
    r->v[r->n] = malloc(n + 1);
    if (!r->v[r->n]) return -1;
    memcpy(r->v[r->n], s, n);
    r->v[r->n][n] = '\0';
    r->len[r->n++] = n;
    r->bytes += n;
    return 0;
}

static int read_rows(const char *path, rows *r)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t plen = strlen(path);
    int jsonl = plen > 6 && !strcmp(path + plen - 6, ".jsonl");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        if (n > 0 && line[n - 1] == '\n') line[--n] = '\0';
        if (!jsonl) {
            rc = rows_add(r, line, (size_t)n);
            continue;
        }
        json_object *o = json_tokener_parse(line), *t = NULL;
        if (o && json_object_object_get_ex(o, "text", &t) && json_object_is_type(t, json_type_string))
            rc = rows_add(r, json_object_get_string(t), (size_t)json_object_get_string_len(t));
        json_object_put(o);
    }
    free(line);
    fclose(f);
    return rc;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef la_status (*norm_fn)(const char *, size_t, la_norm_mode, char **, size_t *);

/* One pass over all rows; returns CPU seconds, or -1 on an error. */
static double run(norm_fn fn, const rows *r, la_norm_mode mode)
{
    double t0 = cpu_now();
    for (size_t i = 0; i < r->n; i++) {
        char *out;
        size_t n;
        if (fn(r->v[i], r->len[i], mode, &out, &n) != LA_OK) return -1;
        free(out);
    }
    return cpu_now() - t0;
}

/* 1 when both paths give the same bytes (or the same failure) on every row. */
static int identical(const rows *r, la_norm_mode mode)
{
    for (size_t i = 0; i < r->n; i++) {
        char *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        la_status sa = la_normalize_ref(r->v[i], r->len[i], mode, &a, &na);
        la_status sb = la_normalize(r->v[i], r->len[i], mode, &b, &nb);
        int same = sa == sb && (sa != LA_OK || (na == nb && !memcmp(a, b, na)));
        free(a);
        free(b);
        if (!same) return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    la_norm_mode mode = LA_NORM_NFKC;
    int reps = 5, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
            if (la_norm_mode_parse(argv[++i], &mode) != LA_OK) return fprintf(stderr, "%s\n", la_last_error()), 2;
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else {
            break;
        }
    }
    if (i >= argc || reps < 1) {
        fprintf(stderr, "usage: normalize_bench [--mode nfkc|space|none] [--reps N] FILE...\n");
        return 2;
    }
    printf("mode %s, best of %d alternating runs, CPU time of one thread\n", la_norm_mode_name(mode), reps);
    printf("%-40s %8s %9s %12s %12s %7s %s\n", "input", "rows", "MB", "ref MB/s", "fast MB/s", "ratio", "output");
    int bad = 0;
    for (; i < argc; i++) {
        rows r = {0};
        if (read_rows(argv[i], &r) != 0) {
            fprintf(stderr, "normalize_bench: cannot read %s\n", argv[i]);
            return 2;
        }
        double best_ref = 1e30, best_fast = 1e30;
        for (int k = 0; k < reps; k++) {
            double a = run(la_normalize_ref, &r, mode);
            double b = run(la_normalize, &r, mode);
            if (a < 0 || b < 0) {
                fprintf(stderr, "normalize_bench: %s: %s\n", argv[i], la_last_error());
                return 2;
            }
            if (a < best_ref) best_ref = a;
            if (b < best_fast) best_fast = b;
        }
        double mb = (double)r.bytes / 1e6;
        const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        int same = identical(&r, mode);
        printf("%-40s %8zu %9.2f %12.1f %12.1f %6.2fx %s\n", name, r.n, mb, mb / best_ref, mb / best_fast,
               best_ref / best_fast, same ? "identical" : "DIFFERENT");
        bad |= !same;
        for (size_t k = 0; k < r.n; k++) free(r.v[k]);
        free(r.v);
        free(r.len);
    }
    return bad ? 1 : 0;
}
