/*
 * split.h - the split maker's decisions. The chronological rule: a family (rows sharing a family
 * id; a row without one is its own family) entirely before the cutoff goes to dev, entirely on or
 * after it to test, and a family spanning it to quarantine: never split silently. The result does
 * not depend on input order. Also the split report writers.
 */
#ifndef LA_SPLIT_H
#define LA_SPLIT_H

#include "report.h"

typedef struct la_split_group {
    const char *family;   /* the first family among its members (by id), NULL when none has one */
    uint32_t first_row;   /* the member with the smallest id */
    size_t nrows;
    int32_t min_date, max_date;
    uint32_t out;         /* dev, test (partition indices) or LA_OUT_QUARANTINE */
} la_split_group;

typedef struct la_split {
    la_split_group *groups;   /* sorted by the smallest id of each group */
    size_t ngroups;
    uint32_t *group_of;       /* per row */
} la_split;

/* Assign every row with a date, group by group (rep from la_groups_build; NULL groups by family
 * alone). dev and test are
 * partition indices of the table; out[i] receives dev, test or LA_OUT_QUARANTINE. Rows without a
 * date are a contract violation (validate first). */
la_status la_split_chrono(const la_table *t, const uint32_t *rep, int32_t cutoff, uint32_t dev, uint32_t test,
                          uint32_t *out, la_split *sp /* OUT */);
void la_split_free(la_split *sp);

/* report.json, report.md and assignments.jsonl of a split (r->audit->out holds the outcomes). */
la_status la_split_report_json(const la_report *r, const la_split *sp, la_buf *out);
la_status la_split_report_md(const la_report *r, const la_split *sp, la_buf *out);
la_status la_split_assignments_jsonl(const la_report *r, const la_split *sp, la_buf *out);

#endif /* LA_SPLIT_H */
