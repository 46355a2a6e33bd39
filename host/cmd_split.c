/*
 * cmd_split.c - `leakaudit split`: make a leak-free split by the chronological family rule and
 * write the assignments, the manifests and a report.
 */
#include "commands.h"
#include "groups.h"
#include "la_alloc.h"
#include "outdir.h"
#include "pipeline.h"
#include "simtile.h"
#include "split.h"
#include "threeset.h"

#include <sodium.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "Usage: leakaudit split --cutoff YYYY-MM-DD [options] FILE... [--out DIR]\n"
    "       leakaudit split --three-set [--seed N] [--demos-per-class N] [--dev-share X] FILE... [--out DIR]\n"
    "\n"
    "Chronological rule (--cutoff):\n"
    "Assigns whole families by date: a family (rows sharing --family-field; a row without one is its\n"
    "own family) entirely before the cutoff goes to dev, entirely on or after it to test, and a\n"
    "family that spans the cutoff to quarantine. Every row needs a date (--date-field); text is\n"
    "optional. Rows with the same normalized text, and near copies (MinHash-LSH verified by Jaccard or\n"
    "containment, as in audit; --near off turns this off), join one group too, so revisions and light\n"
    "edits of one source land on one side. The result does not depend on the order of the input.\n"
    "  --near on|off, --near-threshold J, --containment-threshold C, --shingle word|char,\n"
    "  --shingle-size N, --num-perm K, --simhash-k K   as in leakaudit audit\n"
    "  --backend auto|cpu|gpu  where the signatures, bucket sorts and similarity tiles run, as in\n"
    "                          leakaudit audit (the groups are the same on every backend)\n"
    "Semantic grouping (off unless asked: reworded copies need model embeddings, and lexical\n"
    "similarity mostly repeats the near copies while chaining templated rows):\n"
    "  --embeddings FILE.npy   one vector per input row, in input order across the files\n"
    "  --embedding-field NAME  vectors in the rows;  --embed lexical  the built-in embedding\n"
    "  --embed model, --model NAME|DIR  the built-in sentence encoder (see leakaudit models)\n"
    "  --semantic-threshold X  cosine that joins two rows (default 0.82; 0.50 for lexical)\n"
    "\n"
    "Three-set rule (--three-set), for a prompt-based classifier; every row needs a label:\n"
    "  later exact copies are set aside (the smallest id stays) and label conflicts reported; groups\n"
    "  (families, exact copies) are shuffled per class with SplitMix64 seeded by --seed; each class\n"
    "  gives --demos-per-class rows to demos from the front but never its last two rows; the rest is\n"
    "  divided by --dev-share, with at least one group in each of dev and test when a class has two.\n"
    "  --seed N                64-bit seed (default 0); the same rows and seed give the same bytes\n"
    "  --demos-per-class N     default 2\n"
    "  --dev-share X           share of the rest that goes to dev, 0.1 to 0.9 (default 0.5)\n"
    "  --fingerprint-key FILE  key the set fingerprints (BLAKE2b) with the file's contents, so they can\n"
    "                          be published without letting anyone confirm a guessed test item\n"
    "Writes manifest.md and manifest.json (seed, settings, counts per class and set, fingerprints,\n"
    "the test-set opening log) and demos.jsonl beside the other files.\n"
    "\n"
    "%s"
    "\n"
    "Balance:\n"
    "  --min-share X           dev and test each need at least this share of the rows placed (0 to\n"
    "                          0.5; default 0: any); below it the outputs are still written and the\n"
    "                          exit code is 1. A set under 5%% (or under X) is always warned about.\n"
    "\n"
    "Writes to --out: assignments.jsonl, dev.jsonl, test.jsonl, quarantine.jsonl (original rows\n"
    "unchanged), rejects.jsonl, report.json and report.md.\n"
    "Exit codes: 0 done, 1 dev or test got less than --min-share, 2 bad input or usage, 3 internal\n"
    "error.\n";

enum { OPT_THREE_SET = LA_OPT_COMMAND_BASE, OPT_SEED, OPT_DEMOS, OPT_DEV_SHARE, OPT_FP_KEY, OPT_MIN_SHARE, OPT_NEAR,
       OPT_SEMANTIC, OPT_BACKEND };

static struct option k_options[] = {LA_CLI_COMMON_OPTIONS,
                                    {"three-set", no_argument, 0, OPT_THREE_SET},
                                    {"seed", required_argument, 0, OPT_SEED},
                                    {"demos-per-class", required_argument, 0, OPT_DEMOS},
                                    {"dev-share", required_argument, 0, OPT_DEV_SHARE},
                                    {"fingerprint-key", required_argument, 0, OPT_FP_KEY},
                                    {"min-share", required_argument, 0, OPT_MIN_SHARE},
                                    {"backend", required_argument, 0, OPT_BACKEND},
                                    LA_NEAR_LONG_OPTIONS(OPT_NEAR),
                                    LA_SEMANTIC_LONG_OPTIONS(OPT_SEMANTIC),
                                    {0, 0, 0, 0}};

typedef struct split_opts {
    la_near_opts_cli near;
    la_semantic_opts semantic;
    int three_set;
    la_threeset_params ts;
    const char *key_file;
    double min_share;     /* --min-share: dev and test below it fail the split (exit 1) */
    la_backend_req backend;
} split_opts;

static la_status split_option(void *ctx, int opt, const char *name, const char *arg, int *handled)
{
    split_opts *so = ctx;
    char *end;
    *handled = 1;
    switch (opt) {
    case LA_OPT_PART:
    case LA_OPT_DEV:
    case LA_OPT_TEST:
    case LA_OPT_HELDOUT:
    case LA_OPT_FAIL_ON: return la_error(LA_EINVAL, "--%s does not apply to split: give the files as FILE...", name);
    case OPT_NEAR: return la_near_option(&so->near, name, arg);
    case OPT_SEMANTIC:
        if (!strcmp(name, "embeddings") && !strchr(arg, '=')) {
            /* split's rows all belong to one input set */
            char spec[4096];
            snprintf(spec, sizeof spec, "input=%s", arg);
            la_status st = la_semantic_option(&so->semantic, name, spec);
            if (st == LA_OK) so->semantic.emb_path[so->semantic.nemb - 1] = arg;
            return st;
        }
        return la_semantic_option(&so->semantic, name, arg);
    case OPT_THREE_SET: so->three_set = 1; return LA_OK;
    case OPT_SEED:
        so->ts.seed = strtoull(arg, &end, 10);
        if (*end || !*arg || arg[0] == '-') return la_error(LA_EINVAL, "--seed %s: expected a non-negative integer", arg);
        return LA_OK;
    case OPT_DEMOS: {
        long v = strtol(arg, &end, 10);
        if (*end || !*arg || v < 0) return la_error(LA_EINVAL, "--demos-per-class %s: expected a non-negative integer", arg);
        so->ts.demos_per_class = (size_t)v;
        return LA_OK;
    }
    case OPT_DEV_SHARE:
        so->ts.dev_share = strtod(arg, &end);
        if (*end || !*arg || !(so->ts.dev_share >= 0.1 && so->ts.dev_share <= 0.9))
            return la_error(LA_EINVAL, "--dev-share %s: expected a number from 0.1 to 0.9", arg);
        return LA_OK;
    case OPT_FP_KEY: so->key_file = arg; return LA_OK;
    case OPT_BACKEND: return la_backend_parse(arg, &so->backend);
    case OPT_MIN_SHARE:
        so->min_share = strtod(arg, &end);
        if (*end || !*arg || !(so->min_share >= 0 && so->min_share <= 0.5))
            return la_error(LA_EINVAL, "--min-share %s: expected a number from 0 to 0.5", arg);
        return LA_OK;
    }
    *handled = 0;
    return LA_OK;
}

/* Pairs of rows whose embeddings have cosine >= the threshold: an exact self-join on the tiles. */
static la_status semantic_links(const la_semantic_opts *o, const la_loader *L, const la_table *t, int threads,
                                la_exec *x, la_pairs *links)
{
    float *emb = NULL;
    size_t dim = 0, n = la_table_nrows(t);
    const char *kind;
    la_semantic_opts chosen = *o;
    LA_TRY(la_semantic_choose_model(&chosen, t));
    o = &chosen;
    LA_TRY(la_semantic_embeddings(o, L, t, threads, &emb, &dim, &kind));
    la_simtile_params p;
    la_simtile_params_default(&p);
    p.threshold = (float)la_semantic_threshold_for(o);
    p.topk = 0;
    p.threads = threads;
    la_simtile_hits hits = {0};
    size_t rescored = 0;
    la_status s = n ? la_exec_simtile(x, "semantic_tiles", emb, n, emb, n, dim, &p, &hits, NULL, NULL, &rescored) : LA_OK;
    free(emb);
    for (size_t k = 0; s == LA_OK && k < hits.n; k++) {
        if (hits.v[k].q >= hits.v[k].s) continue; /* each pair once, never a row with itself */
        la_pair q = la_pair_make(hits.v[k].q, hits.v[k].s, LA_KIND_SEMANTIC);
        q.cosine = hits.v[k].cosine;
        s = la_pairs_push(links, &q);
    }
    la_simtile_hits_free(&hits);
    return s;
}

/* The fingerprint key: BLAKE2b-256 of the key file's bytes. */
static la_status read_key(const char *path, unsigned char key[32])
{
    FILE *f = fopen(path, "rb");
    if (!f) return la_error(LA_EIO, "--fingerprint-key %s: cannot open", path);
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 32);
    unsigned char buf[4096];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        crypto_generichash_update(&st, buf, n);
        total += n;
    }
    fclose(f);
    crypto_generichash_final(&st, key, 32);
    if (total < 16) return la_error(LA_EINVAL, "--fingerprint-key %s: the key file has %zu bytes; use at least 16 random bytes", path, total);
    return LA_OK;
}

/* Groups: families joined with exact copies (rows with text), so copies never straddle the split,
 * and with near and (when asked) semantic copies inside the input. rep: per row, its group's
 * representative. */
static la_status build_groups(const la_cli *c, const split_opts *so, const la_loader *L, la_table *t, la_exec *x,
                              la_pairs *links, la_exact_result *ex, uint32_t *rep)
{
    size_t n = la_table_nrows(t);
    LA_TRY(la_normalize_table(t, c->norm, c->threads));
    LA_TRY(la_exact_find(t, UINT32_MAX, links, ex));
    for (size_t i = 0; i < n; i++)
        if (ex->dup_of[i] != LA_NOT_DUP) {
            la_pair p = la_pair_make(ex->dup_of[i], (uint32_t)i, LA_KIND_EXACT);
            LA_TRY(la_pairs_push(links, &p));
        }
    /* near copies inside the input join groups too: revisions and light edits stay on one side */
    uint32_t input_part = 0;
    if (so->near.enabled && la_table_find_part(t, "input", &input_part) == LA_OK) {
        la_near_params np = so->near.p;
        np.within = 1;
        np.threads = c->threads;
        np.exec = x;
        LA_TRY(la_near_find(t, input_part, &np, links, NULL));
    }
    /* semantic copies inside the input (model embeddings, or --embed lexical) join groups as well */
    if (so->semantic.enabled) {
        la_semantic_opts o = so->semantic;
        o.use_gpu = x->chosen->device;
        LA_TRY(semantic_links(&o, L, t, c->threads, x, links));
    }
    return la_groups_build(t, links, rep);
}

/* Every output file of a split, into dir atomically. */
static la_status write_outputs(const char *dir, const la_report *r, const split_opts *so, const la_threeset *ts,
                               const la_split *sp, const char (*fp)[65], const uint32_t *rep, const uint32_t *dup_of,
                               uint32_t demos, uint32_t dev, uint32_t test)
{
    la_outdir od;
    LA_TRY(la_outdir_begin(dir, &od));
    la_buf b = {0};
    la_status s = LA_OK;
    int keyed = so->key_file != NULL;
#define EMIT(name, call) LA_OUTDIR_EMIT(&od, s, &b, name, call)
    if (so->three_set) {
        EMIT("manifest.json", la_threeset_manifest_json(r, ts, &so->ts, fp, keyed, &b));
        EMIT("report.json", la_threeset_manifest_json(r, ts, &so->ts, fp, keyed, &b));
        EMIT("manifest.md", la_threeset_manifest_md(r, ts, &so->ts, fp, keyed, &b));
        EMIT("assignments.jsonl", la_threeset_assignments_jsonl(r, ts, rep, dup_of, &b));
        EMIT("demos.jsonl", la_report_manifest(r, demos, &b));
    } else {
        EMIT("report.json", la_split_report_json(r, sp, &b));
        EMIT("report.md", la_split_report_md(r, sp, &b));
        EMIT("assignments.jsonl", la_split_assignments_jsonl(r, sp, &b));
    }
    EMIT("dev.jsonl", la_report_manifest(r, dev, &b));
    EMIT("test.jsonl", la_report_manifest(r, test, &b));
    EMIT("quarantine.jsonl", la_report_manifest(r, LA_OUT_QUARANTINE, &b));
    EMIT("rejects.jsonl", la_report_rejects_jsonl(r, &b));
#undef EMIT
    la_buf_free(&b);
    return la_outdir_finish(&od, s);
}

static void print_summary(const la_cli *c, const split_opts *so, const la_threeset *ts, const uint32_t *out, size_t n,
                          size_t nrejects, uint32_t dev, uint32_t test)
{
    size_t k[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) k[out[i] == dev ? 0 : out[i] == test ? 1 : out[i] == LA_OUT_QUARANTINE ? 2 : 3]++;
    if (so->three_set) {
        printf("leakaudit %s split (three sets, seed %llu): demos %zu, dev %zu, test %zu, set aside %zu rows; "
               "rejected %zu (rows read %zu)\n",
               la_version(), (unsigned long long)so->ts.seed, k[3], k[0], k[1], k[2], nrejects, n + nrejects);
        printf("  dev share reached %.3f; majority-class floor %.1f%%; %s/manifest.md\n", ts->dev_share_reached,
               100 * ts->majority_floor, c->out);
    } else {
        char cut[11];
        la_date_format(c->cutoff, cut);
        printf("leakaudit %s split at %s: dev %zu, test %zu, quarantine %zu rows; rejected %zu (rows read %zu)\n",
               la_version(), cut, k[0], k[1], k[2], nrejects, n + nrejects);
        printf("  outputs: %s/ (assignments.jsonl, dev.jsonl, test.jsonl, quarantine.jsonl, report.md)\n", c->out);
    }
}

/* Warn (unless quiet) about dev or test holding under 5% of the placed rows, or under
 * --min-share; returns 1 when one is under --min-share. */
static int check_shares(const la_cli *c, const split_opts *so, const uint32_t *out, size_t n, uint32_t dev, uint32_t test)
{
    size_t rows[2] = {0, 0};
    for (size_t i = 0; i < n; i++) rows[0] += out[i] == dev, rows[1] += out[i] == test;
    static const char *const names[2] = {"dev", "test"};
    double warn_below = so->min_share > 0.05 ? so->min_share : 0.05;
    int failed = 0;
    for (int k = 0; k < 2; k++) {
        double share = n ? (double)rows[k] / (double)n : 0;
        if (share >= warn_below) continue;
        int fails = share < so->min_share;
        failed |= fails;
        if (c->quiet && !fails) continue;
        fprintf(stderr, "leakaudit split: %s: %s got %zu of the %zu rows placed (%.1f%%), under %s%.1f%%%s\n",
                fails ? "error" : "warning", names[k], rows[k], n, 100 * share, fails ? "--min-share " : "",
                100 * (fails ? so->min_share : warn_below),
                fails ? "; the outputs are written, the exit code is 1"
                      : so->three_set ? "" : " (see report.md: which families span the cutoff; --min-share X makes this fail)");
    }
    return failed;
}

int la_cmd_split(int argc, char **argv)
{
    la_cli c;
    la_cli_init(&c, "split");
    split_opts so;
    memset(&so, 0, sizeof so);
    so.ts.demos_per_class = 2;
    so.ts.dev_share = 0.5;
    la_near_opts_init(&so.near);
    la_semantic_opts_init(&so.semantic);
    so.semantic.enabled = 0; /* split groups by embeddings only when asked: see --help */
    c.load.require_text = 0;
    c.load.require_date = 1;
    c.out = "leakaudit-split";
    int rc = la_cli_parse(&c, argc, argv, k_options, k_help, split_option, &so);
    if (rc >= 0) {
        la_semantic_opts_free(&so.semantic);
        la_cli_free(&c);
        return rc;
    }
    c.load.embedding_field = so.semantic.enabled ? so.semantic.embedding_field : NULL;
    rc = LA_EXIT_INTERNAL;
    /* every file's rows are placed by the rule, not by a split field */
    for (size_t k = 0; k < c.ninputs; k++) c.inputs[k].part = "input";
    const char *extra[LA_MAX_EMB_FILES + 1];
    size_t nextra = 0;
    for (size_t k = 0; k < so.semantic.nemb; k++) extra[nextra++] = so.semantic.emb_path[k];
    if (so.key_file) extra[nextra++] = so.key_file;
    c.extra_inputs = extra;
    c.nextra = nextra;
    la_status s = la_cli_finish(&c);
    if (s == LA_OK && so.three_set && c.cutoff != LA_NO_DATE)
        s = la_error(LA_EINVAL, "choose one rule: --cutoff (chronological) or --three-set");
    if (s == LA_OK && !so.three_set && c.cutoff == LA_NO_DATE)
        s = la_error(LA_EINVAL, "--cutoff YYYY-MM-DD (chronological rule) or --three-set is required");
    unsigned char key[32];
    if (s == LA_OK && so.key_file) s = read_key(so.key_file, key);
    /* where the near and semantic grouping's backend ops run, as in audit */
    la_backend_choice bc;
    memset(&bc, 0, sizeof bc);
    if (s == LA_OK) {
        size_t nb;
        const la_backend *const *table = la_backends_builtin(&nb);
        s = la_backend_select(so.backend, table, nb, &bc);
    }
    if (so.three_set) {
        c.load.require_date = 0;
        c.load.require_label = 1;
    }
    if (s != LA_OK) {
        fprintf(stderr, "leakaudit split: %s (see leakaudit split --help)\n", la_last_error());
        la_semantic_opts_free(&so.semantic);
        la_cli_free(&c);
        return s == LA_ENOMEM ? LA_EXIT_INTERNAL : LA_EXIT_USAGE;
    }

    la_exec x;
    la_exec_init(&x, bc.be, bc.fallback, c.threads);
    double t0 = la_now();
    la_table *t = NULL;
    la_loader L;
    memset(&L, 0, sizeof L);
    la_split sp;
    memset(&sp, 0, sizeof sp);
    la_threeset ts;
    memset(&ts, 0, sizeof ts);
    la_audit a;
    memset(&a, 0, sizeof a);
    la_pairs links = {0};
    la_exact_result ex;
    memset(&ex, 0, sizeof ex);
    uint32_t *rep = NULL;
    uint32_t dev = 0, test = 0, demos = 0;
    s = la_table_new(&t);
    if (s == LA_OK && so.three_set) s = la_table_part(t, "demos", &demos);
    if (s == LA_OK) s = la_table_part(t, "dev", &dev);
    if (s == LA_OK) s = la_table_part(t, "test", &test);
    if (s == LA_OK) s = la_cli_load(&c, t, &L);
    /* split inputs have no partition of their own: rejects say so */
    for (size_t k = 0; k < L.nrejects; k++) L.rejects[k].part = LA_NO_PART;
    size_t n = t ? la_table_nrows(t) : 0;
    if (s == LA_OK) {
        a.out = la_malloc_n(n, sizeof *a.out);
        rep = la_malloc_n(n, sizeof *rep);
        if (!a.out || !rep) s = la_error(LA_ENOMEM, "out of memory");
    }
    if (s == LA_OK) s = build_groups(&c, &so, &L, t, &x, &links, &ex, rep);
    if (s == LA_OK && !so.three_set) s = la_split_chrono(t, rep, c.cutoff, dev, test, a.out, &sp);
    if (s == LA_OK && so.three_set) {
        s = la_threeset_make(t, rep, ex.dup_of, &so.ts, &ts);
        const uint32_t to_part[LA_SET_COUNT] = {demos, dev, test, LA_OUT_QUARANTINE};
        for (size_t i = 0; s == LA_OK && i < n; i++) a.out[i] = to_part[ts.set[i]];
    }
    if (s == LA_OK) {
        la_report_timing timings[1] = {{"total_s", la_now() - t0}};
        la_report r;
        la_report_init(&r, "split", t, &L, &ex, &c);
        char note[1200];
        snprintf(note, sizeof note, "%s", bc.note);
        la_backend_fallback_note(&x, note, sizeof note);
        r.backend = la_backend_ran_on(&x);
        r.backend_note = note;
        r.audit = &a;
        r.timings = timings;
        r.ntimings = 1;
        char fp[LA_SET_COUNT][65];
        if (so.three_set)
            for (int k = 0; s == LA_OK && k < LA_SET_COUNT; k++)
                s = la_threeset_fingerprint(t, &ts, k, so.key_file ? key : NULL, fp[k]);
        if (s == LA_OK) s = write_outputs(c.out, &r, &so, &ts, &sp, (const char(*)[65])fp, rep, ex.dup_of, demos, dev, test);
        if (s == LA_OK) {
            if (!c.quiet) print_summary(&c, &so, &ts, a.out, n, L.nrejects, dev, test);
            rc = check_shares(&c, &so, a.out, n, dev, test) ? 1 : LA_EXIT_CLEAN;
        }
    }
    if (s != LA_OK) {
        fprintf(stderr, "leakaudit split: %s\n", la_last_error()[0] ? la_last_error() : la_strerror(s));
        rc = la_exit_for(s);
    }
    free(a.out);
    free(rep);
    la_pairs_free(&links);
    la_exact_result_free(&ex);
    la_split_free(&sp);
    la_threeset_free(&ts);
    la_loader_free(&L);
    la_table_free(t);
    la_semantic_opts_free(&so.semantic);
    la_cli_free(&c);
    return rc;
}
