/*
 * distinct_bench.c - a row's distinct shingles and the overlap of two rows' sets, two ways each, on
 * the same random multisets (about one value in 17 repeated, as word pairs repeat in text):
 *   distinct: la_cpu_shingle_sort + la_cpu_shingle_unique on a copy (sorted) against
 *             la_cpu_shingle_distinct's table (first-occurrence order);
 *   overlap:  la_cpu_shingle_overlap's merge of two sorted sets against la_cpu_shingle_index_overlap
 *             (one set indexed once, the other's values looked up; as verification does).
 * Prints microseconds a set (a pair) and the ratios for sets of 40 to 1,530 values; exits 1 if the
 * two ways ever differ.
 *   distinct_bench [--reps N]
 */
#include "near_kernels.h"
#include "la_time.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SETS = 64 };

int main(int argc, char **argv)
{
    long reps = 200000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: distinct_bench [--reps N]\n");
            return 2;
        }
    }
    if (reps < 1) reps = 1;
    static const size_t sizes[] = {40, 170, 510, 1530};
    printf("%6s %14s %12s %7s %12s %12s %7s\n", "values", "sort+unique us", "table us", "ratio", "merge us", "index us",
           "ratio");
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        long r = reps * 170 / (long)n;
        uint64_t *src = malloc(SETS * n * sizeof *src), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        uint64_t *sorted = malloc(SETS * n * sizeof *sorted), *plain = malloc(SETS * n * sizeof *plain);
        size_t *ns = malloc(SETS * sizeof *ns);
        uint64_t *table = calloc(la_shingle_distinct_table(n), sizeof *table), x = 88172645463325252ull;
        uint64_t *itab = calloc(la_shingle_index_table(n), sizeof *itab);
        if (!src || !a || !b || !sorted || !plain || !ns || !table || !itab) return 2;
        for (size_t i = 0; i < SETS * n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            src[i] = x;
        }
        for (size_t i = 0; i + 1 < SETS * n; i += 17) src[i] = src[i + 1];
        /* neighbouring sets share about half their values, as a candidate pair's do */
        for (int s = 1; s < SETS; s++)
            for (size_t i = 0; i < n; i += 2) src[(size_t)s * n + i] = src[(size_t)(s - 1) * n + i + 1];
        size_t check = 0;
        for (int s = 0; s < SETS; s++) {
            memcpy(a, src + (size_t)s * n, n * sizeof *a);
            la_cpu_shingle_sort(a, n);
            size_t na = la_cpu_shingle_unique(a, n), nb = la_cpu_shingle_distinct(src + (size_t)s * n, n, b, table);
            memcpy(sorted + (size_t)s * n, a, na * sizeof *a);
            memcpy(plain + (size_t)s * n, b, nb * sizeof *b);
            ns[s] = na;
            la_cpu_shingle_sort(b, nb);
            if (na != nb || memcmp(a, b, na * sizeof *a)) {
                fprintf(stderr, "distinct_bench: the distinct sets differ at %zu values\n", n);
                return 1;
            }
        }
        for (int s = 1; s < SETS; s++) {
            la_shingle_index ix;
            la_cpu_shingle_index(&ix, plain + (size_t)(s - 1) * n, ns[s - 1], itab);
            size_t want = la_cpu_shingle_overlap(sorted + (size_t)s * n, ns[s], sorted + (size_t)(s - 1) * n, ns[s - 1]);
            size_t got = la_cpu_shingle_index_overlap(&ix, plain + (size_t)s * n, ns[s]);
            la_cpu_shingle_index_clear(&ix);
            if (want != got) {
                fprintf(stderr, "distinct_bench: the overlaps differ at %zu values\n", n);
                return 1;
            }
        }
        double t0 = la_now();
        for (long k = 0; k < r; k++) {
            memcpy(a, src + (size_t)(k % SETS) * n, n * sizeof *a);
            la_cpu_shingle_sort(a, n);
            check += la_cpu_shingle_unique(a, n);
        }
        double t1 = la_now();
        for (long k = 0; k < r; k++) check += la_cpu_shingle_distinct(src + (size_t)(k % SETS) * n, n, b, table);
        double t2 = la_now();
        for (long k = 0; k < r; k++) {
            int s = 1 + (int)(k % (SETS - 1));
            check += la_cpu_shingle_overlap(sorted + (size_t)s * n, ns[s], sorted + (size_t)(s - 1) * n, ns[s - 1]);
        }
        double t3 = la_now();
        /* as verification: a set indexed once for four candidates */
        la_shingle_index ix = {0};
        for (long k = 0; k < r; k++) {
            int s = 1 + (int)(k % (SETS - 1));
            if (k % 4 == 0) {
                la_cpu_shingle_index_clear(&ix);
                la_cpu_shingle_index(&ix, plain + (size_t)(s - 1) * n, ns[s - 1], itab);
            }
            check += la_cpu_shingle_index_overlap(&ix, plain + (size_t)s * n, ns[s]);
        }
        la_cpu_shingle_index_clear(&ix);
        double t4 = la_now();
        double us_sort = (t1 - t0) / (double)r * 1e6, us_table = (t2 - t1) / (double)r * 1e6;
        double us_merge = (t3 - t2) / (double)r * 1e6, us_index = (t4 - t3) / (double)r * 1e6;
        printf("%6zu %14.3f %12.3f %6.2fx %12.3f %12.3f %6.2fx\n", n, us_sort, us_table, us_sort / us_table, us_merge,
               us_index, us_merge / us_index);
        if (check == 0) printf("(no values)\n");
        free(src), free(a), free(b), free(sorted), free(plain), free(ns), free(table), free(itab);
    }
    return 0;
}
