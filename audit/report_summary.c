/*
 * report_summary.c - the few lines `leakaudit audit` prints when it is done (rows, links by kind
 * and grade, clusters, the clean held-out size and its interval, the exit code), rendered into a
 * buffer for the command and for la_result_summary. Not for: deciding anything (report.c).
 */
#include "report.h"
#include "report_model.h"

#include <math.h>

void la_report_summary(const la_report *r, const la_audit *a, const char *dir, la_buf *b)
{
    const la_table *t = r->table;
    size_t n = la_table_nrows(t), quarantined = 0, held = 0, held_kept = 0, scored = 0;
    double score_sum = 0;
    const la_row *rows = la_table_rows_const(t);
    for (size_t i = 0; i < n; i++) {
        if (a->out[i] == LA_OUT_QUARANTINE) quarantined++;
        if (rows[i].part == r->heldout) {
            held++;
            if (a->out[i] != LA_OUT_QUARANTINE) {
                held_kept++;
                if (!isnan(rows[i].score)) scored++, score_sum += rows[i].score;
            }
        }
    }
    double acc = scored ? score_sum / (double)scored : r->assumed_accuracy;
    la_buf_printf(b, "leakaudit %s audit: held out '%s'", la_version(), la_table_part_name(t, r->heldout));
    for (uint32_t p = 0; p < la_table_npart(t); p++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) k += rows[i].part == p;
        la_buf_printf(b, "%s %s %zu", p ? "," : ";", la_table_part_name(t, p), k);
    }
    la_buf_printf(b, " rows (backend: %s%s%s)\n", r->backend, r->backend_note && r->backend_note[0] ? "; " : "",
           r->backend_note ? r->backend_note : "");
    la_buf_printf(b, "  rows read %zu = placed %zu + rejected %zu\n", n + r->nrejects, n, r->nrejects);
    la_buf_printf(b, "  links: %zu pairs (", r->pairs->n);
    for (int k = 0; k < LA_KIND_COUNT; k++) {
        size_t m = 0;
        for (size_t q = 0; q < r->pairs->n; q++) m += (r->pairs->v[q].kinds >> k) & 1;
        la_buf_printf(b, "%s%s %zu", k ? ", " : "", la_kind_name(1u << k), m);
    }
    size_t g[4] = {0};
    for (size_t q = 0; q < r->pairs->n; q++) g[r->pairs->v[q].grade & 3]++;
    la_buf_printf(b, ") in %zu clusters; %zu rows on the wrong side of the cutoff\n", a->nclusters, a->ntime);
    la_buf_printf(b, "  grades: %zu copy, %zu near, %zu related (related links are listed, not gated); %zu of %zu held-out rows "
           "compared\n",
           g[LA_GRADE_COPY], g[LA_GRADE_NEAR], g[LA_GRADE_RELATED], r->heldout_compared, held);
    la_buf_printf(b, "  within partitions: %zu duplicate rows, %zu label conflicts\n", r->ndup, r->nconflicts);
    double hw = la_stat_ci95(acc, held_kept);
    la_buf_printf(b, "  quarantined %zu rows; clean %s: %zu of %zu rows, 95%% interval ±%.1f points at %.1f%% accuracy (%s)%s\n",
           quarantined, la_table_part_name(t, r->heldout), held_kept, held, held_kept ? 100 * hw : 100.0, 100 * acc,
           scored ? "observed" : "assumed", held_kept == 0 || hw > 0.05 ? " (too wide to gate a release)" : "");
    la_report_delta_summary(r, b);
    la_buf_printf(b, "  reports: %s/report.html for review, report.md (also report.json, pairs.jsonl, assignments.jsonl, manifests)\n", dir);
    la_buf_printf(b, "  exit %d: %s\n", r->exit_code, r->leaks ? "leaks found" : "no leaks");
}
