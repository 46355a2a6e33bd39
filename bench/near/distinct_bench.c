/*
 * distinct_bench.c - a row's sorted distinct shingles two ways, on the same random multisets (about
 * one value in 17 repeated, as word pairs repeat in text): la_cpu_shingle_sort + la_cpu_shingle_unique
 * on a copy, against la_cpu_shingle_sorted_distinct's ordered table. Prints microseconds a set and
 * the ratio for sets of 40 to 1,530 values; exits 1 if the two ever differ.
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
    printf("%6s %14s %14s %7s\n", "values", "sort+unique us", "ordered us", "ratio");
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        long r = reps * 170 / (long)n;
        uint64_t *src = malloc(SETS * n * sizeof *src), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        uint64_t *table = calloc(la_shingle_distinct_table(n), sizeof *table), x = 88172645463325252ull;
        if (!src || !a || !b || !table) return 2;
        for (size_t i = 0; i < SETS * n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            src[i] = x;
        }
        for (size_t i = 0; i + 1 < SETS * n; i += 17) src[i] = src[i + 1];
        size_t check = 0;
        for (int s = 0; s < SETS; s++) {
            memcpy(a, src + (size_t)s * n, n * sizeof *a);
            la_cpu_shingle_sort(a, n);
            size_t na = la_cpu_shingle_unique(a, n), nb = la_cpu_shingle_sorted_distinct(src + (size_t)s * n, n, b, table);
            if (na != nb || memcmp(a, b, na * sizeof *a)) {
                fprintf(stderr, "distinct_bench: the two differ at %zu values\n", n);
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
        for (long k = 0; k < r; k++) check += la_cpu_shingle_sorted_distinct(src + (size_t)(k % SETS) * n, n, b, table);
        double t2 = la_now();
        double us_sort = (t1 - t0) / (double)r * 1e6, us_table = (t2 - t1) / (double)r * 1e6;
        printf("%6zu %14.3f %14.3f %6.2fx\n", n, us_sort, us_table, us_sort / us_table);
        if (check == 0) printf("(no values)\n");
        free(src), free(a), free(b), free(table);
    }
    return 0;
}
