/* threeset.c - demos / dev / test per class with groups kept whole (see threeset.h). */
#include "threeset.h"
#include "la_alloc.h"
#include "la_sort.h"

#include "report_model.h"

#include <math.h>
#include "la_blake2b.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t la_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

typedef struct group {
    uint32_t rep;
    size_t nrows;
} group;

/* Groups by class label, then representative id; ctx is the rows. */
static int cmp_group(const void *x, const void *y, void *ctx)
{
    const la_row *rows = ctx;
    const group *a = x, *b = y;
    int c = strcmp(rows[a->rep].label, rows[b->rep].label);
    return c ? c : strcmp(rows[a->rep].id, rows[b->rep].id);
}

/* Row indices by representative; ctx is the representatives. */
static int cmp_row_by_rep(const void *x, const void *y, void *ctx)
{
    const uint32_t *rep = ctx;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    return rep[i] < rep[j] ? -1 : rep[i] > rep[j];
}

void la_threeset_free(la_threeset *ts)
{
    if (!ts) return;
    free(ts->set);
    free(ts->classes);
    memset(ts, 0, sizeof *ts);
}

la_status la_threeset_make(const la_table *t, const uint32_t *rep, const uint32_t *dup_of, const la_threeset_params *p,
                           la_threeset *ts)
{
    memset(ts, 0, sizeof *ts);
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    if (!(p->dev_share >= 0.1 && p->dev_share <= 0.9))
        return la_error(LA_EINVAL, "--dev-share %g: expected a share from 0.1 to 0.9", p->dev_share);
    for (size_t i = 0; i < n; i++)
        if (!rows[i].label) return la_error(LA_EINTERNAL, "la_threeset_make: row '%s' has no label", rows[i].id);
    ts->set = la_malloc_n(n, 1);
    uint32_t *order = la_malloc_n(n, sizeof *order);
    group *groups = la_malloc_n(n, sizeof *groups);
    uint8_t *gset = la_malloc_n(n, 1);
    if (!ts->set || !order || !groups || !gset) {
        free(order);
        free(groups);
        free(gset);
        la_threeset_free(ts);
        return la_error(LA_ENOMEM, "out of memory making the three-set split");
    }
    /* placeable rows, ordered by group */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (dup_of && dup_of[i] != UINT32_MAX) ts->set[i] = LA_SET_QUARANTINE;
        else order[m++] = (uint32_t)i;
    }
    la_sort(order, m, sizeof *order, cmp_row_by_rep, (void *)rep);
    size_t ng = 0;
    for (size_t k = 0; k < m;) {
        size_t e = k + 1;
        while (e < m && rep[order[e]] == rep[order[k]]) e++;
        /* the representative may be a removed duplicate; the group's class is its smallest placeable id */
        uint32_t r = order[k];
        for (size_t q = k + 1; q < e; q++)
            if (strcmp(rows[order[q]].id, rows[r].id) < 0) r = order[q];
        groups[ng].rep = r;
        groups[ng].nrows = e - k;
        ng++;
        k = e;
    }
    la_sort(groups, ng, sizeof *groups, cmp_group, (void *)rows);

    /* classes */
    size_t ncls = 0;
    for (size_t g = 0; g < ng; g++)
        if (g == 0 || strcmp(rows[groups[g].rep].label, rows[groups[g - 1].rep].label) != 0) ncls++;
    ts->classes = la_calloc_n(ncls, sizeof *ts->classes);
    if (!ts->classes) {
        free(order);
        free(groups);
        free(gset);
        la_threeset_free(ts);
        return la_error(LA_ENOMEM, "out of memory");
    }
    double carry = 0;
    for (size_t g = 0; g < ng;) {
        size_t e = g + 1;
        while (e < ng && strcmp(rows[groups[e].rep].label, rows[groups[g].rep].label) == 0) e++;
        la_threeset_class *cls = &ts->classes[ts->nclasses++];
        cls->label = rows[groups[g].rep].label;
        /* shuffle this class's groups */
        uint64_t state = p->seed ^ fnv1a64(cls->label);
        for (size_t i = e - g; i > 1; i--) {
            size_t j = (size_t)(la_splitmix64(&state) % i);
            group tmp = groups[g + i - 1];
            groups[g + i - 1] = groups[g + j];
            groups[g + j] = tmp;
        }
        size_t total = 0;
        for (size_t q = g; q < e; q++) total += groups[q].nrows;
        /* demos from the front */
        size_t q = g, demos = 0;
        while (q < e && demos + groups[q].nrows <= p->demos_per_class && total - demos - groups[q].nrows >= 2) {
            gset[q] = LA_SET_DEMOS;
            demos += groups[q].nrows;
            q++;
        }
        /* the rest: dev up to its target, then test */
        size_t rest = total - demos, left_groups = e - q;
        double want = carry + (double)rest * p->dev_share;
        /* the carry can make want negative: dev is already ahead, so its target is none (a negative
         * double converted to size_t is undefined; on x86 it became SIZE_MAX, all rows to dev) */
        size_t target = want > 0 ? (size_t)floor(want + 0.5) : 0;
        size_t dev = 0;
        size_t first_rest = q;
        for (; q < e; q++) {
            int to_dev = dev == 0 || dev + groups[q].nrows <= target;
            if (left_groups >= 2 && q == e - 1) {
                /* the last group: make sure test got one */
                int test_has = 0;
                for (size_t r2 = first_rest; r2 < q; r2++) test_has |= gset[r2] == LA_SET_TEST;
                if (!test_has) to_dev = 0;
            }
            gset[q] = to_dev ? LA_SET_DEV : LA_SET_TEST;
            if (to_dev) dev += groups[q].nrows;
        }
        carry = want - (double)dev;
        for (size_t r2 = g; r2 < e; r2++) cls->rows[gset[r2]] += groups[r2].nrows;
        g = e;
    }
    /* every placeable row takes its group's set, found through the group key rep[] */
    uint8_t *by_rep = la_malloc_n(n, 1);
    if (!by_rep) {
        free(order);
        free(groups);
        free(gset);
        la_threeset_free(ts);
        return la_error(LA_ENOMEM, "out of memory");
    }
    for (size_t g = 0; g < ng; g++) by_rep[rep[groups[g].rep]] = gset[g];
    for (size_t k = 0; k < m; k++) ts->set[order[k]] = by_rep[rep[order[k]]];
    free(by_rep);

    for (size_t i = 0; i < n; i++) ts->rows[ts->set[i]]++;
    for (size_t c = 0; c < ts->nclasses; c++) ts->classes[c].thin = ts->classes[c].rows[LA_SET_TEST] < 5;
    size_t dt = ts->rows[LA_SET_DEV] + ts->rows[LA_SET_TEST];
    ts->dev_share_reached = dt ? (double)ts->rows[LA_SET_DEV] / (double)dt : NAN;
    size_t best = 0;
    for (size_t c = 0; c < ts->nclasses; c++)
        if (ts->classes[c].rows[LA_SET_TEST] > best) {
            best = ts->classes[c].rows[LA_SET_TEST];
            ts->majority_label = ts->classes[c].label;
        }
    ts->majority_floor = ts->rows[LA_SET_TEST] ? (double)best / (double)ts->rows[LA_SET_TEST] : NAN;
    free(order);
    free(groups);
    free(gset);
    return LA_OK;
}

la_status la_threeset_fingerprint(const la_table *t, const la_threeset *ts, int set, const unsigned char *key,
                                  char hex[65])
{
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    uint32_t *order = la_malloc_n(n, sizeof *order);
    if (!order) return la_error(LA_ENOMEM, "out of memory fingerprinting a set"); /* never a hash of nothing */
    la_blake2b_state st;
    la_blake2b_init(&st, key, key ? 32 : 0, 32);
    {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (ts->set[i] == set) order[m++] = (uint32_t)i;
        la_sort_rows_by_id(order, m, rows);
        for (size_t k = 0; k < m; k++) {
            const la_row *r = &rows[order[k]];
            unsigned char h[16];
            for (int b = 0; b < 8; b++) {
                h[b] = (unsigned char)(r->hash[0] >> (8 * b));
                h[8 + b] = (unsigned char)(r->hash[1] >> (8 * b));
            }
            /* id and label are NUL-terminated so that field boundaries cannot shift */
            la_blake2b_update(&st, (const unsigned char *)r->id, strlen(r->id) + 1);
            la_blake2b_update(&st, (const unsigned char *)r->label, strlen(r->label) + 1);
            la_blake2b_update(&st, h, sizeof h);
        }
        free(order);
    }
    unsigned char out[32];
    la_blake2b_final(&st, out, sizeof out);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", out[i]);
    return LA_OK;
}

static const char *const k_set_names[LA_SET_COUNT] = {"demos", "dev", "test", "quarantine"};

const char *la_threeset_set_name(int set) { return set >= 0 && set < LA_SET_COUNT ? k_set_names[set] : NULL; }

la_status la_threeset_manifest_json(const la_report *r, const la_threeset *ts, const la_threeset_params *p,
                                    const char fingerprints[LA_SET_COUNT][65], int keyed, la_buf *b)
{
    size_t placed = la_table_nrows(r->table);
    la_buf_printf(b, "{\n  \"schema_version\": %d,\n  \"tool\": {\"name\": \"leakaudit\", \"version\": ",
                  LA_REPORT_SCHEMA_VERSION);
    la_buf_json_str(b, la_version());
    la_buf_printf(b, "},\n  \"command\": \"split\",\n  \"parameters\": {\"rule\": \"three-set\", \"seed\": %llu, "
                     "\"demos_per_class\": %zu, \"dev_share\": ",
                  (unsigned long long)p->seed, p->demos_per_class);
    la_buf_json_num(b, p->dev_share);
    la_buf_printf(b, ", \"shuffle\": \"splitmix64(seed ^ fnv1a64(label)), Fisher-Yates\", \"fingerprint\": \"%s\", "
                     "\"normalize\": ",
                  keyed ? "blake2b-256-keyed" : "blake2b-256");
    la_buf_json_str(b, r->normalize);
    la_report_backend_json(r, b);
    la_buf_puts(b, "},\n");
    la_report_inputs_json(r, b);
    if (r->grouping_json) la_buf_printf(b, "  \"grouping\": %s,\n", r->grouping_json);
    la_buf_printf(b, "  \"counts\": {\"rows_read\": %zu, \"rows_placed\": %zu, \"rows_rejected\": %zu, \"sets\": {",
                  placed + r->nrejects, placed, r->nrejects);
    for (int s = 0; s < LA_SET_COUNT; s++) la_buf_printf(b, "%s\"%s\": %zu", s ? ", " : "", k_set_names[s], ts->rows[s]);
    la_buf_printf(b, "}, \"duplicates_removed\": %zu, \"label_conflicts\": %zu},\n", ts->rows[LA_SET_QUARANTINE],
                  r->nconflicts);
    la_buf_puts(b, "  \"classes\": [");
    for (size_t c = 0; c < ts->nclasses; c++) {
        const la_threeset_class *cls = &ts->classes[c];
        la_buf_puts(b, c ? ",\n    {\"label\": " : "\n    {\"label\": ");
        la_buf_json_str(b, cls->label);
        for (int s = 0; s < LA_SET_COUNT; s++) la_buf_printf(b, ", \"%s\": %zu", k_set_names[s], cls->rows[s]);
        la_buf_printf(b, ", \"thin\": %s}", cls->thin ? "true" : "false");
    }
    la_buf_puts(b, ts->nclasses ? "\n  ],\n  \"dev_share_reached\": " : "],\n  \"dev_share_reached\": ");
    la_buf_json_num(b, ts->dev_share_reached);
    size_t dev = ts->rows[LA_SET_DEV], test = ts->rows[LA_SET_TEST];
    int off = !(ts->dev_share_reached >= 0.4 && ts->dev_share_reached <= 0.6);
    la_buf_printf(b, ",\n  \"share_outside_0.4_0.6\": %s, \"smaller_set\": {\"set\": \"%s\", \"rows\": %zu},\n",
                  off ? "true" : "false", dev < test ? "dev" : "test", dev < test ? dev : test);
    la_buf_puts(b, "  \"majority_floor\": {\"label\": ");
    la_buf_json_str(b, ts->majority_label);
    la_buf_puts(b, ", \"share\": ");
    la_buf_json_num(b, ts->majority_floor);
    la_buf_puts(b, "},\n  \"test_interval_at_90\": ");
    la_buf_json_num(b, la_stat_ci95(0.9, test));
    la_buf_puts(b, ",\n  \"fingerprints\": {");
    for (int s = 0; s < LA_SET_COUNT; s++) la_buf_printf(b, "%s\"%s\": \"%s\"", s ? ", " : "", k_set_names[s], fingerprints[s]);
    la_buf_puts(b, "},\n  \"test_set_opened\": 0,\n  ");
    la_report_timings_json(r, b);
    la_buf_puts(b, "\n}\n");
    return la_buf_status(b);
}

la_status la_threeset_manifest_md(const la_report *r, const la_threeset *ts, const la_threeset_params *p,
                                  const char fingerprints[LA_SET_COUNT][65], int keyed, la_buf *b)
{
    size_t dev = ts->rows[LA_SET_DEV], test = ts->rows[LA_SET_TEST];
    la_buf_printf(b, "# Split manifest\n\nRule: three sets (demos / dev / test) per class. Seed %llu, %zu demos per "
                     "class, dev share %.2f. Groups (families and copy clusters) are kept whole; later exact copies are "
                     "set aside (quarantine).\n\n",
                  (unsigned long long)p->seed, p->demos_per_class, p->dev_share);
    if (r->grouping_md) la_buf_printf(b, "%s\n\n", r->grouping_md);
    la_buf_puts(b, "| class | demos | dev | test | set aside | |\n|---|---:|---:|---:|---:|---|\n");
    for (size_t c = 0; c < ts->nclasses; c++) {
        const la_threeset_class *cls = &ts->classes[c];
        la_buf_puts(b, "| ");
        la_buf_md_cell(b, cls->label, 40);
        la_buf_printf(b, " | %zu | %zu | %zu | %zu | %s |\n", cls->rows[LA_SET_DEMOS], cls->rows[LA_SET_DEV],
                      cls->rows[LA_SET_TEST], cls->rows[LA_SET_QUARANTINE], cls->thin ? "thin: fewer than 5 test rows" : "");
    }
    la_buf_printf(b, "| **all** | %zu | %zu | %zu | %zu | |\n\n", ts->rows[LA_SET_DEMOS], dev, test,
                  ts->rows[LA_SET_QUARANTINE]);
    la_buf_printf(b, "Dev share reached: %.3f.", ts->dev_share_reached);
    if (!(ts->dev_share_reached >= 0.4 && ts->dev_share_reached <= 0.6))
        la_buf_printf(b, " It is outside 0.4-0.6: the smaller set (%s) has only %zu rows.", dev < test ? "dev" : "test",
                      dev < test ? dev : test);
    if (ts->majority_label) {
        la_buf_printf(b, "\n\nMajority-class floor: `");
        la_buf_md_cell(b, ts->majority_label, 40);
        la_buf_printf(b, "` is %.1f%% of the test set; a classifier that learned nothing scores that by always "
                         "answering it.",
                      100 * ts->majority_floor);
    }
    la_buf_printf(b, "\n\nTest set: %zu rows; at 90%% accuracy its 95%% interval is ±%.1f points.\n\n", test,
                  test ? 100 * la_stat_ci95(0.9, test) : 100.0);
    la_buf warn = {0};
    if (la_report_small_set_warning(&warn, "This test set", 0.9, test)) la_buf_printf(b, "> **Warning:** %s\n\n", warn.p);
    if (warn.failed) b->failed = 1;
    la_buf_free(&warn);
    la_buf_printf(b, "## Fingerprints (BLAKE2b-256%s)\n\nEach changes when a row is added, removed or relabeled, and "
                     "ignores case and spacing changes in the text.\n\n| set | fingerprint |\n|---|---|\n",
                  keyed ? ", keyed" : "");
    for (int s = 0; s < LA_SET_COUNT; s++) la_buf_printf(b, "| %s | `%s` |\n", k_set_names[s], fingerprints[s]);
    la_buf_puts(b, "\nTest set opened: 0 times\n\n## Changelog\n\n| revision | what changed | the failure that motivated it "
                   "| dev score before | dev score after |\n|---|---|---|---|---|\n| 1 | initial split | | | |\n\n"
                   "## Test set openings\n\n| date | milestone | opened by |\n|---|---|---|\n");
    return la_buf_status(b);
}

la_status la_threeset_assignments_jsonl(const la_report *r, const la_threeset *ts, const uint32_t *rep,
                                        const uint32_t *dup_of, la_buf *b)
{
    size_t n = la_table_nrows(r->table);
    const la_row *rows = la_table_rows_const(r->table);
    uint32_t *order = la_malloc_n(n, sizeof *order);
    if (!order) return la_error(LA_ENOMEM, "out of memory writing assignments.jsonl");
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    la_sort_rows_by_id(order, n, rows);
    for (size_t k = 0; k < n; k++) {
        uint32_t i = order[k];
        la_buf_puts(b, "{\"id\":");
        la_buf_json_str(b, rows[i].id);
        la_buf_puts(b, ",\"split_in\":null,\"split_out\":");
        la_buf_json_str(b, k_set_names[ts->set[i]]);
        la_buf_puts(b, ",\"label\":");
        la_buf_json_str(b, rows[i].label);
        la_buf_puts(b, ",\"group\":");
        la_buf_json_str(b, rows[rep[i]].id);
        la_buf_puts(b, ",\"reasons\":[");
        if (dup_of && dup_of[i] != UINT32_MAX) {
            la_buf tmp = {0};
            la_buf_puts(&tmp, "duplicate-of:");
            la_buf_puts(&tmp, rows[dup_of[i]].id);
            la_buf_json_strn(b, tmp.p ? tmp.p : "", tmp.n);
            if (tmp.failed) b->failed = 1;
            la_buf_free(&tmp);
        } else {
            la_buf_printf(b, "\"three-set: class and group shuffled with the seed\"");
        }
        la_buf_puts(b, "]}\n");
    }
    free(order);
    la_report_rejected_assignments(r, 0, b);
    return la_buf_status(b);
}
