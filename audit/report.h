/*
 * report.h - the report model and its writers: report.json (schema in docs/report-schema.md),
 * report.md, pairs.jsonl, assignments.jsonl, the clean manifests, quarantine.jsonl and
 * rejects.jsonl. Writers fill memory buffers; host/ writes them to disk atomically.
 */
#ifndef LA_REPORT_H
#define LA_REPORT_H

#include "audit.h"
#include "buf.h"
#include "leakaudit.h"
#include "link_delta.h"

#define LA_REPORT_SCHEMA_VERSION 2
/* A named block that a later tier contributes: `json` is a complete JSON value placed under
 * findings.<name>; `md` is Markdown appended to report.md; `html` goes into report.html. Any may
 * be NULL. */
typedef struct la_report_section {
    const char *name;
    const char *json;
    const char *md;
    const char *html;   /* a fragment for report.html (escaped by its author), or NULL */
} la_report_section;

typedef struct la_report_timing {
    const char *name;
    double seconds;
} la_report_timing;

typedef struct la_report {
    const char *command;                /* "audit" or "split" */
    const la_table *table;
    const la_file_info *files;
    size_t nfiles;
    const la_reject *rejects;
    size_t nrejects;
    const la_pairs *pairs;              /* normalized */
    const la_audit *audit;
    /* exact-copy results */
    const uint32_t *dup_of;             /* per row or NULL */
    size_t ndup;
    size_t exact_cross_groups;
    const uint32_t *conflict_rows;
    const size_t *conflict_start;
    size_t nconflicts;
    /* parameters (strings are shown as given) */
    uint32_t heldout;
    int32_t cutoff;
    const char *normalize;
    const char *on_invalid;
    const char *date_format;
    const char *fields_json;            /* the fields read (a JSON object, parameters.fields), or NULL */
    const char *backend;
    const char *backend_note;           /* why auto chose the CPU, or NULL */
    const char *const *param_names;     /* extra parameters, shown under parameters */
    const char *const *param_values;
    size_t nparams;
    la_gate gate;                       /* --fail-on: kinds and grades that fail the run (all zero: none) */
    const la_delta *delta;              /* --baseline, --waivers, --fail-on-new: links new, known and waived
                                           (link_delta.h); NULL when none of them is given */
    size_t heldout_compared;            /* held-out rows with text, compared against a seen row with text */
    size_t template_numbers;            /* links held at related because their numbers differ */
    size_t slot_upgrades;               /* links made near by slot evidence (docs/grades.md) */
    size_t digits_related;              /* semantic links held at related by the digits rule */
    la_resolve resolve;
    size_t max_cluster;
    double assumed_accuracy;            /* for intervals when no scores are given (0.9) */
    const la_report_section *sections;
    size_t nsections;
    const la_report_timing *timings;
    size_t ntimings;
    /* split: what joined the groups (a JSON object and a Markdown paragraph), or NULL */
    const char *grouping_json;
    const char *grouping_md;
    /* decided by la_report_summarize */
    int leaks;
    int exit_code;
} la_report;

/* Decide leaks and exit code from the findings, the gate and (when r->delta is set) the waivers and
 * --fail-on-new. */
void la_report_summarize(la_report *r);

la_status la_report_json(const la_report *r, la_buf *out);
la_status la_report_md(const la_report *r, la_buf *out);

/* The summary `leakaudit audit` prints: rows per partition, links by kind and grade, clusters, the
 * clean held-out rows with their 95% interval, where the reports are (dir) and the exit code. */
void la_report_summary(const la_report *r, const la_audit *a, const char *dir, la_buf *b);
la_status la_report_pairs_jsonl(const la_report *r, la_buf *out);
la_status la_report_assignments_jsonl(const la_report *r, la_buf *out);
/* One line per leak cluster: number, size, pairs, the kinds of evidence that joined it, whether it is
 * suspect, and its members per partition (ids sorted). */
la_status la_report_clusters_jsonl(const la_report *r, la_buf *out);
/* The rows of a manifest: the indices of the rows whose outcome is `out` (a partition index or
 * LA_OUT_QUARANTINE), in input order, into rows, which has room for every row of the table; returns
 * how many. la_manifest_write (host/manifest.h) writes their records, from the table or from their
 * input files. */
size_t la_report_manifest_rows(const la_report *r, uint32_t out, uint32_t *rows);
la_status la_report_rejects_jsonl(const la_report *r, la_buf *out);
/* report.junit.xml: one test case per kind, failing when links of the kind fail the gate. */
la_status la_report_junit(const la_report *r, la_buf *out);
/* report.html: one self-contained page (no external files or scripts) with the summary, the
 * statistics, the top leaks side by side and the sections' charts. */
la_status la_report_html(const la_report *r, la_buf *out);
/* The rejected rows as assignments.jsonl lines (split_in null unless with_split_in). */
void la_report_rejected_assignments(const la_report *r, int with_split_in, la_buf *out);
/* Pieces shared with other commands' reports: the "inputs" array line and the "timings" object. */
void la_report_inputs_json(const la_report *r, la_buf *out);
/* `, "backend": "cpu", "backend_note": "..."` inside a "parameters" object: where the backend ops
 * ran, and why auto chose or fell back to the CPU. */
void la_report_backend_json(const la_report *r, la_buf *b);
void la_report_timings_json(const la_report *r, la_buf *out);

#endif /* LA_REPORT_H */
