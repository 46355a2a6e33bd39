/*
 * cmd_split.c - `leakaudit split`: make a leak-free split by the chronological family rule and
 * write the assignments, the manifests and a report.
 */
#include "cli.h"
#include "commands.h"
#include "exact.h"
#include "groups.h"
#include "outdir.h"
#include "split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "Usage: leakaudit split --cutoff YYYY-MM-DD [options] FILE... [--out DIR]\n"
    "\n"
    "Assigns whole families by date: a family (rows sharing --family-field; a row without one is its\n"
    "own family) entirely before the cutoff goes to dev, entirely on or after it to test, and a\n"
    "family that spans the cutoff to quarantine. Every row needs a date (--date-field); text is\n"
    "optional. The result does not depend on the order of the input.\n"
    "\n"
    "%s"
    "\n"
    "Writes to --out: assignments.jsonl, dev.jsonl, test.jsonl, quarantine.jsonl (original rows\n"
    "unchanged), rejects.jsonl, report.json and report.md.\n"
    "Exit codes: 0 done, 2 bad input or usage, 3 internal error.\n";

static struct option k_options[] = {LA_CLI_COMMON_OPTIONS, {0, 0, 0, 0}};

int la_cmd_split(int argc, char **argv)
{
    la_cli c;
    la_cli_init(&c, "split");
    c.load.require_text = 0;
    c.load.require_date = 1;
    c.out = "leakaudit-split";
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "-", k_options, NULL)) != -1) {
        if (opt == LA_OPT_HELP) {
            printf(k_help, la_cli_common_help);
            la_cli_free(&c);
            return LA_EXIT_CLEAN;
        }
        la_status s = LA_EINVAL;
        if (opt == LA_OPT_PART || opt == LA_OPT_DEV || opt == LA_OPT_TEST || opt == LA_OPT_HELDOUT || opt == LA_OPT_FAIL_ON)
            la_error(LA_EINVAL, "%s does not apply to split: give the files as FILE...", argv[optind - 1]);
        else if (opt == '?' || opt == ':')
            la_error(LA_EINVAL, "unknown option or missing value: %s", argv[optind - 1]);
        else
            s = la_cli_option(&c, opt, optarg);
        if (s != LA_OK) {
            fprintf(stderr, "leakaudit split: %s (see leakaudit split --help)\n", la_last_error());
            la_cli_free(&c);
            return LA_EXIT_USAGE;
        }
    }
    /* every file's rows are placed by the rule, not by a split field */
    for (size_t k = 0; k < c.ninputs; k++) c.inputs[k].part = "input";
    la_status s = la_cli_finish(&c);
    if (s == LA_OK && c.cutoff == LA_NO_DATE) s = la_error(LA_EINVAL, "--cutoff YYYY-MM-DD is required");
    if (s != LA_OK) {
        fprintf(stderr, "leakaudit split: %s (see leakaudit split --help)\n", la_last_error());
        la_cli_free(&c);
        return LA_EXIT_USAGE;
    }

    double t0 = la_cli_now();
    la_table *t = NULL;
    la_loader L;
    memset(&L, 0, sizeof L);
    la_split sp;
    memset(&sp, 0, sizeof sp);
    la_audit a;
    memset(&a, 0, sizeof a);
    uint32_t dev = 0, test = 0;
    int rc = LA_EXIT_INTERNAL;
    s = la_table_new(&t);
    if (s == LA_OK) s = la_table_part(t, "dev", &dev);
    if (s == LA_OK) s = la_table_part(t, "test", &test);
    if (s == LA_OK) s = la_cli_load(&c, t, &L);
    size_t n = t ? la_table_nrows(t) : 0;
    if (s == LA_OK) {
        a.out = malloc((n ? n : 1) * sizeof *a.out);
        if (!a.out) s = la_error(LA_ENOMEM, "out of memory");
    }
    /* groups: families joined with exact copies (rows with text), so copies never straddle the split */
    uint32_t *rep = NULL;
    la_pairs links = {0};
    la_exact_result ex;
    memset(&ex, 0, sizeof ex);
    if (s == LA_OK) s = la_normalize_table(t, c.norm, c.threads);
    if (s == LA_OK) s = la_exact_find(t, UINT32_MAX, &links, &ex);
    for (size_t i = 0; s == LA_OK && i < n; i++)
        if (ex.dup_of[i] != LA_NOT_DUP) {
            la_pair p = la_pair_make(ex.dup_of[i], (uint32_t)i, LA_KIND_EXACT);
            s = la_pairs_push(&links, &p);
        }
    if (s == LA_OK) {
        rep = malloc((n ? n : 1) * sizeof *rep);
        s = rep ? la_groups_build(t, &links, rep) : la_error(LA_ENOMEM, "out of memory");
    }
    if (s == LA_OK) s = la_split_chrono(t, rep, c.cutoff, dev, test, a.out, &sp);
    if (s == LA_OK) {
        la_report_timing timings[1] = {{"total_s", la_cli_now() - t0}};
        la_report r;
        memset(&r, 0, sizeof r);
        r.command = "split";
        r.table = t;
        r.files = L.files;
        r.nfiles = L.nfiles;
        r.rejects = L.rejects;
        r.nrejects = L.nrejects;
        r.audit = &a;
        r.cutoff = c.cutoff;
        r.on_invalid = c.reject_invalid ? "reject" : "fail";
        r.date_format = c.load.allow_timestamp ? "iso8601" : "canonical";
        r.timings = timings;
        r.ntimings = 1;
        la_outdir od;
        s = la_outdir_begin(c.out, &od);
        if (s == LA_OK) {
            la_buf b = {0};
#define EMIT(name, call)                                        \
    if (s == LA_OK) {                                           \
        b.n = 0;                                                \
        s = (call);                                             \
        if (s == LA_OK) s = la_outdir_write(&od, name, &b);     \
    }
            EMIT("report.json", la_split_report_json(&r, &sp, &b));
            EMIT("report.md", la_split_report_md(&r, &sp, &b));
            EMIT("assignments.jsonl", la_split_assignments_jsonl(&r, &sp, &b));
            EMIT("dev.jsonl", la_report_manifest(&r, dev, &b));
            EMIT("test.jsonl", la_report_manifest(&r, test, &b));
            EMIT("quarantine.jsonl", la_report_manifest(&r, LA_OUT_QUARANTINE, &b));
            EMIT("rejects.jsonl", la_report_rejects_jsonl(&r, &b));
#undef EMIT
            la_buf_free(&b);
            if (s == LA_OK) s = la_outdir_commit(&od);
            else la_outdir_abort(&od);
        }
        if (s == LA_OK) {
            rc = LA_EXIT_CLEAN;
            if (!c.quiet) {
                size_t k[3] = {0, 0, 0};
                for (size_t i = 0; i < n; i++) k[a.out[i] == dev ? 0 : a.out[i] == test ? 1 : 2]++;
                char cut[11];
                la_date_format(c.cutoff, cut);
                printf("leakaudit %s split at %s: dev %zu, test %zu, quarantine %zu rows; rejected %zu (rows read %zu)\n",
                       la_version(), cut, k[0], k[1], k[2], L.nrejects, n + L.nrejects);
                printf("  outputs: %s/ (assignments.jsonl, dev.jsonl, test.jsonl, quarantine.jsonl, report.md)\n", c.out);
            }
        }
    }
    if (s != LA_OK) {
        fprintf(stderr, "leakaudit split: %s\n", la_last_error()[0] ? la_last_error() : la_strerror(s));
        rc = s == LA_EINPUT || s == LA_EINVAL || s == LA_EIO ? LA_EXIT_USAGE : LA_EXIT_INTERNAL;
    }
    free(a.out);
    free(rep);
    la_pairs_free(&links);
    la_exact_result_free(&ex);
    la_split_free(&sp);
    la_loader_free(&L);
    la_table_free(t);
    la_cli_free(&c);
    return rc;
}
