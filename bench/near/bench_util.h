/*
 * bench_util.h - helpers shared by the near-copy benchmarks: command-line parameters of the near
 * tier, building a row table from texts, a clock.
 */
#ifndef LA_BENCH_UTIL_H
#define LA_BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leakaudit.h"
#include "near.h"

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Parse one near-tier option at argv[*i]; returns 1 when consumed (advancing *i), 0 when not ours. */
static inline int bench_near_opt(int argc, char **argv, int *i, la_near_params *p)
{
    const char *a = argv[*i];
    if (*i + 1 >= argc) return 0;
    const char *v = argv[*i + 1];
    if (!strcmp(a, "--kind")) p->shingle_kind = !strcmp(v, "char") ? LA_SHINGLE_CHAR : LA_SHINGLE_WORD;
    else if (!strcmp(a, "--size")) p->shingle_size = atoi(v);
    else if (!strcmp(a, "--perm")) p->num_perm = atoi(v);
    else if (!strcmp(a, "--threshold")) p->threshold = atof(v);
    else if (!strcmp(a, "--containment")) p->containment_threshold = atof(v);
    else if (!strcmp(a, "--min-shingles")) p->containment_min_shingles = atoi(v);
    else if (!strcmp(a, "--sample")) p->containment_sample = atoi(v);
    else if (!strcmp(a, "--simhash")) p->simhash_k = atoi(v);
    else if (!strcmp(a, "--fp")) { p->lsh_fp_weight = atof(v); p->lsh_fn_weight = 1.0 - p->lsh_fp_weight; }
    else if (!strcmp(a, "--threads")) p->threads = atoi(v);
    else if (!strcmp(a, "--within")) p->within = atoi(v);
    else return 0;
    (*i)++;
    return 1;
}

static inline void bench_print_params(const la_near_params *p)
{
    printf("params: %s %d-grams, K=%d, threshold=%.2f, containment=%.2f (min %d shingles, sample %d), "
           "simhash k=%d, LSH weights fp=%.2f fn=%.2f, threads=%d\n",
           p->shingle_kind == LA_SHINGLE_CHAR ? "char" : "word", p->shingle_size, p->num_perm, p->threshold,
           p->containment_threshold, p->containment_min_shingles, p->containment_sample, p->simhash_k,
           p->lsh_fp_weight, p->lsh_fn_weight, p->threads);
}

static inline void bench_print_stats(const la_near_stats *s)
{
    printf("lsh: b=%d r=%d expected recall at threshold %.3f\n", s->bands, s->rows, s->expected_recall);
    printf("candidates: %zu distinct (lsh %zu, simhash %zu, containment %zu); reported %zu\n", s->candidates,
           s->candidates_lsh, s->candidates_simhash, s->candidates_containment, s->verified);
    printf("phases: signatures %.2fs, candidates %.2fs, verify %.2fs\n", s->seconds_signatures, s->seconds_candidates,
           s->seconds_verify);
}

/* Append a row whose normalized text is `norm` (also used as text). */
static inline la_status bench_add_row(la_table *t, const char *id, uint32_t part, const char *norm)
{
    la_row r;
    memset(&r, 0, sizeof r);
    size_t n = strlen(norm);
    LA_TRY(la_table_strdup(t, id, strlen(id), &r.id));
    LA_TRY(la_table_strdup(t, norm, n, &r.norm));
    r.text = r.norm;
    r.norm_len = n;
    r.part = part;
    r.date = LA_NO_DATE;
    r.score = 0.0 / 0.0;
    size_t idx;
    return la_table_append(t, &r, &idx);
}

#endif
