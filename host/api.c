/*
 * api.c - the embedding entry points of include/leakaudit.h (la_options, la_audit_run, la_result,
 * la_split_run, la_split_result): the same options, runs and writers as `leakaudit audit`
 * (pipeline.c) and `leakaudit split` (split_job.c), with the option values copied and the results
 * owned by the caller.
 */
#include "arrow.h"
#include "la_alloc.h"
#include "leakaudit.h"
#include "outdir.h"
#include "pipeline.h"
#include "report_model.h"
#include "split_job.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct la_options {
    int is_split;         /* made by la_options_new_split */
    union {
        la_audit_job audit;
        la_split_job split;
    } job;
    char **strings;       /* copies of every value and path: the job points into them */
    size_t nstrings, capstrings;
    la_arrow_input *arrow; /* inputs in memory, owned: released with the options */
    size_t narrow, caparrow;
};

struct la_split_result {
    la_split_state st;
    la_options *job;   /* as in la_result */
};

struct la_result {
    la_audit_state st;
    la_options *job;   /* the finished copy of the options the state was computed under (shallow:
                          its strings are the caller's la_options', unused after la_audit_run) */
};

/* The common input options of either kind of job. */
static la_cli *options_cli(la_options *o) { return o->is_split ? &o->job.split.cli : &o->job.audit.cli; }

la_status la_options_new(la_options **out)
{
    *out = NULL;
    la_options *o = calloc(1, sizeof *o);
    if (!o) return la_error(LA_ENOMEM, "out of memory creating audit options");
    la_audit_job_init(&o->job.audit);
    o->job.audit.cli.out = NULL; /* no folder to check: la_result_write takes one */
    *out = o;
    return LA_OK;
}

la_status la_options_new_split(la_options **out)
{
    *out = NULL;
    la_options *o = calloc(1, sizeof *o);
    if (!o) return la_error(LA_ENOMEM, "out of memory creating split options");
    o->is_split = 1;
    la_split_job_init(&o->job.split);
    o->job.split.cli.out = NULL; /* la_split_result_write takes the folder */
    *out = o;
    return LA_OK;
}

void la_options_free(la_options *o)
{
    if (!o) return;
    if (o->is_split) la_split_job_free(&o->job.split);
    else la_audit_job_free(&o->job.audit);
    for (size_t k = 0; k < o->nstrings; k++) free(o->strings[k]);
    free(o->strings);
    for (size_t k = 0; k < o->narrow; k++) la_arrow_release(&o->arrow[k]);
    free(o->arrow);
    free(o);
}

/* A copy of s that lives as long as o. */
static la_status keep(la_options *o, const char *s, const char **out)
{
    if (!la_grow((void **)&o->strings, &o->capstrings, o->nstrings + 1, sizeof *o->strings, 16))
        return la_error(LA_ENOMEM, "out of memory");
    char *c = strdup(s);
    if (!c) return la_error(LA_ENOMEM, "out of memory");
    o->strings[o->nstrings++] = c;
    *out = c;
    return LA_OK;
}

/* The entry of a command's option table named `name`, or NULL. */
static const struct option *find_option(const struct option *table, const char *name)
{
    const struct option *opt = NULL;
    for (const struct option *p = table; p->name; p++)
        if (!strcmp(p->name, name)) opt = p;
    return opt;
}

static int takes_value(const struct option *table, const char *name)
{
    const struct option *opt = name ? find_option(table, name) : NULL;
    return !opt ? -1 : opt->has_arg != no_argument;
}

int la_option_takes_value(const char *name) { return takes_value(la_audit_options, name); }
int la_split_option_takes_value(const char *name) { return takes_value(la_split_options, name); }

la_status la_options_set(la_options *o, const char *name, const char *value)
{
    if (!o || !name) return la_error(LA_EINVAL, "la_options_set: no options or no name");
    const char *command = o->is_split ? "split" : "audit";
    const struct option *opt = find_option(o->is_split ? la_split_options : la_audit_options, name);
    if (!opt || !strcmp(name, "help"))
        return la_error(LA_EINVAL, "la_options_set: '%s' is not an option of leakaudit %s", name, command);
    if (opt->has_arg == required_argument && !value) return la_error(LA_EINVAL, "--%s: a value is required", name);
    if (opt->has_arg == no_argument) value = NULL;
    if (!strcmp(name, "out")) return LA_OK; /* la_result_write takes the folder */
    if (!strcmp(name, "shard"))
        return la_error(LA_EINVAL, "--shard: sharded audits are run by the program (leakaudit audit --shard I/N, then "
                                   "leakaudit merge), which keeps the arguments the merge needs");
    const char *arg = NULL;
    if (value) LA_TRY(keep(o, value, &arg));
    int handled = 0;
    la_status s = o->is_split ? la_split_job_option(&o->job.split, opt->val, opt->name, arg, &handled)
                              : la_audit_job_option(&o->job.audit, opt->val, opt->name, arg, &handled);
    if (!handled) s = la_cli_option(options_cli(o), opt->val, arg);
    return s;
}

la_status la_options_add_input(la_options *o, const char *part, const char *path)
{
    if (!o || !path) return la_error(LA_EINVAL, "la_options_add_input: no options or no path");
    if (part && o->is_split)
        return la_error(LA_EINVAL, "%s: a split places the rows by its rule: give the input without a partition", path);
    const char *p = NULL;
    LA_TRY(keep(o, path, &p));
    if (!part) return la_cli_option(options_cli(o), 1, p);
    size_t n = strlen(part) + 1 + strlen(path) + 1;
    char *spec = malloc(n);
    if (!spec) return la_error(LA_ENOMEM, "out of memory");
    snprintf(spec, n, "%s=%s", part, path);
    const char *kept = NULL;
    la_status s = keep(o, spec, &kept);
    free(spec);
    if (s == LA_OK) s = la_cli_option(options_cli(o), LA_OPT_PART, kept);
    return s;
}

la_status la_options_add_arrow(la_options *o, const char *part, const char *name, struct ArrowSchema *schema,
                               struct ArrowArray *array)
{
    if (!o || !name) return la_error(LA_EINVAL, "la_options_add_arrow: no options or no name");
    if (!strcmp(name, "-")) return la_error(LA_EINVAL, "la_options_add_arrow: '-' names standard input; give another name");
    LA_TRY(la_arrow_check(schema, array));
    if (!la_grow((void **)&o->arrow, &o->caparrow, o->narrow + 1, sizeof *o->arrow, 4))
        return la_error(LA_ENOMEM, "out of memory");
    LA_TRY(la_options_add_input(o, part, name));
    /* the input's path pointer is what tells the loader to read this one from memory */
    la_arrow_input *in = &o->arrow[o->narrow++];
    const la_cli *c = options_cli(o);
    in->path = c->inputs[c->ninputs - 1].path;
    in->schema = *schema;
    in->array = *array;
    schema->release = NULL;
    array->release = NULL;
    return LA_OK;
}

/* Finishing fills defaults into the job: a run works on a shallow copy of o, so o stays as the
 * caller set it. NULL when out of memory. */
static la_options *working_copy(const la_options *o)
{
    la_options *w = malloc(sizeof *w);
    if (!w) return NULL;
    *w = *o;
    la_cli *c = options_cli(w);
    c->nowned = 0; /* the copy owns nothing of o's: o keeps its strings and arrays */
    /* what finishing allocates (the paths it keeps, the fields record) is the copy's own */
    c->paths = NULL;
    c->npaths = c->cappaths = 0;
    c->fields_json = NULL;
    c->load.arrow = o->arrow;
    c->load.narrow = o->narrow;
    return w;
}

/* What finishing allocated in a working copy, and the copy itself (the rest is the options'). */
static void working_copy_free(la_options *w)
{
    if (w) la_cli_free(options_cli(w));
    free(w);
}

la_status la_audit_run(const la_options *o, la_result **out)
{
    *out = NULL;
    if (!o) return la_error(LA_EINVAL, "la_audit_run: no options");
    if (o->is_split) return la_error(LA_EINVAL, "la_audit_run: these are options of a split (la_options_new_split)");
    la_options *w = working_copy(o);
    la_result *r = calloc(1, sizeof *r);
    if (!w || !r) {
        free(w);
        free(r);
        return la_error(LA_ENOMEM, "out of memory starting an audit");
    }
    la_status s = la_audit_job_finish(&w->job.audit);
    if (s == LA_OK) s = la_audit_execute(&w->job.audit, !w->job.audit.cli.quiet, &r->st);
    r->job = w;
    if (s != LA_OK) {
        la_result_free(r);
        return s;
    }
    *out = r;
    return LA_OK;
}

void la_result_free(la_result *r)
{
    if (!r) return;
    la_audit_state_free(&r->st);
    working_copy_free(r->job);
    free(r);
}

const la_table *la_result_table(const la_result *r) { return r->st.table; }
uint32_t la_result_heldout(const la_result *r) { return r->st.heldout; }

const la_pair *la_result_links(const la_result *r, size_t *n)
{
    *n = r->st.pairs.n;
    return r->st.pairs.v;
}

size_t la_result_nclusters(const la_result *r) { return r->st.audit.nclusters; }

uint32_t la_result_cluster(const la_result *r, size_t row)
{
    return row < la_table_nrows(r->st.table) ? r->st.audit.cluster[row] : 0;
}

uint32_t la_result_outcome(const la_result *r, size_t row)
{
    return row < la_table_nrows(r->st.table) ? r->st.audit.out[row] : LA_OUTCOME_QUARANTINE;
}

const la_reject *la_result_rejects(const la_result *r, size_t *n)
{
    *n = r->st.loader.nrejects;
    return r->st.loader.rejects;
}

void la_result_stats_get(const la_result *r, la_result_stats *out)
{
    memset(out, 0, sizeof *out);
    const la_report *rep = &r->st.report;
    const la_row *rows = la_table_rows_const(r->st.table);
    size_t n = la_table_nrows(r->st.table), scored = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        int quarantined = r->st.audit.out[i] == LA_OUTCOME_QUARANTINE;
        out->quarantined += quarantined;
        if (rows[i].part != r->st.heldout) continue;
        out->heldout_rows++;
        if (quarantined) continue;
        out->heldout_clean++;
        if (!isnan(rows[i].score)) scored++, sum += rows[i].score;
    }
    out->rows_rejected = rep->nrejects;
    out->rows_read = n + rep->nrejects;
    out->links = r->st.pairs.n;
    out->gating_links = la_report_gating_pairs(rep);
    out->clusters = r->st.audit.nclusters;
    out->accuracy_observed = scored > 0;
    out->accuracy = scored ? sum / (double)scored : rep->assumed_accuracy;
    out->ci95 = la_stat_ci95(out->accuracy, out->heldout_clean);
    out->leaks = rep->leaks;
    out->exit_code = rep->exit_code;
}

/* b into the caller's buf as snprintf would (size bytes, NUL-terminated), freed; its length. */
static size_t give_text(la_buf *b, char *buf, size_t size)
{
    size_t n = b->n;
    if (size) {
        size_t k = n < size - 1 ? n : size - 1;
        if (k) memcpy(buf, b->p, k);
        buf[k] = '\0';
    }
    la_buf_free(b);
    return n;
}

size_t la_result_summary(const la_result *r, const char *dir, char *buf, size_t size)
{
    la_buf b = {0};
    la_report_summary(&r->st.report, &r->st.audit, dir ? dir : "", &b);
    return give_text(&b, buf, size);
}

/* dir may be replaced and holds none of the inputs the loader read (the options may be gone). */
static la_status check_dir(const la_loader *L, const char *dir)
{
    const char **paths = la_malloc_n(L->nfiles, sizeof *paths);
    if (!paths) return la_error(LA_ENOMEM, "out of memory");
    for (size_t k = 0; k < L->nfiles; k++) paths[k] = L->files[k].path;
    la_status s = la_outdir_check(dir, paths, L->nfiles);
    free(paths);
    return s;
}

la_status la_result_write(const la_result *r, const char *dir)
{
    if (!r || !dir) return la_error(LA_EINVAL, "la_result_write: no result or no folder");
    LA_TRY(check_dir(&r->st.loader, dir));
    return la_audit_write(&r->st, dir);
}

/* ---- splits ---- */

la_status la_split_run(const la_options *o, la_split_result **out)
{
    *out = NULL;
    if (!o) return la_error(LA_EINVAL, "la_split_run: no options");
    if (!o->is_split) return la_error(LA_EINVAL, "la_split_run: these are options of an audit (make them with la_options_new_split)");
    la_options *w = working_copy(o);
    la_split_result *r = calloc(1, sizeof *r);
    if (!w || !r) {
        free(w);
        free(r);
        return la_error(LA_ENOMEM, "out of memory starting a split");
    }
    r->job = w;
    const la_split_job *j = &w->job.split;
    la_status s = la_split_job_finish(&w->job.split);
    if (s == LA_OK) s = la_split_execute(j, &r->st);
    if (s != LA_OK) {
        la_split_result_free(r);
        return s;
    }
    la_buf b = {0};
    la_split_short(&r->st, j->cli.quiet, 0, &b);
    fwrite(b.p, 1, b.n, stderr);
    la_buf_free(&b);
    *out = r;
    return LA_OK;
}

void la_split_result_free(la_split_result *r)
{
    if (!r) return;
    la_split_state_free(&r->st);
    working_copy_free(r->job);
    free(r);
}

const la_table *la_split_result_table(const la_split_result *r) { return r->st.table; }

uint32_t la_split_result_set(const la_split_result *r, size_t row)
{
    return row < la_table_nrows(r->st.table) ? r->st.audit.out[row] : LA_OUTCOME_QUARANTINE;
}

const la_reject *la_split_result_rejects(const la_split_result *r, size_t *n)
{
    *n = r->st.loader.nrejects;
    return r->st.loader.rejects;
}

void la_split_result_stats_get(const la_split_result *r, la_split_stats *out)
{
    memset(out, 0, sizeof *out);
    size_t rows[LA_SET_COUNT];
    la_split_counts(&r->st, rows);
    out->rows_rejected = r->st.loader.nrejects;
    out->rows_read = la_table_nrows(r->st.table) + out->rows_rejected;
    out->demos = rows[LA_SET_DEMOS];
    out->dev = rows[LA_SET_DEV];
    out->test = rows[LA_SET_TEST];
    out->quarantined = rows[LA_SET_QUARANTINE];
    out->three_set = r->st.job->three_set;
    out->exit_code = la_split_short(&r->st, 1, 0, NULL) ? LA_EXIT_LEAKS : LA_EXIT_CLEAN;
}

size_t la_split_result_summary(const la_split_result *r, const char *dir, char *buf, size_t size)
{
    la_buf b = {0};
    la_split_summary(&r->st, dir, &b);
    return give_text(&b, buf, size);
}

la_status la_split_result_write(const la_split_result *r, const char *dir)
{
    if (!r || !dir) return la_error(LA_EINVAL, "la_split_result_write: no result or no folder");
    LA_TRY(check_dir(&r->st.loader, dir));
    return la_split_write(&r->st, dir);
}
