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

/* Pairs that carry a kind bit and fail the run through it (family and time: all of them; graded
 * kinds: at the gate's grade or stronger; less the kinds waived, and with --fail-on-new the known
 * links: la_delta_link_fails). */
size_t la_report_gating_count(const la_report *r, uint32_t kind);

/* 1 when link k of r->pairs fails the run through kind index `kind`, or any kind for -1. */
int la_report_link_fails(const la_report *r, size_t k, int kind);

/* Rows on the wrong side of the cutoff that fail the run when the gate names time (with
 * --fail-on-new: those the baseline does not list). */
size_t la_report_time_failing(const la_report *r);

/* Pairs that carry a kind bit (0: any) and have this grade. */
size_t la_report_grade_count(const la_report *r, uint32_t kind, int grade);

/* Pairs that fail the run (la_report_link_fails). */
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

/* Indices of r->pairs in the order a reviewer takes them (report.html): first the graded copy and
 * near links that have no exact evidence (a judgement is needed), then exact copies (certain), then
 * links with only family or time evidence, then related links; inside each, the stronger grade,
 * then the higher strength (la_pair_strength), then pairs.jsonl's order. The links of one cluster
 * stay together where its first link falls. Caller frees; NULL when out of memory. */
size_t *la_report_review_order(const la_report *r);

/* The longest text report.html embeds per row, in bytes (cut on a character boundary; the page
 * says so). */
#define LA_REVIEW_TEXT_MAX 20000

/* report.html's data as one JSON object that holds no '<', '>' or '&' byte (report_review.c
 * describes its fields), appended to out. */
la_status la_report_review_data(const la_report *r, la_buf *out);

/* report.html's script and style sheet (audit/review.js, audit/review.css), NUL-terminated;
 * generated into the build folder by cmake/embed.cmake. */
extern const char la_review_js[];
extern const char la_review_css[];

/* The plain-text sentences every report shares (no markup; the writer wraps them):
 * la_report_small_set_warning writes the warning that an interval at accuracy p on n rows is too wide
 * to gate a release and returns 1, or writes nothing and returns 0 when it is within ±5 points;
 * la_report_random_split_sentence compares the random-split expectation with the observation. */
int la_report_small_set_warning(la_buf *b, const char *what, double p, size_t n);
void la_report_random_split_sentence(la_buf *b, const la_heldout_stats *s);

/* Kind names as a JSON array. */
void la_report_kinds_json(la_buf *b, uint32_t kinds);

/* Kind names joined by sep. */
void la_report_kinds_text(la_buf *b, uint32_t kinds, const char *sep);

/* report_delta.c: what --baseline and --waivers add to the reports; each writes nothing when
 * r->delta is NULL. The fields of link k closing its pairs.jsonl line (text hashes and baseline
 * status; waived and its waivers): */
void la_report_delta_pair_json(const la_report *r, size_t k, la_buf *b);
/* findings.baseline and findings.waivers of report.json, each opening with ",\n    ": */
void la_report_delta_json(const la_report *r, la_buf *b);
/* report.md's sections "Since the baseline" and "Waivers": */
void la_report_delta_md(const la_report *r, la_buf *b);
/* The summary's lines about the baseline and the waivers: */
void la_report_delta_summary(const la_report *r, la_buf *b);

#endif /* LA_REPORT_MODEL_H */
