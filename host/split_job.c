/*
 * split_job.c - one split, stage by stage: the options of `leakaudit split`, load, the groups
 * (families joined with exact, near and, when asked, semantic copies), the chronological or
 * three-set rule, and the files and summary of the command. The command (cmd_split.c) and the
 * library (la_split_run, api.c) both run it.
 */
#include "split_job.h"

#include "groups.h"
#include "la_alloc.h"
#include "outdir.h"
#include "pipeline.h"
#include "semantic.h"
#include "simtile.h"

#include "la_blake2b.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_THREE_SET = LA_OPT_COMMAND_BASE, OPT_SEED, OPT_DEMOS, OPT_DEV_SHARE, OPT_FP_KEY, OPT_MIN_SHARE, OPT_NEAR,
       OPT_SEMANTIC, OPT_BACKEND };

const struct option la_split_options[] = {LA_CLI_COMMON_OPTIONS,
                                          {"three-set", no_argument, 0, OPT_THREE_SET},
                                          {"seed", required_argument, 0, OPT_SEED},
                                          {"demos-per-class", required_argument, 0, OPT_DEMOS},
                                          {"dev-share", required_argument, 0, OPT_DEV_SHARE},
                                          {"fingerprint-key", required_argument, 0, OPT_FP_KEY},
                                          {"min-share", required_argument, 0, OPT_MIN_SHARE},
                                          {"backend", required_argument, 0, OPT_BACKEND},
                                          LA_NEAR_LONG_OPTIONS(OPT_NEAR),
                                          LA_SEMANTIC_LONG_OPTIONS(OPT_SEMANTIC),
                                          {"semantic-margin", required_argument, 0, OPT_SEMANTIC},
                                          {0, 0, 0, 0}};

void la_split_job_init(la_split_job *j)
{
    memset(j, 0, sizeof *j);
    la_cli_init(&j->cli, "split");
    j->ts.demos_per_class = 2;
    j->ts.dev_share = 0.5;
    j->backend = LA_BACKEND_AUTO;
    la_near_opts_init(&j->near);
    la_semantic_opts_init(&j->semantic);
    j->semantic.enabled = 0; /* split groups by embeddings only when asked: see --help */
    j->cli.load.require_text = 0;
    j->cli.load.require_date = 1;
}

void la_split_job_free(la_split_job *j)
{
    la_semantic_opts_free(&j->semantic);
    la_cli_free(&j->cli);
}

/* --embeddings FILE.npy: split's rows all belong to one input set. */
static la_status embeddings_option(la_split_job *j, const char *name, const char *arg)
{
    char spec[4096];
    snprintf(spec, sizeof spec, "input=%s", arg);
    la_status st = la_semantic_option(&j->semantic, name, spec);
    if (st == LA_OK) j->semantic.emb_path[j->semantic.nemb - 1] = arg;
    return st;
}

la_status la_split_job_option(void *job, int opt, const char *name, const char *arg, int *handled)
{
    la_split_job *j = job;
    char *end;
    *handled = 1;
    switch (opt) {
    case LA_OPT_PART:
    case LA_OPT_DEV:
    case LA_OPT_TEST:
    case LA_OPT_HELDOUT:
    case LA_OPT_FAIL_ON: return la_error(LA_EINVAL, "--%s does not apply to split: give the files as FILE...", name);
    case OPT_NEAR: return la_near_option(&j->near, name, arg);
    case OPT_SEMANTIC:
        if (!strcmp(name, "embeddings") && !strchr(arg, '=')) return embeddings_option(j, name, arg);
        return la_semantic_option(&j->semantic, name, arg);
    case OPT_THREE_SET: j->three_set = 1; return LA_OK;
    case OPT_SEED:
        j->ts.seed = strtoull(arg, &end, 10);
        if (*end || !*arg || arg[0] == '-') return la_error(LA_EINVAL, "--seed %s: expected a non-negative integer", arg);
        return LA_OK;
    case OPT_DEMOS: {
        long v = strtol(arg, &end, 10);
        if (*end || !*arg || v < 0) return la_error(LA_EINVAL, "--demos-per-class %s: expected a non-negative integer", arg);
        j->ts.demos_per_class = (size_t)v;
        return LA_OK;
    }
    case OPT_DEV_SHARE:
        j->ts.dev_share = strtod(arg, &end);
        if (*end || !*arg || !(j->ts.dev_share >= 0.1 && j->ts.dev_share <= 0.9))
            return la_error(LA_EINVAL, "--dev-share %s: expected a number from 0.1 to 0.9", arg);
        return LA_OK;
    case OPT_FP_KEY: j->key_file = arg; return LA_OK;
    case OPT_BACKEND: return la_backend_parse(arg, &j->backend);
    case OPT_MIN_SHARE:
        j->min_share = strtod(arg, &end);
        if (*end || !*arg || !(j->min_share >= 0 && j->min_share <= 0.5))
            return la_error(LA_EINVAL, "--min-share %s: expected a number from 0 to 0.5", arg);
        return LA_OK;
    }
    *handled = 0;
    return LA_OK;
}

/* The fingerprint key: BLAKE2b-256 of the key file's bytes. */
static la_status read_key(const char *path, unsigned char key[32])
{
    FILE *f = fopen(path, "rb");
    if (!f) return la_error(LA_EIO, "--fingerprint-key %s: cannot open", path);
    la_blake2b_state st;
    la_blake2b_init(&st, NULL, 0, 32);
    unsigned char buf[4096];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        la_blake2b_update(&st, buf, n);
        total += n;
    }
    fclose(f);
    la_blake2b_final(&st, key, 32);
    if (total < 16) return la_error(LA_EINVAL, "--fingerprint-key %s: the key file has %zu bytes; use at least 16 random bytes", path, total);
    return LA_OK;
}

la_status la_split_job_finish(la_split_job *j)
{
    la_cli *c = &j->cli;
    c->load.embedding_field = j->semantic.enabled ? j->semantic.embedding_field : NULL;
    /* every file's rows are placed by the rule, not by a split field */
    for (size_t k = 0; k < c->ninputs; k++) c->inputs[k].part = "input";
    size_t nextra = 0;
    for (size_t k = 0; k < j->semantic.nemb; k++) j->extra[nextra++] = j->semantic.emb_path[k];
    if (j->key_file) j->extra[nextra++] = j->key_file;
    c->extra_inputs = j->extra;
    c->nextra = nextra;
    la_status s = la_cli_finish(c);
    if (s == LA_OK && j->three_set && c->cutoff != LA_NO_DATE)
        s = la_error(LA_EINVAL, "choose one rule: --cutoff (chronological) or --three-set");
    if (s == LA_OK && !j->three_set && c->cutoff == LA_NO_DATE)
        s = la_error(LA_EINVAL, "--cutoff YYYY-MM-DD (chronological rule) or --three-set is required");
    if (s == LA_OK && j->key_file) s = read_key(j->key_file, j->key);
    /* where the near and semantic grouping's backend ops run, as in audit */
    if (s == LA_OK) {
        size_t nb;
        const la_backend *const *table = la_backends_builtin(&nb);
        s = la_backend_select(j->backend, table, nb, &j->choice);
    }
    if (j->three_set) {
        c->load.require_date = 0;
        c->load.require_label = 1;
    }
    return s;
}

/* Pairs of rows whose embeddings have cosine >= the threshold: an exact self-join on the tiles;
 * and below it, with the ratio margin on (--semantic-margin, or the model's own), pairs that
 * stand out from both rows' neighbourhoods. */
static la_status semantic_links(const la_semantic_opts *o, const la_loader *L, const la_table *t, int threads,
                                la_exec *x, la_pairs *links, la_split_state *st)
{
    float *emb = NULL;
    size_t dim = 0, n = la_table_nrows(t);
    const char *kind, *source;
    la_semantic_opts chosen = *o;
    LA_TRY(la_semantic_choose_model(&chosen, t));
    o = &chosen;
    LA_TRY(la_semantic_embeddings(o, L, t, threads, &emb, &dim, &kind));
    double ratio = la_semantic_margin_for(o, &source), threshold = la_semantic_threshold_for(o);
    snprintf(st->sem_kind, sizeof st->sem_kind, "%s", kind);
    const char *model = o->model && o->model_name ? o->model_name : o->vectors_model; /* "": none known */
    snprintf(st->sem_model, sizeof st->sem_model, "%.*s", (int)sizeof st->sem_model - 1, model);
    st->sem_threshold = threshold;
    st->sem_threshold_source = isnan(o->threshold) ? "the default for this embedding" : "--semantic-threshold";
    st->sem_margin = ratio;
    st->sem_margin_source = source;
    la_simtile_params p;
    la_simtile_params_default(&p);
    p.threshold = (float)threshold;
    p.topk = ratio > 0 ? LA_SEMANTIC_MARGIN_K + 1 : 0; /* a row is among its own nearest */
    p.threads = threads;
    la_simtile_hits hits = {0};
    size_t rescored = 0;
    uint32_t *top_idx = p.topk ? la_malloc_nm(n, p.topk, sizeof *top_idx) : NULL;
    float *top_cos = p.topk ? la_malloc_nm(n, p.topk, sizeof *top_cos) : NULL;
    la_status s = LA_OK;
    if (p.topk && n && (!top_idx || !top_cos)) s = la_error(LA_ENOMEM, "semantic: out of memory for the margin of %zu rows", n);
    if (s == LA_OK && p.topk) la_simtile_top_init(top_idx, top_cos, n, p.topk);
    if (s == LA_OK && n) s = la_exec_simtile(x, "semantic_tiles", emb, n, emb, n, dim, 0, &p, &hits, top_idx, top_cos, &rescored);
    free(emb);
    for (size_t k = 0; s == LA_OK && k < hits.n; k++) {
        if (hits.v[k].q >= hits.v[k].s) continue; /* each pair once, never a row with itself */
        la_pair q = la_pair_make(hits.v[k].q, hits.v[k].s, LA_KIND_SEMANTIC);
        q.cosine = hits.v[k].cosine;
        s = la_pairs_push(links, &q);
    }
    la_simtile_hits_free(&hits);
    /* a row and its nearest other row below the threshold, by the ratio margin (index/semantic.h) */
    if (s == LA_OK && p.topk)
        s = la_semantic_margin_self(top_idx, top_cos, n, p.topk, threshold, ratio, LA_SEMANTIC_MARGIN_K, links);
    free(top_idx);
    free(top_cos);
    return s;
}

/* Groups: families joined with exact copies (rows with text), so copies never straddle the split,
 * and with near and (when asked) semantic copies inside the input. */
static la_status build_groups(const la_split_job *j, la_split_state *st)
{
    la_table *t = st->table;
    size_t n = la_table_nrows(t);
    LA_TRY(la_normalize_table(t, j->cli.norm, j->cli.threads));
    LA_TRY(la_exact_find(t, UINT32_MAX, &st->links, &st->exact));
    for (size_t i = 0; i < n; i++)
        if (st->exact.dup_of[i] != LA_NOT_DUP) {
            la_pair p = la_pair_make(st->exact.dup_of[i], (uint32_t)i, LA_KIND_EXACT);
            LA_TRY(la_pairs_push(&st->links, &p));
        }
    st->links_exact = st->links.n;
    /* near copies inside the input join groups too: revisions and light edits stay on one side */
    uint32_t input_part = 0;
    if (j->near.enabled && la_table_find_part(t, "input", &input_part) == LA_OK) {
        la_near_params np = j->near.p;
        np.within = 1;
        np.threads = j->cli.threads;
        np.exec = &st->exec;
        LA_TRY(la_near_find(t, input_part, &np, &st->links, NULL));
    }
    st->links_near = st->links.n - st->links_exact;
    /* semantic copies inside the input (model embeddings, or --embed lexical) join groups as well */
    if (j->semantic.enabled) {
        la_semantic_opts o = j->semantic;
        o.use_gpu = st->exec.chosen->device;
        size_t before = st->links.n;
        LA_TRY(semantic_links(&o, &st->loader, t, j->cli.threads, &st->exec, &st->links, st));
        st->links_semantic = st->links.n - before;
        for (size_t k = before; k < st->links.n; k++) st->links_margin += !isnan(st->links.v[k].margin);
    }
    return la_groups_build(t, &st->links, st->rep);
}

/* The table with its output partitions first (so their indices do not depend on the data), then
 * the rows; rejects have no partition of their own. */
static la_status load_stage(const la_split_job *j, la_split_state *st)
{
    LA_TRY(la_table_new(&st->table));
    if (j->three_set) LA_TRY(la_table_part(st->table, "demos", &st->demos));
    LA_TRY(la_table_part(st->table, "dev", &st->dev));
    LA_TRY(la_table_part(st->table, "test", &st->test));
    la_status s = la_cli_load((la_cli *)&j->cli, st->table, &st->loader);
    for (size_t k = 0; k < st->loader.nrejects; k++) st->loader.rejects[k].part = LA_NO_PART;
    return s;
}

/* Every row's set by the rule the job names. */
static la_status decide_stage(const la_split_job *j, la_split_state *st)
{
    const la_table *t = st->table;
    size_t n = la_table_nrows(t);
    if (!j->three_set) return la_split_chrono(t, st->rep, j->cli.cutoff, st->dev, st->test, st->audit.out, &st->chrono);
    LA_TRY(la_threeset_make(t, st->rep, st->exact.dup_of, &j->ts, &st->ts));
    const uint32_t to_part[LA_SET_COUNT] = {st->demos, st->dev, st->test, LA_OUT_QUARANTINE};
    for (size_t i = 0; i < n; i++) st->audit.out[i] = to_part[st->ts.set[i]];
    return LA_OK;
}

/* What joined the groups, for report.json (or manifest.json) and report.md (manifest.md). */
static la_status grouping(const la_split_job *j, la_split_state *st)
{
    la_buf *b = &st->grouping_json, *m = &st->grouping_md;
    int near = j->near.enabled, sem = j->semantic.enabled;
    la_buf_printf(b, "{\"links\": {\"exact\": %zu, \"near\": %zu, \"semantic\": %zu}, \"near\": %s, \"semantic\": ",
                  st->links_exact, st->links_near, st->links_semantic, near ? "true" : "false");
    la_buf_printf(m, "Joined into groups besides families: exact copies %zu", st->links_exact);
    if (near) la_buf_printf(m, ", near copies %zu", st->links_near);
    else la_buf_puts(m, "; near copies off");
    if (!sem) {
        la_buf_puts(b, "null}");
        la_buf_puts(m, "; semantic grouping off (it runs only when asked).");
        return la_buf_status(b) != LA_OK ? la_buf_status(b) : la_buf_status(m);
    }
    la_buf_puts(b, "{\"embedding\": ");
    la_buf_json_str(b, st->sem_kind);
    la_buf_puts(b, ", \"model\": ");
    if (st->sem_model[0]) la_buf_json_str(b, st->sem_model);
    else la_buf_puts(b, "null");
    la_buf_puts(b, ", \"threshold\": ");
    la_buf_json_num(b, st->sem_threshold);
    la_buf_puts(b, ", \"threshold_source\": ");
    la_buf_json_str(b, st->sem_threshold_source);
    la_buf_puts(b, ", \"margin\": {\"ratio\": ");
    if (st->sem_margin > 0) la_buf_json_num(b, st->sem_margin);
    else la_buf_puts(b, "null");
    la_buf_printf(b, ", \"k\": %d, \"lowest_cosine\": ", LA_SEMANTIC_MARGIN_K);
    la_buf_json_num(b, st->sem_margin > 0 ? st->sem_threshold - LA_SEMANTIC_MARGIN_BELOW : NAN);
    la_buf_puts(b, ", \"source\": ");
    la_buf_json_str(b, st->sem_margin_source ? st->sem_margin_source : "");
    la_buf_printf(b, ", \"links\": %zu}}}", st->links_margin);
    la_buf_printf(m, ", semantic links %zu (%s", st->links_semantic, st->sem_kind);
    if (st->sem_model[0]) la_buf_printf(m, ", model %s", st->sem_model);
    la_buf_printf(m, "; cosine >= %.2f, %s", st->sem_threshold, st->sem_threshold_source);
    if (st->sem_margin > 0)
        la_buf_printf(m, "; ratio margin %.3f below it, %zu of the links, %s", st->sem_margin, st->links_margin,
                      st->sem_margin_source);
    la_buf_puts(m, ").");
    return la_buf_status(b) != LA_OK ? la_buf_status(b) : la_buf_status(m);
}

/* The report model and, under --three-set, the sets' fingerprints. */
static la_status report_stage(const la_split_job *j, la_split_state *st)
{
    la_report *r = &st->report;
    la_report_init(r, "split", st->table, &st->loader, &st->exact, &j->cli);
    snprintf(st->note, sizeof st->note, "%s", j->choice.note);
    la_backend_fallback_note(&st->exec, st->note, sizeof st->note);
    r->backend = la_backend_ran_on(&st->exec);
    r->backend_note = st->note;
    r->audit = &st->audit;
    r->timings = st->timings;
    r->ntimings = 1;
    LA_TRY(grouping(j, st));
    r->grouping_json = st->grouping_json.p;
    r->grouping_md = st->grouping_md.p;
    for (int k = 0; j->three_set && k < LA_SET_COUNT; k++)
        LA_TRY(la_threeset_fingerprint(st->table, &st->ts, k, j->key_file ? j->key : NULL, st->fp[k]));
    return LA_OK;
}

la_status la_split_execute(const la_split_job *j, la_split_state *st)
{
    memset(st, 0, sizeof *st);
    st->job = j;
    la_exec_init(&st->exec, j->choice.be, j->choice.fallback, j->cli.threads);
    double t0 = la_now();
    LA_TRY(load_stage(j, st));
    size_t n = la_table_nrows(st->table);
    st->audit.out = la_malloc_n(n, sizeof *st->audit.out);
    st->rep = la_malloc_n(n, sizeof *st->rep);
    if (!st->audit.out || !st->rep) return la_error(LA_ENOMEM, "out of memory");
    LA_TRY(build_groups(j, st));
    LA_TRY(decide_stage(j, st));
    st->timings[0] = (la_report_timing){"total_s", la_now() - t0};
    return report_stage(j, st);
}

void la_split_state_free(la_split_state *st)
{
    free(st->audit.out);
    free(st->rep);
    la_pairs_free(&st->links);
    la_buf_free(&st->grouping_json);
    la_buf_free(&st->grouping_md);
    la_exact_result_free(&st->exact);
    la_split_free(&st->chrono);
    la_threeset_free(&st->ts);
    la_loader_free(&st->loader);
    la_table_free(st->table);
    memset(st, 0, sizeof *st);
}

la_status la_split_write(const la_split_state *st, const char *dir)
{
    const la_split_job *j = st->job;
    const la_report *r = &st->report;
    la_outdir od;
    LA_TRY(la_outdir_begin(dir, &od));
    la_buf b = {0};
    la_status s = LA_OK;
    int keyed = j->key_file != NULL;
    const char(*fp)[65] = (const char(*)[65])st->fp;
#define EMIT(name, call) LA_OUTDIR_EMIT(&od, s, &b, name, call)
    if (j->three_set) {
        EMIT("manifest.json", la_threeset_manifest_json(r, &st->ts, &j->ts, fp, keyed, &b));
        EMIT("report.json", la_threeset_manifest_json(r, &st->ts, &j->ts, fp, keyed, &b));
        EMIT("manifest.md", la_threeset_manifest_md(r, &st->ts, &j->ts, fp, keyed, &b));
        EMIT("assignments.jsonl", la_threeset_assignments_jsonl(r, &st->ts, st->rep, st->exact.dup_of, &b));
        if (s == LA_OK) s = la_write_manifest(&od, "demos.jsonl", r, st->demos);
    } else {
        EMIT("report.json", la_split_report_json(r, &st->chrono, &b));
        EMIT("report.md", la_split_report_md(r, &st->chrono, &b));
        EMIT("assignments.jsonl", la_split_assignments_jsonl(r, &st->chrono, &b));
    }
    if (s == LA_OK) s = la_write_manifest(&od, "dev.jsonl", r, st->dev);
    if (s == LA_OK) s = la_write_manifest(&od, "test.jsonl", r, st->test);
    if (s == LA_OK) s = la_write_manifest(&od, "quarantine.jsonl", r, LA_OUT_QUARANTINE);
    EMIT("rejects.jsonl", la_report_rejects_jsonl(r, &b));
#undef EMIT
    la_buf_free(&b);
    return la_outdir_finish(&od, s);
}

void la_split_counts(const la_split_state *st, size_t rows[LA_SET_COUNT])
{
    memset(rows, 0, LA_SET_COUNT * sizeof *rows);
    size_t n = st->table ? la_table_nrows(st->table) : 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t out = st->audit.out[i];
        rows[out == st->dev ? LA_SET_DEV : out == st->test ? LA_SET_TEST : out == LA_OUT_QUARANTINE ? LA_SET_QUARANTINE : LA_SET_DEMOS]++;
    }
}

void la_split_summary(const la_split_state *st, const char *dir, la_buf *b)
{
    const la_split_job *j = st->job;
    size_t k[LA_SET_COUNT], n = la_table_nrows(st->table), nrejects = st->loader.nrejects;
    la_split_counts(st, k);
    if (j->three_set) {
        la_buf_printf(b, "leakaudit %s split (three sets, seed %llu): demos %zu, dev %zu, test %zu, set aside %zu rows; "
                         "rejected %zu (rows read %zu)\n",
                      la_version(), (unsigned long long)j->ts.seed, k[LA_SET_DEMOS], k[LA_SET_DEV], k[LA_SET_TEST],
                      k[LA_SET_QUARANTINE], nrejects, n + nrejects);
        la_buf_printf(b, "  dev share reached %.3f; majority-class floor %.1f%%", st->ts.dev_share_reached,
                      100 * st->ts.majority_floor);
        if (dir && *dir) la_buf_printf(b, "; %s/manifest.md", dir);
        la_buf_printf(b, "\n");
    } else {
        char cut[11];
        la_date_format(j->cli.cutoff, cut);
        la_buf_printf(b, "leakaudit %s split at %s: dev %zu, test %zu, quarantine %zu rows; rejected %zu (rows read %zu)\n",
                      la_version(), cut, k[LA_SET_DEV], k[LA_SET_TEST], k[LA_SET_QUARANTINE], nrejects, n + nrejects);
        if (dir && *dir)
            la_buf_printf(b, "  outputs: %s/ (assignments.jsonl, dev.jsonl, test.jsonl, quarantine.jsonl, report.md)\n", dir);
    }
}

int la_split_short(const la_split_state *st, int quiet, int written, la_buf *warnings)
{
    const la_split_job *j = st->job;
    size_t k[LA_SET_COUNT], n = la_table_nrows(st->table);
    la_split_counts(st, k);
    const size_t rows[2] = {k[LA_SET_DEV], k[LA_SET_TEST]};
    static const char *const names[2] = {"dev", "test"};
    double warn_below = j->min_share > 0.05 ? j->min_share : 0.05;
    int failed = 0;
    for (int s = 0; s < 2; s++) {
        double share = n ? (double)rows[s] / (double)n : 0;
        if (share >= warn_below) continue;
        int fails = share < j->min_share;
        failed |= fails;
        if (!warnings || (quiet && !fails)) continue;
        la_buf_printf(warnings, "leakaudit split: %s: %s got %zu of the %zu rows placed (%.1f%%), under %s%.1f%%%s\n",
                      fails ? "error" : "warning", names[s], rows[s], n, 100 * share, fails ? "--min-share " : "",
                      100 * (fails ? j->min_share : warn_below),
                      fails ? written ? "; the outputs are written, the exit code is 1" : "; the exit code is 1"
                      : j->three_set ? ""
                                     : " (see report.md: which families span the cutoff; --min-share X makes this fail)");
    }
    return failed;
}
