/*
 * pipeline.c - one audit, stage by stage (docs/architecture.md): load, links, tiers, grades and
 * decisions, the report model; and la_report_init, which every report-writing command uses.
 */
#include "pipeline.h"

#include "la_alloc.h"
#include "la_arena.h"
#include "la_spill.h"
#include "manifest.h"
#include "model.h"
#include "outdir.h"
#include "parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The most the near tier keeps of its shingle sets between phases (la_near_params.set_cache_bytes). */
#define NEAR_SET_CACHE_MAX ((size_t)512 << 20)
/* Of --memory-limit, the share of spill files that may stay mapped (1 / SPILL_MAPPED_SHARE). */
#define SPILL_MAPPED_SHARE 8
/* Inputs larger than this (or than a sixteenth of --memory-limit) keep their rows in spill files. */
#define TEXT_SPILL_FROM ((size_t)512 << 20)

enum {
    OPT_RESOLVE = LA_OPT_COMMAND_BASE, OPT_MAX_CLUSTER, OPT_BACKEND, OPT_SEMANTIC, OPT_NEAR, OPT_PROGRESS,
    OPT_BASELINE, OPT_WAIVERS, OPT_TODAY, OPT_FAIL_ON_NEW, OPT_SHARD
};

const struct option la_audit_options[] = {LA_CLI_COMMON_OPTIONS,
                                          {"resolve", required_argument, 0, OPT_RESOLVE},
                                          {"max-cluster", required_argument, 0, OPT_MAX_CLUSTER},
                                          {"backend", required_argument, 0, OPT_BACKEND},
                                          {"progress", required_argument, 0, OPT_PROGRESS},
                                          {"baseline", required_argument, 0, OPT_BASELINE},
                                          {"waivers", required_argument, 0, OPT_WAIVERS},
                                          {"today", required_argument, 0, OPT_TODAY},
                                          {"fail-on-new", no_argument, 0, OPT_FAIL_ON_NEW},
                                          {"shard", required_argument, 0, OPT_SHARD},
                                          LA_SEMANTIC_LONG_OPTIONS(OPT_SEMANTIC),
                                          {"semantic-method", required_argument, 0, OPT_SEMANTIC},
                                          {"semantic-topk", required_argument, 0, OPT_SEMANTIC},
                                          {"semantic-margin", required_argument, 0, OPT_SEMANTIC},
                                          {"semantic-windows", required_argument, 0, OPT_SEMANTIC},
                                          {"memory-limit", required_argument, 0, OPT_SEMANTIC},
                                          LA_NEAR_LONG_OPTIONS(OPT_NEAR),
                                          {"within", no_argument, 0, OPT_NEAR},
                                          {0, 0, 0, 0}};

void la_audit_job_init(la_audit_job *j)
{
    memset(j, 0, sizeof *j);
    la_cli_init(&j->cli, "audit");
    j->resolve = LA_RESOLVE_QUARANTINE;
    j->link_grade = LA_GRADE_NEAR;
    j->max_cluster = LA_DEFAULT_MAX_CLUSTER;
    j->backend = LA_BACKEND_AUTO;
    j->today = LA_NO_DATE;
    la_semantic_opts_init(&j->semantic);
    la_near_opts_init(&j->near);
}

void la_audit_job_free(la_audit_job *j)
{
    la_semantic_opts_free(&j->semantic);
    la_cli_free(&j->cli);
}

la_status la_audit_job_option(void *job, int opt, const char *name, const char *arg, int *handled)
{
    la_audit_job *j = job;
    *handled = 1;
    switch (opt) {
    case OPT_SEMANTIC: return la_semantic_option(&j->semantic, name, arg);
    case OPT_NEAR: return la_near_option(&j->near, name, arg);
    case OPT_RESOLVE: return la_resolve_parse_grade(arg, &j->resolve, &j->link_grade);
    case OPT_BACKEND: return la_backend_parse(arg, &j->backend);
    case OPT_PROGRESS: return la_progress_parse(arg, &j->progress);
    case OPT_BASELINE: j->baseline = arg; return LA_OK;
    case OPT_WAIVERS: j->waivers = arg; return LA_OK;
    case OPT_FAIL_ON_NEW: j->fail_on_new = 1; return LA_OK;
    case OPT_SHARD: j->shard_arg = arg; return la_shard_parse(arg, &j->shard);
    case OPT_TODAY:
        if (la_date_parse(arg, strlen(arg), 0, &j->today) != LA_OK)
            return la_error(LA_EINVAL, "--today %s: expected a date YYYY-MM-DD that exists on the calendar", arg);
        return LA_OK;
    case OPT_MAX_CLUSTER: {
        char *end;
        long v = strtol(arg, &end, 10);
        if (*end || v < 0) return la_error(LA_EINVAL, "--max-cluster %s: expected a row count (0 turns the check off)", arg);
        j->max_cluster = (size_t)v;
        return LA_OK;
    }
    }
    *handled = 0;
    return LA_OK;
}

/* What a shard cannot do: the options that look at one run's whole result belong to `merge`, and
 * those whose result depends on which rows a process holds would not add up. */
static la_status check_shard(const la_audit_job *j)
{
    const char *no = j->baseline ? "--baseline" : j->waivers ? "--waivers" : j->fail_on_new ? "--fail-on-new"
                     : j->today != LA_NO_DATE ? "--today" : NULL;
    if (no)
        return la_error(LA_EINVAL, "--shard: give %s to leakaudit merge, which writes the report it applies to", no);
    for (size_t k = 0; k < j->cli.ninputs; k++)
        if (j->cli.inputs[k].path && !strcmp(j->cli.inputs[k].path, "-"))
            return la_error(LA_EINVAL, "--shard: leakaudit merge reads the inputs again, which standard input cannot "
                                       "give: write it to a file first");
    if (j->near.enabled && j->near.p.within)
        return la_error(LA_EINVAL, "--shard: --within pairs rows of one partition, which the shards of the seen side "
                                   "do not see together: audit --within without --shard");
    const la_semantic_opts *o = &j->semantic;
    if (o->enabled && o->cache_dir)
        return la_error(LA_EINVAL, "--shard: --cache is one file the shards would write at once: run the shards "
                                   "without it");
    if (o->enabled && o->margin > 0)
        return la_error(LA_EINVAL, "--shard: --semantic-margin compares each pair with every seen row's "
                                   "neighbourhood, which a shard does not see: audit without --shard");
    if (o->enabled && o->topk > 1 && !o->no_windows && !o->nemb && !o->embedding_field && !(o->embed_set && o->lexical))
        return la_error(LA_EINVAL, "--shard: --semantic-topk above 1 needs --semantic-windows off (a long text's "
                                   "nearest windows are merged per text before the shards are)");
    return LA_OK;
}

la_status la_audit_job_finish(la_audit_job *j)
{
    if (j->shard.count) LA_TRY(check_shard(j));
    j->cli.load.embedding_field = j->semantic.enabled ? j->semantic.embedding_field : NULL;
    if (j->fail_on_new && !j->baseline)
        return la_error(LA_EINVAL, "--fail-on-new gates on the links that are new since a baseline: give --baseline DIR "
                                   "(the output folder of an earlier run)");
    if (j->today != LA_NO_DATE && !j->waivers)
        return la_error(LA_EINVAL, "--today sets the day waivers expire against: give --waivers FILE");
    size_t n = 0;
    for (size_t k = 0; k < j->semantic.nemb; k++) j->extra[n++] = j->semantic.emb_path[k];
    if (j->waivers) j->extra[n++] = j->waivers; /* an input too: it must not lie inside --out */
    j->cli.extra_inputs = j->extra;
    j->cli.nextra = n;
    return la_cli_finish(&j->cli);
}

/* Does argv[i] hold the option value v (as the whole element, or after "--name=")? */
static int holds(const char *elem, const char *v) { return v && v >= elem && v <= elem + strlen(elem); }

la_status la_audit_job_record_args(const la_audit_job *j, la_partial *p)
{
    p->argv = calloc((size_t)(j->argc > 0 ? j->argc : 1), sizeof *p->argv);
    if (!p->argv) return la_error(LA_ENOMEM, "out of memory");
    p->argc = 0;
    for (int i = 1; i < j->argc; i++) {
        const char *a = j->argv[i];
        if (holds(a, j->shard_arg) || holds(a, j->cli.out)) {
            /* a value of its own: the option before it goes too */
            if ((a == j->shard_arg || a == j->cli.out) && p->argc) free(p->argv[--p->argc]);
            continue;
        }
        if (!(p->argv[p->argc] = strdup(a))) return la_error(LA_ENOMEM, "out of memory");
        p->argc++;
    }
    return LA_OK;
}

int la_exit_for(la_status s)
{
    /* no usable device, or a build without one, for --backend gpu: a request that cannot be met */
    if (s == LA_ENODEV || s == LA_EUNSUPPORTED) return LA_EXIT_USAGE;
    return s == LA_EINPUT || s == LA_EINVAL || s == LA_EIO ? LA_EXIT_USAGE : LA_EXIT_INTERNAL;
}

void la_report_init(la_report *r, const char *command, const la_table *t, const la_loader *L,
                    const la_exact_result *ex, const la_cli *c)
{
    memset(r, 0, sizeof *r);
    r->command = command;
    r->table = t;
    r->files = L->files;
    r->nfiles = L->nfiles;
    r->rejects = L->rejects;
    r->nrejects = L->nrejects;
    if (ex) {
        r->dup_of = ex->dup_of;
        r->ndup = ex->ndup;
        r->exact_cross_groups = ex->ncross_groups;
        r->conflict_rows = ex->conflict_rows;
        r->conflict_start = ex->conflict_start;
        r->nconflicts = ex->nconflicts;
    }
    r->cutoff = c ? c->cutoff : LA_NO_DATE;
    r->normalize = la_norm_mode_name(c ? c->norm : LA_NORM_NFKC);
    r->on_invalid = !c || c->reject_invalid ? "reject" : "fail";
    r->date_format = c && c->load.allow_timestamp ? "iso8601" : "canonical";
    r->fields_json = c ? c->fields_json : NULL;
    if (c) r->gate = c->gate;
    else la_gate_default(&r->gate);
    r->resolve = LA_RESOLVE_QUARANTINE;
    r->max_cluster = LA_DEFAULT_MAX_CLUSTER;
    r->assumed_accuracy = 0.9;
    r->backend = "cpu";
    r->backend_note = "";
}

/* ---- the stages ---- */

/* A gate must not pass on nothing: the held-out partition and at least one seen partition need a
 * valid row each. */
static la_status check_sides(const la_table *t, uint32_t heldout)
{
    const la_row *rows = la_table_rows_const(t);
    size_t held = 0, seen = 0;
    for (size_t i = 0; i < la_table_nrows(t); i++) {
        if (rows[i].part == heldout) held++;
        else seen++;
    }
    const char *name = la_table_part_name(t, heldout);
    if (!held)
        return la_error(LA_EINPUT, "the held-out partition '%s' has no valid row (every row was rejected, or its files are "
                                   "empty): nothing would be audited",
                        name);
    if (!seen)
        return la_error(LA_EINPUT, "no seen partition has a valid row: the %zu '%s' rows have nothing to be compared "
                                   "against (give --dev FILE or --part NAME=FILE, or a split field with other values)",
                        held, name);
    return LA_OK;
}

/* Held-out rows with text, when some seen row has text too: what the content tiers compared. */
static size_t heldout_compared(const la_table *t, uint32_t heldout)
{
    const la_row *rows = la_table_rows_const(t);
    size_t held = 0, seen = 0;
    for (size_t i = 0; i < la_table_nrows(t); i++) {
        if (!rows[i].norm || !rows[i].norm_len) continue;
        if (rows[i].part == heldout) held++;
        else seen++;
    }
    return seen ? held : 0;
}

static void add_timing(la_audit_state *st, const char *name, double *since)
{
    double now = la_now();
    if (st->ntimings < sizeof st->timings / sizeof *st->timings)
        st->timings[st->ntimings++] = (la_report_timing){name, now - *since};
    *since = now;
}

/* A progress stage over the table's rows (or, with unit "links", the links found so far). */
static void stage_begin(la_audit_state *st, const char *stage, const char *unit)
{
    size_t n = !strcmp(unit, "links") ? st->pairs.n : st->table ? la_table_nrows(st->table) : 0;
    st->stage_links = st->pairs.n;
    la_progress_begin(st->progress, stage, n, unit, 0);
}

/* The stage ends with the links it found as its note. */
static void stage_end_links(la_audit_state *st)
{
    char note[64];
    snprintf(note, sizeof note, "%zu links", st->pairs.n - st->stage_links);
    la_progress_end(st->progress, note);
}

/* Read, validate and normalize; find the held-out partition. Inputs of more than a sixteenth of
 * --memory-limit or 512 MiB in all (`bytes`, their size on disk) keep their rows in spill files
 * (la_table_spill_to), so the resident set does not grow with the seen side past an eighth of
 * --memory-limit (what of the files stays mapped: the near tier reads the text once a phase, and
 * text that stays mapped is not faulted in again page by page); others, once their rows pass that
 * size as read. LEAKAUDIT_SPILL=1 spills any input, =0 none. */
static la_status load_stage(const la_audit_job *j, la_audit_state *st, double bytes)
{
    const la_cli *c = &j->cli;
    LA_TRY(la_table_new(&st->table));
    size_t limit = j->semantic.memory_limit ? j->semantic.memory_limit : la_memory_default();
    size_t spill_from = limit / 16 < TEXT_SPILL_FROM ? limit / 16 : TEXT_SPILL_FROM;
    const char *force = getenv("LEAKAUDIT_SPILL");
    int always = force && !strcmp(force, "1"), never = force && !strcmp(force, "0");
    size_t mapped = limit / SPILL_MAPPED_SHARE;
    if (always || (!never && bytes > (double)spill_from)) LA_TRY(la_table_spill_to(st->table, NULL, mapped));
    /* files whose size says too little (compressed, standard input) spill once read that far */
    ((la_cli *)c)->load.spill_from = never ? 0 : spill_from;
    ((la_cli *)c)->load.spill_mapped = mapped;
    LA_TRY(la_cli_load((la_cli *)c, st->table, &st->loader));
    if (la_table_find_part(st->table, c->heldout, &st->heldout) != LA_OK) {
        char list[512] = "";
        for (uint32_t p = 0; p < la_table_npart(st->table); p++) {
            strncat(list, p ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, la_table_part_name(st->table, p), sizeof list - strlen(list) - 1);
        }
        return la_error(LA_EINVAL, "--heldout %s: no partition of that name in the input (partitions: %s)", c->heldout,
                        list[0] ? list : "none");
    }
    return check_sides(st->table, st->heldout);
}

/* The near tier's phases as progress stages of their own ("near copies: signatures", ...). */
static void near_phase_begins(void *ctx, const char *phase, size_t total, const char *unit)
{
    char stage[64];
    snprintf(stage, sizeof stage, "near copies: %s", phase);
    la_progress_begin(ctx, stage, total, unit, 0);
}

static void near_phase_adds(void *ctx, size_t n) { la_progress_add(ctx, n); }

/* The near and semantic tiers, their backend ops through st->exec; what ran is logged per stage,
 * and a device that fails during the run falls back under auto with the reason in the report. */
static la_status tier_stage(const la_audit_job *j, int warn, la_audit_state *st, double *since)
{
    if (j->near.enabled) {
        st->stage_links = st->pairs.n; /* the tier's phases are the progress stages (near_phase_begins) */
        la_near_opts_cli near = j->near;
        near.p.exec = &st->exec;
        near.p.skip = st->skip;
        /* the shingle sets stay in memory between the near tier's phases when they take at most a
         * sixteenth of --memory-limit and 512 MiB (a corpus of up to about 400k rows of 1 KB): a
         * larger one is shingled again per phase, so its memory does not grow with the rows */
        size_t limit = j->semantic.memory_limit ? j->semantic.memory_limit : la_memory_default();
        near.p.set_cache_bytes = limit / 16 < NEAR_SET_CACHE_MAX ? limit / 16 : NEAR_SET_CACHE_MAX;
        if (st->progress) {
            near.p.phase_begins = near_phase_begins;
            near.p.phase_adds = near_phase_adds;
            near.p.progress_ctx = st->progress;
        }
        near.partial = st->skip ? &st->partial : NULL;
        LA_TRY(la_tier_near(&near, st->table, st->heldout, j->cli.threads, &st->pairs, &st->near));
        st->sections[st->nsections++] = (la_report_section){"near", st->near.json.p, st->near.md.p, NULL};
        add_timing(st, "near_s", since);
        stage_end_links(st);
    }
    if (j->semantic.enabled) {
        stage_begin(st, "semantic copies", "rows");
        la_semantic_opts so = j->semantic;
        so.use_gpu = st->backend.be->device;
        so.exec = &st->exec;
        so.progress = st->progress;
        so.skip = st->skip;
        so.partial = st->skip ? &st->partial : NULL;
        LA_TRY(la_tier_semantic(&so, &st->loader, st->table, st->heldout, j->cli.threads, &st->pairs, &st->semantic));
        st->sections[st->nsections++] =
            (la_report_section){"semantic", st->semantic.json.p, st->semantic.md.p, st->semantic.html.p};
        add_timing(st, "semantic_s", since);
        stage_end_links(st);
    }
    const la_exec *x = &st->exec;
    st->ran_on = la_backend_ran_on(x);
    for (size_t k = 0; k < x->log.n; k++) {
        snprintf(st->stage_names[k], sizeof st->stage_names[k], "%.40s_s", x->log.v[k].name);
        if (st->ntimings < sizeof st->timings / sizeof *st->timings)
            st->timings[st->ntimings++] = (la_report_timing){st->stage_names[k], x->log.v[k].seconds};
    }
    if (la_backend_fallback_note(x, st->backend_note, sizeof st->backend_note) && warn)
        fprintf(stderr, "leakaudit audit: warning: %s\n", st->backend_note);
    return LA_OK;
}

/* A shard: the content tiers over its slice of the seen rows, kept in st->partial with what
 * `merge` checks the shards against (arguments, inputs, rows). */
static la_status shard_stage(const la_audit_job *j, int warn, la_audit_state *st, double *since)
{
    la_partial *p = &st->partial;
    LA_TRY(la_shard_skip(st->table, st->heldout, j->shard, &st->skip));
    p->shard = j->shard;
    LA_TRY(la_audit_job_record_args(j, p));
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) && !(p->cwd = strdup(cwd))) return la_error(LA_ENOMEM, "out of memory");
    p->nrows = la_table_nrows(st->table);
    p->nfiles = st->loader.nfiles;
    p->file_path = calloc(p->nfiles + 1, sizeof *p->file_path);
    p->file_hash = calloc(p->nfiles + 1, sizeof *p->file_hash);
    if (!p->file_path || !p->file_hash) return la_error(LA_ENOMEM, "out of memory");
    for (size_t k = 0; k < p->nfiles; k++)
        if (!(p->file_path[k] = strdup(st->loader.files[k].path)) ||
            !(p->file_hash[k] = strdup(st->loader.files[k].blake2b_hex)))
            return la_error(LA_ENOMEM, "out of memory");
    LA_TRY(tier_stage(j, warn, st, since));
    if (!(p->ran_on = strdup(st->ran_on)) || !(p->backend_note = strdup(st->backend_note)) ||
        !(p->device = strdup(st->backend.device)))
        return la_error(LA_ENOMEM, "out of memory");
    p->pairs = st->pairs; /* the content links alone: a shard finds no others */
    memset(&st->pairs, 0, sizeof st->pairs);
    return LA_OK;
}

/* `merge`: the shards' links and tier results in place of the tiers, once the inputs read now are
 * checked to be the ones the shards read. */
static la_status merged_stage(const la_audit_job *j, la_audit_state *st)
{
    const la_partial *m = j->merged;
    const la_loader *L = &st->loader;
    for (size_t k = 0; k < L->nfiles && k < m->nfiles; k++)
        if (!m->file_hash[k] || strcmp(m->file_hash[k], L->files[k].blake2b_hex))
            return la_error(LA_EINPUT, "%s changed since the shards read it (BLAKE2b %s, then %s): run the shards again",
                            L->files[k].path, m->file_hash[k] ? m->file_hash[k] : "none", L->files[k].blake2b_hex);
    if (m->nrows != la_table_nrows(st->table) || m->nfiles != L->nfiles)
        return la_error(LA_EINPUT, "the inputs have %zu rows in %zu files now, and the shards read %llu rows in %zu "
                                   "files: merge the shards of these inputs, or run them again",
                        la_table_nrows(st->table), L->nfiles, (unsigned long long)m->nrows, m->nfiles);
    for (size_t k = 0; k < m->pairs.n; k++) LA_TRY(la_pairs_push(&st->pairs, &m->pairs.v[k]));
    if (m->near_on) {
        la_near_report r = m->near;
        LA_TRY(la_report_near(st->table, &r, &st->near.json, &st->near.md, &st->near.extra));
        st->near.backend = r.backend;
        snprintf(st->near.fallback, sizeof st->near.fallback, "%s", m->near_fallback ? m->near_fallback : "");
        st->sections[st->nsections++] = (la_report_section){"near", st->near.json.p, st->near.md.p, NULL};
    }
    if (m->sem_on) {
        LA_TRY(la_report_semantic(st->table, &m->sem, &st->semantic.json, &st->semantic.md, &st->semantic.html,
                                  &st->semantic.extra));
        st->semantic.lexical_embedding = m->sem_lexical;
        snprintf(st->semantic.model_name, sizeof st->semantic.model_name, "%s",
                 m->sem.model_name ? m->sem.model_name : "");
        st->semantic.backend = m->sem.backend;
        snprintf(st->semantic.fallback, sizeof st->semantic.fallback, "%s", m->sem_fallback ? m->sem_fallback : "");
        st->sections[st->nsections++] =
            (la_report_section){"semantic", st->semantic.json.p, st->semantic.md.p, st->semantic.html.p};
    }
    st->ran_on = m->ran_on ? m->ran_on : "cpu";
    snprintf(st->backend_note, sizeof st->backend_note, "%s", m->backend_note ? m->backend_note : "");
    snprintf(st->backend.device, sizeof st->backend.device, "%s", m->device ? m->device : "");
    return LA_OK;
}

/* Grade the merged links, then clusters and outcomes. */
static la_status decide_stage(const la_audit_job *j, const la_audit_opts *ao, la_audit_state *st, double *since)
{
    la_pairs_normalize(&st->pairs);
    stage_begin(st, "grades and decisions", "links");
    la_grade_params gp;
    la_grade_params_default(&gp);
    gp.threads = j->cli.threads;
    gp.semantic_lexical = !j->semantic.enabled || st->semantic.lexical_embedding;
    if (!gp.semantic_lexical && st->semantic.model_name[0])
        la_model_grade_cosines(st->semantic.model_name, &gp.copy_cosine, &gp.digits_cosine, &st->grade_cosines_source);
    st->copy_cosine = gp.copy_cosine;
    st->digits_cosine = gp.digits_cosine;
    LA_TRY(la_grade_pairs(st->table, &gp, &st->pairs, &st->grades));
    add_timing(st, "grade_s", since);
    LA_TRY(la_audit_decide(st->table, ao, &st->pairs, st->exact.dup_of, &st->audit));
    la_audit_sort_pairs(st->table, &st->pairs);
    return LA_OK;
}

/* Today's date in the local time zone (TZ), days since 1970-01-01. */
static int32_t local_today(void)
{
    time_t now = time(NULL);
    struct tm tm;
    char d[16];
    int32_t days = 0;
    if (!localtime_r(&now, &tm) || strftime(d, sizeof d, "%Y-%m-%d", &tm) != 10 || la_date_parse(d, 10, 0, &days) != LA_OK)
        return (int32_t)(now / 86400); /* no time zone to be had: the UTC date */
    return days;
}

/* --baseline and --waivers: read before any work, so a bad file stops the run at once. */
static la_status read_delta_inputs(const la_audit_job *j, la_audit_state *st)
{
    if (j->baseline) LA_TRY(la_baseline_read(j->baseline, &st->baseline));
    if (j->waivers) LA_TRY(la_waivers_read(j->waivers, &st->waivers));
    return LA_OK;
}

/* This run's links against the baseline and the waivers (the links sorted already). */
static la_status delta_stage(const la_audit_job *j, la_audit_state *st)
{
    if (!j->baseline && !j->waivers) return LA_OK;
    int32_t today = j->today != LA_NO_DATE ? j->today : local_today();
    LA_TRY(la_delta_compute(st->table, &st->pairs, &st->audit, &j->cli.gate, j->baseline ? &st->baseline : NULL,
                            j->waivers ? &st->waivers : NULL, today, &st->delta));
    st->delta.baseline_path = j->baseline;
    st->delta.waivers_path = j->waivers;
    st->delta.fail_on_new = j->fail_on_new;
    st->report.delta = &st->delta;
    return LA_OK;
}

/* The audit's own fields of the report model, beyond la_report_init's. */
static void report_stage(const la_audit_job *j, la_audit_state *st)
{
    la_report *r = &st->report;
    la_report_init(r, "audit", st->table, &st->loader, &st->exact, &j->cli);
    r->pairs = &st->pairs;
    r->audit = &st->audit;
    r->heldout = st->heldout;
    r->backend_note = st->backend_note;
    st->param_names[0] = "backend_note";
    st->param_values[0] = st->backend_note;
    st->param_names[1] = "device";
    st->param_values[1] = st->backend.device;
    r->param_names = st->param_names;
    r->param_values = st->param_values;
    r->nparams = 2;
    if (st->grade_cosines_source) {
        snprintf(st->copy_text, sizeof st->copy_text, "%g", st->copy_cosine);
        snprintf(st->digits_text, sizeof st->digits_text, "%g", st->digits_cosine);
        st->param_names[2] = "grade_copy_cosine";
        st->param_values[2] = st->copy_text;
        st->param_names[3] = "grade_digits_cosine";
        st->param_values[3] = st->digits_text;
        st->param_names[4] = "grade_cosines_source";
        st->param_values[4] = st->grade_cosines_source;
        r->nparams = 5;
    }
    r->heldout_compared = heldout_compared(st->table, st->heldout);
    r->template_numbers = st->grades.template_numbers;
    r->slot_upgrades = st->grades.slot_upgrades;
    r->digits_related = st->grades.digits_related;
    r->resolve = j->resolve;
    r->max_cluster = j->max_cluster;
    r->backend = st->ran_on;
    r->sections = st->sections;
    r->nsections = st->nsections;
    r->timings = st->timings;
}

la_status la_audit_execute(const la_audit_job *j, int warn, la_audit_state *st)
{
    memset(st, 0, sizeof *st);
    st->ran_on = "cpu";
    size_t nbackends;
    const la_backend *const *backends = la_backends_builtin(&nbackends);
    la_status bs = la_backend_select(j->backend, backends, nbackends, &st->backend);
    if (bs != LA_OK) return bs;
    la_exec_init(&st->exec, st->backend.be, st->backend.fallback, j->cli.threads);
    if (st->backend.note[0] && warn && j->backend == LA_BACKEND_AUTO && getenv("LEAKAUDIT_BACKEND"))
        fprintf(stderr, "leakaudit audit: warning: %s\n", st->backend.note);
    snprintf(st->backend_note, sizeof st->backend_note, "%s", st->backend.note);

    LA_TRY(read_delta_inputs(j, st));
    st->progress = la_progress_new(j->progress, !warn, "leakaudit audit:", stderr);
    double t0 = la_now(), since = t0;
    double bytes = 0;
    for (size_t k = 0; k < j->cli.ninputs; k++) {
        struct stat sb;
        if (j->cli.inputs[k].path && stat(j->cli.inputs[k].path, &sb) == 0 && S_ISREG(sb.st_mode)) bytes += (double)sb.st_size;
    }
    la_progress_begin(st->progress, "read", j->cli.ninputs, "files", bytes);
    LA_TRY(load_stage(j, st, bytes));
    char note[640];
    la_spill *spill = la_table_spill(st->table);
    if (spill)
        snprintf(note, sizeof note, "%zu rows, their text (%zu MiB) in a spill file in %s", la_table_nrows(st->table),
                 la_spill_bytes(spill) >> 20, la_spill_dir(spill));
    else
        snprintf(note, sizeof note, "%zu rows", la_table_nrows(st->table));
    la_progress_end(st->progress, note);
    add_timing(st, "read_s", &since);
    stage_begin(st, "normalize", "rows");
    LA_TRY(la_normalize_table(st->table, j->cli.norm, j->cli.threads));
    add_timing(st, "normalize_s", &since);
    if (j->shard.count) {
        LA_TRY(shard_stage(j, warn, st, &since));
        la_progress_end(st->progress, NULL);
        add_timing(st, "total_s", &t0);
        return LA_OK;
    }
    stage_begin(st, "exact, family and time links", "rows");
    la_audit_opts ao = {st->heldout, j->cli.cutoff, j->resolve, j->max_cluster, j->link_grade};
    LA_TRY(la_exact_find(st->table, st->heldout, &st->pairs, &st->exact));
    LA_TRY(la_audit_evidence(st->table, &ao, &st->pairs, &st->audit));
    add_timing(st, "links_s", &since);
    stage_end_links(st);
    LA_TRY(j->merged ? merged_stage(j, st) : tier_stage(j, warn, st, &since));
    LA_TRY(decide_stage(j, &ao, st, &since));
    report_stage(j, st);
    LA_TRY(delta_stage(j, st));
    la_report_summarize(&st->report);
    add_timing(st, "decide_s", &since);
    la_progress_end(st->progress, NULL);
    add_timing(st, "total_s", &t0);
    st->report.ntimings = st->ntimings;
    return LA_OK;
}

void la_audit_state_free(la_audit_state *st)
{
    la_partial_free(&st->partial);
    free(st->skip);
    la_progress_free(st->progress);
    la_delta_free(&st->delta);
    la_waivers_free(&st->waivers);
    la_baseline_free(&st->baseline);
    la_tier_out_free(&st->semantic);
    la_tier_out_free(&st->near);
    la_audit_free(&st->audit);
    la_exact_result_free(&st->exact);
    la_pairs_free(&st->pairs);
    la_loader_free(&st->loader);
    la_table_free(st->table);
    memset(st, 0, sizeof *st);
}

/* A shard's folder: shard.bin alone. */
static la_status write_shard(const la_audit_state *st, const char *dir)
{
    la_outdir od;
    la_progress_begin(st->progress, "write", 0, "files", 0);
    LA_TRY(la_outdir_begin(dir, &od));
    la_buf b = {0};
    la_status s = la_partial_encode(&st->partial, &b);
    if (s == LA_OK) s = la_outdir_write(&od, LA_SHARD_FILE, &b);
    la_buf_free(&b);
    s = la_outdir_finish(&od, s);
    la_progress_end(st->progress, s == LA_OK ? dir : NULL);
    return s;
}

la_status la_write_manifest(la_outdir *od, const char *name, const la_report *r, uint32_t out)
{
    uint32_t *rows = la_malloc_nm(la_table_nrows(r->table), sizeof *rows, 1);
    if (!rows) return la_error(LA_ENOMEM, "out of memory writing %s", name);
    la_status s = la_manifest_write(od, name, r->table, rows, la_report_manifest_rows(r, out, rows));
    free(rows);
    return s;
}

/* An audit's files, one an item of a parallel loop, written at the same time when the audit has two
 * threads or more: the manifests (copies of the input rows, most of the bytes) first, the one of
 * most rows first, then the reports and link lists (rendered in memory), the longest first. On one
 * thread the disk writes the manifests' bytes while the reports render; on more, the threads take
 * the files in that order as they come free, which evens out their work. */
enum { REPORT_FILES = 10 };

typedef struct write_job {
    const la_audit_state *st;
    la_outdir *od;
    uint32_t *manifests;     /* outcomes (LA_OUT_QUARANTINE, partitions) by rows, the most first */
    size_t nmanifests;
} write_job;

static la_status write_manifest_of(const write_job *w, uint32_t out)
{
    const la_report *r = &w->st->report;
    if (out == LA_OUT_QUARANTINE) return la_write_manifest(w->od, "quarantine.jsonl", r, out);
    char name[96];
    snprintf(name, sizeof name, "%s.jsonl", la_table_part_name(r->table, out));
    return la_write_manifest(w->od, name, r, out);
}

/* Report file k (0 .. REPORT_FILES - 1); LA_OK with nothing written when it has none. */
static la_status write_report(const write_job *w, size_t k)
{
    const la_audit_state *st = w->st;
    const la_report *r = &st->report;
    const la_tier_out *near = &st->near, *sem = &st->semantic;
    if (k == 8) return sem->json.n ? la_outdir_write(w->od, "nearest.jsonl", &sem->extra) : LA_OK;
    if (k == 9) return near->json.n && near->extra.n ? la_outdir_write(w->od, "within_pairs.jsonl", &near->extra) : LA_OK;
    la_buf b = {0};
    la_status s = LA_OK;
#define EMIT(name, call) LA_OUTDIR_EMIT(w->od, s, &b, name, call)
    switch (k) {
    case 0: EMIT("report.html", la_report_html(r, &b)); break;
    case 1: EMIT("assignments.jsonl", la_report_assignments_jsonl(r, &b)); break;
    case 2: EMIT("pairs.jsonl", la_report_pairs_jsonl(r, &b)); break;
    case 3: EMIT("clusters.jsonl", la_report_clusters_jsonl(r, &b)); break;
    case 4: EMIT("report.json", la_report_json(r, &b)); break;
    case 5: EMIT("report.md", la_report_md(r, &b)); break;
    case 6: EMIT("report.junit.xml", la_report_junit(r, &b)); break;
    default: EMIT("rejects.jsonl", la_report_rejects_jsonl(r, &b)); break;
    }
#undef EMIT
    la_buf_free(&b);
    return s;
}

static la_status write_file(void *ctx, int worker, size_t begin, size_t end)
{
    const write_job *w = ctx;
    (void)worker;
    la_status s = LA_OK;
    for (size_t k = begin; k < end && s == LA_OK; k++)
        s = k < w->nmanifests ? write_manifest_of(w, w->manifests[k]) : write_report(w, k - w->nmanifests);
    return s;
}

/* Where an outcome's row count is kept: a partition's at its index, the quarantine's after the np
 * partitions'. */
static size_t outcome_slot(uint32_t out, uint32_t np) { return out < np ? out : np; }

la_status la_audit_write(const la_audit_state *st, const char *dir)
{
    if (st->partial.shard.count) return write_shard(st, dir);
    la_outdir od;
    la_progress_begin(st->progress, "write", 0, "files", 0);
    LA_TRY(la_outdir_begin(dir, &od));
    const la_report *r = &st->report;
    uint32_t np = la_table_npart(r->table);
    write_job w = {st, &od, la_malloc_n((size_t)np + 1, sizeof *w.manifests), 0};
    size_t *rows = la_calloc_n((size_t)np + 1, sizeof *rows);
    la_status s = w.manifests && rows ? LA_OK : la_error(LA_ENOMEM, "out of memory writing %s", dir);
    if (s == LA_OK) {
        /* rows per outcome, each outcome's count at outcome_slot */
        for (size_t i = 0, n = la_table_nrows(r->table); i < n; i++) rows[outcome_slot(r->audit->out[i], np)]++;
        w.manifests[w.nmanifests++] = LA_OUT_QUARANTINE;
        for (uint32_t p = 0; p < np; p++) w.manifests[w.nmanifests++] = p;
        /* the manifest of most rows first, ties in that order (insertion sort: a few of them) */
        for (size_t i = 1; i < w.nmanifests; i++)
            for (size_t k = i; k > 0 && rows[outcome_slot(w.manifests[k], np)] > rows[outcome_slot(w.manifests[k - 1], np)]; k--) {
                uint32_t t = w.manifests[k];
                w.manifests[k] = w.manifests[k - 1];
                w.manifests[k - 1] = t;
            }
        s = la_parallel_for(st->exec.threads, w.nmanifests + REPORT_FILES, 1, write_file, &w);
    }
    free(w.manifests);
    free(rows);
    s = la_outdir_finish(&od, s);
    la_progress_end(st->progress, s == LA_OK ? dir : NULL);
    return s;
}
