/*
 * report_model.h - derived numbers shared by the report writers (report.c, report_html.c,
 * report_junit.c). Internal to audit/.
 */
#ifndef LA_REPORT_MODEL_H
#define LA_REPORT_MODEL_H

#include "report.h"

typedef struct la_part_counts {
    size_t read, kept, quarantined, rejected;
} la_part_counts;

/* Per partition index; rejects without a partition are counted in *norphan_rejects. Caller frees;
 * NULL when out of memory. */
la_part_counts *la_report_count_parts(const la_report *r, size_t *norphan_rejects /* OUT */);

/* Pairs that carry a kind bit. */
size_t la_report_kind_count(const la_report *r, uint32_t kind);

/* Pairs that carry a kind bit and fail the gate through it (family and time: all of them; graded
 * kinds: at the gate's grade or stronger). */
size_t la_report_gating_count(const la_report *r, uint32_t kind);

/* Pairs that carry a kind bit (0: any) and have this grade. */
size_t la_report_grade_count(const la_report *r, uint32_t kind, int grade);

/* Pairs that fail the gate. */
size_t la_report_gating_pairs(const la_report *r);

/* The held-out row's words that the other row of p also has, in the held-out row's order, with
 * "…" for each run of words it lacks: what a template's siblings share. Pure string work on the
 * normalized texts; writes nothing when either row has no text. */
void la_report_shared_frame(const la_report *r, const la_pair *p, la_buf *out);

/* Held-out statistics: sizes before and after quarantine, observed accuracy when scores are given,
 * and the random-split expectation over families (rows without a family are singletons). */
typedef struct la_heldout_stats {
    size_t before, after;
    size_t scored_before, scored_after, scored_leaked;
    double acc_before, acc_after, acc_leaked;
    size_t groups, multi_groups;
    double share, expected_mixed;
    size_t observed_mixed;
} la_heldout_stats;

la_status la_report_heldout_stats(const la_report *r, la_heldout_stats *s /* OUT */);

/* Indices of r->pairs ranked for display: exact, near, semantic, family, then time; caller frees. */
size_t *la_report_ranked_pairs(const la_report *r);

/* The plain-text sentences every report shares (no markup; the writer wraps them):
 * la_report_small_set_warning writes the warning that an interval at accuracy p on n rows is too wide
 * to gate a release and returns 1, or writes nothing and returns 0 when it is within ±5 points;
 * la_report_random_split_sentence compares the random-split expectation with the observation. */
int la_report_small_set_warning(la_buf *b, const char *what, double p, size_t n);
void la_report_random_split_sentence(la_buf *b, const la_heldout_stats *s);

/* Kind names joined by sep. */
void la_report_kinds_text(la_buf *b, uint32_t kinds, const char *sep);

#endif /* LA_REPORT_MODEL_H */
