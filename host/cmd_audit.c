/*
 * cmd_audit.c - `leakaudit audit`: read the partitions, find every link across the held-out
 * boundary, decide every row's outcome and write the reports. Exit 0 clean, 1 leaks, 2 bad input
 * or usage, 3 internal error.
 */
#include "backend.h"
#include "cli.h"
#include "commands.h"
#include "exact.h"
#include "grade.h"
#include "outdir.h"
#include "report.h"
#include "tiers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "Usage: leakaudit audit [options] (--dev FILE --test FILE | --part NAME=FILE... | FILE...)\n"
    "\n"
    "Finds every link between the held-out partition and the others: shared family ids (family),\n"
    "rows on the wrong side of --cutoff (time), copies after normalization (exact), near copies\n"
    "(near) and similar embeddings (semantic). Linked rows form clusters; every row gets one\n"
    "outcome: its partition, quarantine (with reasons) or rejected.\n"
    "\n"
    "%s"
    "Audit:\n"
    "  --normalize nfkc|space|none  text normalization before hashing (default nfkc: NFKC, case\n"
    "                          folding, whitespace runs collapsed)\n"
    "  --fail-on LIST          what makes the exit code 1: comma list of family, time, exact, near,\n"
    "                          semantic, each optionally :copy, :near or :related (that grade or\n"
    "                          stronger; default :near), or all (default: every kind, content links\n"
    "                          graded near or copy), all:related, or none (report without gating)\n"
    "  --resolve POLICY[:GRADE]  what a cluster that crosses the boundary costs: quarantine (default:\n"
    "                          all its rows), keep-test (only its seen-side rows move out, for a\n"
    "                          fixed test set) or keep-seen (only its held-out rows move out); content\n"
    "                          links join clusters from GRADE up (default near; related links are\n"
    "                          reported and move nothing unless :related is given)\n"
    "  --max-cluster N         flag clusters with more than N rows as suspect and name their weakest\n"
    "                          links (default 100; 0 turns the check off)\n"
    "  --backend auto|cpu|gpu  where similarity work runs (env LEAKAUDIT_BACKEND; default auto: the\n"
    "                          GPU when built with CUDA and a device is present, else the CPU)\n"
    "Near copies (MinHash-LSH, SimHash and containment, verified on shingle sets; kind near):\n"
    "  --near on|off           run the tier (default on)\n"
    "  --near-threshold J      Jaccard of shingle sets for a near copy (default 0.33)\n"
    "  --containment-threshold C  share of the shorter text's shingles found in the longer one\n"
    "                          (default 0.9; catches a test item quoted inside a long passage; off)\n"
    "  --shingle word|char, --shingle-size N  shingles (default word 2-grams)\n"
    "  --num-perm K            MinHash permutations (default 128)\n"
    "  --simhash-k K           SimHash Hamming radius (default 3; -1 turns SimHash off)\n"
    "  --within                also report near copies inside one partition (within_pairs.jsonl)\n"
    "Semantic copies (cosine of embeddings; pairs with kind semantic):\n"
    "  --embeddings PART=FILE.npy  float32/float16 vectors, one row per input row of PART in input\n"
    "                          order (repeat for every partition)\n"
    "  --embedding-field NAME  vectors stored in the rows as a JSON array of numbers\n"
    "  --embed model|lexical|none  model: the built-in sentence encoder (default when a model is\n"
    "                          installed: see leakaudit models); lexical: the built-in TF-IDF of\n"
    "                          wording (default otherwise); none turns the semantic tier off\n"
    "  --model NAME|DIR        encoder model: an installed name or a sentence-transformers folder\n"
    "                          (default all-MiniLM-L6-v2); implies --embed model\n"
    "  --semantic-windows on|off  texts longer than the model window as overlapping sentence-aligned\n"
    "                          windows (default on) or cut at the window\n"
    "  --semantic-threshold X  cosine threshold (default 0.82 for model embeddings, 0.50 lexical)\n"
    "  --semantic-method auto|tiles|faiss|faiss-ivf  search method (default auto: exact tiles)\n"
    "  --semantic-topk K       nearest seen rows kept per held-out row in nearest.jsonl (default 1)\n"
    "  --help                  this text\n"
    "\n"
    "Writes to --out: report.json, report.md, report.html (one self-contained page), report.junit.xml\n"
    "(a test case per kind, for CI), pairs.jsonl, clusters.jsonl, assignments.jsonl,\n"
    "<partition>.jsonl for each partition (the clean manifests), quarantine.jsonl, rejects.jsonl,\n"
    "and nearest.jsonl (semantic) and within_pairs.jsonl (--within) when those run.\n"
    "Exit codes: 0 no leaks (among --fail-on kinds), 1 leaks found, 2 bad input or usage, 3 internal error.\n";

enum { OPT_RESOLVE = LA_OPT_COMMAND_BASE, OPT_MAX_CLUSTER, OPT_BACKEND, OPT_SEMANTIC, OPT_NEAR };

static struct option k_options[] = {LA_CLI_COMMON_OPTIONS,
                                    {"resolve", required_argument, 0, OPT_RESOLVE},
                                    {"max-cluster", required_argument, 0, OPT_MAX_CLUSTER},
                                    {"backend", required_argument, 0, OPT_BACKEND},
                                    LA_SEMANTIC_LONG_OPTIONS(OPT_SEMANTIC),
                                    {"semantic-method", required_argument, 0, OPT_SEMANTIC},
                                    {"semantic-topk", required_argument, 0, OPT_SEMANTIC},
                                    {"semantic-windows", required_argument, 0, OPT_SEMANTIC},
                                    LA_NEAR_LONG_OPTIONS(OPT_NEAR),
                                    {"within", no_argument, 0, OPT_NEAR},
                                    {0, 0, 0, 0}};

typedef struct audit_opts {
    la_resolve resolve;
    uint8_t link_grade;
    size_t max_cluster;
    la_backend_req backend;
    la_semantic_opts semantic;
    la_near_opts_cli near;
} audit_opts;

static la_status audit_option(void *ctx, int opt, const char *name, const char *arg)
{
    audit_opts *ao = ctx;
    switch (opt) {
    case OPT_SEMANTIC: return la_semantic_option(&ao->semantic, name, arg);
    case OPT_NEAR: return la_near_option(&ao->near, name, arg);
    case OPT_RESOLVE: return la_resolve_parse_grade(arg, &ao->resolve, &ao->link_grade);
    case OPT_BACKEND: return la_backend_parse(arg, &ao->backend);
    case OPT_MAX_CLUSTER: {
        char *end;
        long v = strtol(arg, &end, 10);
        if (*end || v < 0) return la_error(LA_EINVAL, "--max-cluster %s: expected a row count (0 turns the check off)", arg);
        ao->max_cluster = (size_t)v;
        return LA_OK;
    }
    }
    return LA_EUNSUPPORTED;
}

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

static int exit_for(la_status s) { return s == LA_EINPUT || s == LA_EINVAL || s == LA_EIO ? LA_EXIT_USAGE : LA_EXIT_INTERNAL; }

static la_status write_outputs(const la_cli *c, const la_report *r, const la_tier_out *near, const la_tier_out *sem)
{
    la_outdir od;
    LA_TRY(la_outdir_begin(c->out, &od));
    la_buf b = {0};
    la_status s = LA_OK;
#define EMIT(name, call)                                  \
    if (s == LA_OK) {                                     \
        b.n = 0;                                          \
        s = (call);                                       \
        if (s == LA_OK) s = la_outdir_write(&od, name, &b); \
    }
    EMIT("report.json", la_report_json(r, &b));
    EMIT("report.md", la_report_md(r, &b));
    EMIT("report.html", la_report_html(r, &b));
    EMIT("report.junit.xml", la_report_junit(r, &b));
    EMIT("pairs.jsonl", la_report_pairs_jsonl(r, &b));
    EMIT("assignments.jsonl", la_report_assignments_jsonl(r, &b));
    EMIT("clusters.jsonl", la_report_clusters_jsonl(r, &b));
    EMIT("quarantine.jsonl", la_report_manifest(r, LA_OUT_QUARANTINE, &b));
    EMIT("rejects.jsonl", la_report_rejects_jsonl(r, &b));
    if (s == LA_OK && sem && sem->json.n) s = la_outdir_write(&od, "nearest.jsonl", &sem->extra);
    if (s == LA_OK && near && near->json.n && near->extra.n) s = la_outdir_write(&od, "within_pairs.jsonl", &near->extra);
    for (uint32_t p = 0; p < la_table_npart(r->table) && s == LA_OK; p++) {
        char name[96];
        snprintf(name, sizeof name, "%s.jsonl", la_table_part_name(r->table, p));
        EMIT(name, la_report_manifest(r, p, &b));
    }
#undef EMIT
    la_buf_free(&b);
    if (s != LA_OK) {
        la_outdir_abort(&od);
        return s;
    }
    return la_outdir_commit(&od);
}

static void print_summary(const la_cli *c, const la_report *r, const la_audit *a)
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
    printf("leakaudit %s audit: held out '%s'", la_version(), la_table_part_name(t, r->heldout));
    for (uint32_t p = 0; p < la_table_npart(t); p++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) k += rows[i].part == p;
        printf("%s %s %zu", p ? "," : ";", la_table_part_name(t, p), k);
    }
    printf(" rows (backend: %s%s%s)\n", r->backend, r->backend_note && r->backend_note[0] ? "; " : "",
           r->backend_note ? r->backend_note : "");
    printf("  rows read %zu = placed %zu + rejected %zu\n", n + r->nrejects, n, r->nrejects);
    printf("  links: %zu pairs (", r->pairs->n);
    for (int k = 0; k < LA_KIND_COUNT; k++) {
        size_t m = 0;
        for (size_t q = 0; q < r->pairs->n; q++) m += (r->pairs->v[q].kinds >> k) & 1;
        printf("%s%s %zu", k ? ", " : "", la_kind_name(1u << k), m);
    }
    size_t g[4] = {0};
    for (size_t q = 0; q < r->pairs->n; q++) g[r->pairs->v[q].grade & 3]++;
    printf(") in %zu clusters; %zu rows on the wrong side of the cutoff\n", a->nclusters, a->ntime);
    printf("  grades: %zu copy, %zu near, %zu related (related links are listed, not gated); %zu of %zu held-out rows "
           "compared\n",
           g[LA_GRADE_COPY], g[LA_GRADE_NEAR], g[LA_GRADE_RELATED], r->heldout_compared, held);
    printf("  within partitions: %zu duplicate rows, %zu label conflicts\n", r->ndup, r->nconflicts);
    double hw = la_stat_ci95(acc, held_kept);
    printf("  quarantined %zu rows; clean %s: %zu of %zu rows, 95%% interval ±%.1f points at %.1f%% accuracy (%s)%s\n",
           quarantined, la_table_part_name(t, r->heldout), held_kept, held, held_kept ? 100 * hw : 100.0, 100 * acc,
           scored ? "observed" : "assumed", held_kept == 0 || hw > 0.05 ? " (too wide to gate a release)" : "");
    printf("  reports: %s/report.md (also report.json, pairs.jsonl, assignments.jsonl, manifests)\n", c->out);
    printf("  exit %d: %s\n", r->exit_code, r->leaks ? "leaks found" : "no leaks");
}

int la_cmd_audit(int argc, char **argv)
{
    la_cli c;
    la_cli_init(&c, "audit");
    audit_opts aopt;
    memset(&aopt, 0, sizeof aopt);
    aopt.resolve = LA_RESOLVE_QUARANTINE;
    aopt.link_grade = LA_GRADE_NEAR;
    aopt.max_cluster = LA_DEFAULT_MAX_CLUSTER;
    aopt.backend = LA_BACKEND_AUTO;
    la_semantic_opts_init(&aopt.semantic);
    la_near_opts_init(&aopt.near);
    int rc = la_cli_parse(&c, argc, argv, k_options, k_help, audit_option, &aopt);
    if (rc >= 0) {
        la_semantic_opts_free(&aopt.semantic);
        la_cli_free(&c);
        return rc;
    }
    rc = LA_EXIT_INTERNAL;
    c.load.embedding_field = aopt.semantic.enabled ? aopt.semantic.embedding_field : NULL;
    c.extra_inputs = aopt.semantic.emb_path;
    c.nextra = aopt.semantic.nemb;
    la_status fs = la_cli_finish(&c);
    if (fs != LA_OK) {
        fprintf(stderr, "leakaudit audit: %s (see leakaudit audit --help)\n", la_last_error());
        la_semantic_opts_free(&aopt.semantic);
        la_cli_free(&c);
        return fs == LA_ENOMEM ? LA_EXIT_INTERNAL : LA_EXIT_USAGE;
    }

    la_backend backend;
    la_status bs = la_backend_select(aopt.backend, &backend);
    if (bs != LA_OK) {
        fprintf(stderr, "leakaudit audit: %s\n", la_last_error());
        la_cli_free(&c);
        la_semantic_opts_free(&aopt.semantic);
        return bs == LA_EINVAL ? LA_EXIT_USAGE : LA_EXIT_INTERNAL;
    }
    if (backend.note[0] && !c.quiet && aopt.backend == LA_BACKEND_AUTO && getenv("LEAKAUDIT_BACKEND"))
        fprintf(stderr, "leakaudit audit: warning: %s\n", backend.note);

    double t0 = la_now();
    la_table *t = NULL;
    la_loader L;
    memset(&L, 0, sizeof L);
    la_pairs pairs = {0};
    la_exact_result ex;
    memset(&ex, 0, sizeof ex);
    la_audit a;
    memset(&a, 0, sizeof a);
    la_report_timing timings[10];
    size_t ntimings = 0;
    la_status s = la_table_new(&t);
    if (s == LA_OK) s = la_cli_load(&c, t, &L);
    double t1 = la_now();
    timings[ntimings++] = (la_report_timing){"read_s", t1 - t0};
    uint32_t heldout = 0;
    if (s == LA_OK && la_table_find_part(t, c.heldout, &heldout) != LA_OK) {
        char list[512] = "";
        for (uint32_t p = 0; p < la_table_npart(t); p++) {
            strncat(list, p ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, la_table_part_name(t, p), sizeof list - strlen(list) - 1);
        }
        s = la_error(LA_EINVAL, "--heldout %s: no partition of that name in the input (partitions: %s)", c.heldout,
                     list[0] ? list : "none");
    }
    if (s == LA_OK) s = check_sides(t, heldout);
    if (s == LA_OK) s = la_normalize_table(t, c.norm, c.threads);
    double t2 = la_now();
    timings[ntimings++] = (la_report_timing){"normalize_s", t2 - t1};
    la_audit_opts ao = {heldout, c.cutoff, aopt.resolve, aopt.max_cluster, aopt.link_grade};
    if (s == LA_OK) s = la_exact_find(t, heldout, &pairs, &ex);
    if (s == LA_OK) s = la_audit_evidence(t, &ao, &pairs, &a);
    double t3 = la_now();
    timings[ntimings++] = (la_report_timing){"links_s", t3 - t2};
    la_tier_out sem;
    memset(&sem, 0, sizeof sem);
    la_report_section sections[4];
    size_t nsections = 0;
    la_tier_out near;
    memset(&near, 0, sizeof near);
    if (s == LA_OK && aopt.near.enabled) {
        s = la_tier_near(&aopt.near, t, heldout, c.threads, &pairs, &near);
        if (s == LA_OK) sections[nsections++] = (la_report_section){"near", near.json.p, near.md.p, NULL};
        double t3b = la_now();
        timings[ntimings++] = (la_report_timing){"near_s", t3b - t3};
        t3 = t3b;
    }
    char backend_note[700];
    snprintf(backend_note, sizeof backend_note, "%s", backend.note);
    const char *ran_on = "cpu";
    if (s == LA_OK && aopt.semantic.enabled) {
        aopt.semantic.use_gpu = backend.gpu;
        s = la_tier_semantic(&aopt.semantic, &L, t, heldout, c.threads, &pairs, &sem);
        if (s == LA_OK && backend.gpu && strcmp(sem.backend, "gpu") != 0) {
            /* the device failed during the run: gpu was asked for, or auto falls back with a warning */
            if (backend.explicit_gpu)
                s = la_error(LA_ECUDA, "--backend gpu: the semantic stage could not run on %s: %s", backend.device,
                             sem.fallback);
            else {
                snprintf(backend_note, sizeof backend_note, "auto fell back to the CPU: %s", sem.fallback);
                if (!c.quiet) fprintf(stderr, "leakaudit audit: warning: %s\n", backend_note);
            }
        }
        if (s == LA_OK && !strcmp(sem.backend, "gpu")) ran_on = "gpu";
        if (s == LA_OK) sections[nsections++] = (la_report_section){"semantic", sem.json.p, sem.md.p, sem.html.p};
        double t3b = la_now();
        timings[ntimings++] = (la_report_timing){"semantic_s", t3b - t3};
        t3 = t3b;
    }
    la_grade_stats gst;
    memset(&gst, 0, sizeof gst);
    if (s == LA_OK) {
        la_pairs_normalize(&pairs);
        la_grade_params gp;
        la_grade_params_default(&gp);
        gp.threads = c.threads;
        gp.semantic_lexical = !aopt.semantic.enabled || sem.lexical_embedding;
        s = la_grade_pairs(t, &gp, &pairs, &gst);
    }
    if (s == LA_OK) {
        double tg = la_now();
        timings[ntimings++] = (la_report_timing){"grade_s", tg - t3};
        t3 = tg;
        s = la_audit_decide(t, &ao, &pairs, ex.dup_of, &a);
        la_audit_sort_pairs(t, &pairs);
    }
    if (s == LA_OK) {
        la_report r;
        memset(&r, 0, sizeof r);
        r.command = "audit";
        r.table = t;
        r.files = L.files;
        r.nfiles = L.nfiles;
        r.rejects = L.rejects;
        r.nrejects = L.nrejects;
        r.pairs = &pairs;
        r.audit = &a;
        r.dup_of = ex.dup_of;
        r.ndup = ex.ndup;
        r.exact_cross_groups = ex.ncross_groups;
        r.conflict_rows = ex.conflict_rows;
        r.conflict_start = ex.conflict_start;
        r.nconflicts = ex.nconflicts;
        r.heldout = heldout;
        r.cutoff = c.cutoff;
        r.normalize = la_norm_mode_name(c.norm);
        r.on_invalid = c.reject_invalid ? "reject" : "fail";
        r.date_format = c.load.allow_timestamp ? "iso8601" : "canonical";
        r.backend = ran_on;
        r.backend_note = backend_note;
        const char *pnames[2] = {"backend_note", "device"};
        const char *pvalues[2] = {backend_note, backend.device};
        r.param_names = pnames;
        r.param_values = pvalues;
        r.nparams = 2;
        r.gate = c.gate;
        r.heldout_compared = heldout_compared(t, heldout);
        r.template_numbers = gst.template_numbers;
        r.resolve = aopt.resolve;
        r.max_cluster = aopt.max_cluster;
        r.assumed_accuracy = 0.9;
        la_report_summarize(&r);
        double t4 = la_now();
        timings[ntimings++] = (la_report_timing){"decide_s", t4 - t3};
        timings[ntimings++] = (la_report_timing){"total_s", t4 - t0};
        r.timings = timings;
        r.ntimings = ntimings;
        r.sections = sections;
        r.nsections = nsections;
        s = write_outputs(&c, &r, &near, &sem);
        if (s == LA_OK) {
            if (!c.quiet) print_summary(&c, &r, &a);
            rc = r.exit_code;
        }
    }
    if (s != LA_OK) {
        fprintf(stderr, "leakaudit audit: %s\n", la_last_error()[0] ? la_last_error() : la_strerror(s));
        rc = exit_for(s);
    }
    la_tier_out_free(&sem);
    la_tier_out_free(&near);
    la_semantic_opts_free(&aopt.semantic);
    la_audit_free(&a);
    la_exact_result_free(&ex);
    la_pairs_free(&pairs);
    la_loader_free(&L);
    la_table_free(t);
    la_cli_free(&c);
    return rc;
}
