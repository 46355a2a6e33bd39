/* split.c - the chronological split rule and its reports (see split.h). */
#include "split.h"
#include "la_alloc.h"
#include "la_sort.h"

#include "groups.h"
#include "report_model.h"

#include <stdlib.h>
#include <string.h>

typedef struct group_order {
    const la_row *rows;
    const uint32_t *rep;
} group_order;

/* By group (its smallest id), then by id: the group's first member is its representative. ctx is
 * a group_order. */
static int cmp_group_key(const void *x, const void *y, void *ctx)
{
    const group_order *o = ctx;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    if (o->rep[i] != o->rep[j]) return strcmp(o->rows[o->rep[i]].id, o->rows[o->rep[j]].id);
    return strcmp(o->rows[i].id, o->rows[j].id);
}

void la_split_free(la_split *sp)
{
    if (!sp) return;
    free(sp->groups);
    free(sp->group_of);
    memset(sp, 0, sizeof *sp);
}

la_status la_split_chrono(const la_table *t, const uint32_t *rep, int32_t cutoff, uint32_t dev, uint32_t test,
                          uint32_t *out, la_split *sp)
{
    memset(sp, 0, sizeof *sp);
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    uint32_t *order = la_malloc_n(n, sizeof *order);
    sp->groups = la_malloc_n(n, sizeof *sp->groups);
    sp->group_of = la_malloc_n(n, sizeof *sp->group_of);
    uint32_t *own_rep = rep ? NULL : la_malloc_n(n, sizeof *own_rep);
    if (!order || !sp->groups || !sp->group_of || (!rep && !own_rep)) {
        free(order);
        free(own_rep);
        la_split_free(sp);
        return la_error(LA_ENOMEM, "out of memory splitting %zu rows", n);
    }
    if (!rep) {
        la_status s = la_groups_build(t, NULL, own_rep);
        if (s != LA_OK) {
            free(order);
            free(own_rep);
            la_split_free(sp);
            return s;
        }
        rep = own_rep;
    }
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    group_order go = {rows, rep};
    la_sort(order, n, sizeof *order, cmp_group_key, &go);
    for (size_t g = 0; g < n;) {
        size_t e = g + 1;
        while (e < n && rep[order[e]] == rep[order[g]]) e++;
        la_split_group *grp = &sp->groups[sp->ngroups];
        grp->family = NULL;
        for (size_t i = g; i < e && !grp->family; i++) grp->family = rows[order[i]].family;
        grp->first_row = order[g];
        grp->nrows = e - g;
        grp->min_date = INT32_MAX;
        grp->max_date = INT32_MIN;
        for (size_t i = g; i < e; i++) {
            int32_t d = rows[order[i]].date;
            if (d == LA_NO_DATE) {
                const char *id = rows[order[i]].id;
                free(order);
                la_split_free(sp);
                return la_error(LA_EINTERNAL, "la_split_chrono: row '%s' has no date", id);
            }
            if (d < grp->min_date) grp->min_date = d;
            if (d > grp->max_date) grp->max_date = d;
        }
        grp->out = grp->max_date < cutoff ? dev : grp->min_date >= cutoff ? test : LA_OUT_QUARANTINE;
        for (size_t i = g; i < e; i++) {
            out[order[i]] = grp->out;
            sp->group_of[order[i]] = (uint32_t)sp->ngroups;
        }
        sp->ngroups++;
        g = e;
    }
    free(order);
    free(own_rep);
    return LA_OK;
}

static const char *out_name(const la_report *r, uint32_t o)
{
    return o == LA_OUT_QUARANTINE ? "quarantine" : la_table_part_name(r->table, o);
}

typedef struct split_counts {
    size_t rows[3], groups[3]; /* dev, test, quarantine */
} split_counts;

static int slot(const la_report *r, uint32_t o)
{
    if (o == LA_OUT_QUARANTINE) return 2;
    return strcmp(la_table_part_name(r->table, o), "dev") == 0 ? 0 : 1;
}

static split_counts count(const la_report *r, const la_split *sp)
{
    split_counts c;
    memset(&c, 0, sizeof c);
    for (size_t g = 0; g < sp->ngroups; g++) {
        int k = slot(r, sp->groups[g].out);
        c.rows[k] += sp->groups[g].nrows;
        c.groups[k]++;
    }
    return c;
}

la_status la_split_report_json(const la_report *r, const la_split *sp, la_buf *b)
{
    split_counts c = count(r, sp);
    size_t placed = la_table_nrows(r->table);
    char date[11], d1[11], d2[11];
    la_date_format(r->cutoff, date);
    la_buf_printf(b, "{\n  \"schema_version\": %d,\n  \"tool\": {\"name\": \"leakaudit\", \"version\": ",
                  LA_REPORT_SCHEMA_VERSION);
    la_buf_json_str(b, la_version());
    la_buf_printf(b, "},\n  \"command\": \"split\",\n  \"parameters\": {\"rule\": \"chronological\", \"cutoff\": \"%s\", "
                     "\"on_invalid\": ",
                  date);
    la_buf_json_str(b, r->on_invalid);
    la_buf_puts(b, ", \"date_format\": ");
    la_buf_json_str(b, r->date_format);
    if (r->fields_json) la_buf_printf(b, ", \"fields\": %s", r->fields_json);
    la_report_backend_json(r, b);
    la_buf_puts(b, "},\n");
    la_report_inputs_json(r, b);
    if (r->grouping_json) la_buf_printf(b, "  \"grouping\": %s,\n", r->grouping_json);
    la_buf_printf(b, "  \"counts\": {\"rows_read\": %zu, \"rows_placed\": %zu, \"rows_rejected\": %zu, "
                     "\"rows\": {\"dev\": %zu, \"test\": %zu, \"quarantine\": %zu}, "
                     "\"families\": {\"dev\": %zu, \"test\": %zu, \"quarantine\": %zu}},\n",
                  placed + r->nrejects, placed, r->nrejects, c.rows[0], c.rows[1], c.rows[2], c.groups[0], c.groups[1],
                  c.groups[2]);
    la_buf_puts(b, "  \"quarantined_families\": [");
    int first = 1;
    for (size_t g = 0; g < sp->ngroups; g++) {
        const la_split_group *grp = &sp->groups[g];
        if (grp->out != LA_OUT_QUARANTINE) continue;
        la_date_format(grp->min_date, d1);
        la_date_format(grp->max_date, d2);
        la_buf_puts(b, first ? "\n    {\"family\": " : ",\n    {\"family\": ");
        la_buf_json_str(b, grp->family);
        la_buf_printf(b, ", \"rows\": %zu, \"first_date\": \"%s\", \"last_date\": \"%s\"}", grp->nrows, d1, d2);
        first = 0;
    }
    la_buf_puts(b, first ? "],\n  " : "\n  ],\n  ");
    la_report_timings_json(r, b);
    la_buf_puts(b, "\n}\n");
    return la_buf_status(b);
}

la_status la_split_report_md(const la_report *r, const la_split *sp, la_buf *b)
{
    split_counts c = count(r, sp);
    char date[11], d1[11], d2[11];
    la_date_format(r->cutoff, date);
    la_buf_printf(b, "# leakaudit split\n\nChronological rule at cutoff %s (inclusive on the test side): a family "
                     "entirely before the cutoff goes to dev, entirely on or after it to test, and a family that spans "
                     "it to quarantine.\n\n",
                  date);
    if (r->grouping_md) la_buf_printf(b, "%s\n\n", r->grouping_md);
    la_buf_puts(b, "| set | rows | families |\n|---|---:|---:|\n");
    static const char *names[3] = {"dev", "test", "quarantine"};
    for (int k = 0; k < 3; k++) la_buf_printf(b, "| %s | %zu | %zu |\n", names[k], c.rows[k], c.groups[k]);
    if (r->nrejects) la_buf_printf(b, "| rejected | %zu | |\n", r->nrejects);
    double hw = la_stat_ci95(0.9, c.rows[1]);
    la_buf_printf(b, "\nTest set: %zu rows; at 90%% accuracy its 95%% interval is ±%.1f points.\n", c.rows[1],
                  c.rows[1] ? 100 * hw : 100.0);
    la_buf warn = {0};
    if (la_report_small_set_warning(&warn, "This test set", 0.9, c.rows[1]))
        la_buf_printf(b, "\n> **Warning:** %s\n", warn.p);
    if (warn.failed) b->failed = 1;
    la_buf_free(&warn);
    if (c.groups[2]) {
        la_buf_puts(b, "\n## Quarantined families\n\n| family | rows | first date | last date |\n|---|---:|---|---|\n");
        for (size_t g = 0; g < sp->ngroups; g++) {
            const la_split_group *grp = &sp->groups[g];
            if (grp->out != LA_OUT_QUARANTINE) continue;
            la_date_format(grp->min_date, d1);
            la_date_format(grp->max_date, d2);
            la_buf_puts(b, "| ");
            la_buf_md_cell(b, grp->family, 60);
            la_buf_printf(b, " | %zu | %s | %s |\n", grp->nrows, d1, d2);
        }
    }
    la_buf_puts(b, "\nFiles: assignments.jsonl, dev.jsonl, test.jsonl, quarantine.jsonl, rejects.jsonl, report.json.\n");
    return la_buf_status(b);
}

la_status la_split_assignments_jsonl(const la_report *r, const la_split *sp, la_buf *b)
{
    size_t n = la_table_nrows(r->table);
    const la_row *rows = la_table_rows_const(r->table);
    uint32_t *order = la_malloc_n(n, sizeof *order);
    if (!order) return la_error(LA_ENOMEM, "out of memory writing assignments.jsonl");
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    la_sort_rows_by_id(order, n, rows);
    char cut[11], d1[11], d2[11];
    la_date_format(r->cutoff, cut);
    for (size_t k = 0; k < n; k++) {
        uint32_t i = order[k];
        const la_split_group *grp = &sp->groups[sp->group_of[i]];
        la_date_format(grp->min_date, d1);
        la_date_format(grp->max_date, d2);
        la_buf_puts(b, "{\"id\":");
        la_buf_json_str(b, rows[i].id);
        la_buf_puts(b, ",\"split_in\":null,\"split_out\":");
        la_buf_json_str(b, out_name(r, r->audit->out[i]));
        la_buf_puts(b, ",\"family\":");
        la_buf_json_str(b, grp->family);
        const char *rule = grp->out == LA_OUT_QUARANTINE ? "spans the cutoff"
                           : grp->max_date < r->cutoff   ? "entirely before the cutoff"
                                                         : "entirely on or after the cutoff";
        la_buf_printf(b, ",\"reasons\":[\"%s %s: dates %s..%s, cutoff %s\"]}\n",
                      grp->family ? "family" : grp->nrows > 1 ? "group" : "row without family", rule, d1, d2, cut);
    }
    free(order);
    /* rejected rows keep their place in the accounting */
    la_report_rejected_assignments(r, 0, b);
    return la_buf_status(b);
}
