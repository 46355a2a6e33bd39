/*
 * cmd_merge.c - `leakaudit merge`: combine the shard.bin files of `audit --shard I/N` into the
 * reports the unsharded audit writes (shard.h), with its exit code. Exit 0 clean, 1 leaks, 2 bad
 * input or usage (shards that do not belong together among them), 3 internal error.
 */
#include "commands.h"
#include "pipeline.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char k_help[] =
    "Usage: leakaudit merge [options] SHARD_DIR...\n"
    "\n"
    "Combines the folders that `leakaudit audit --shard I/N ... --out SHARD_DIR` wrote, one per shard,\n"
    "into the reports the same audit without --shard writes: report.json (apart from timings and the\n"
    "per-stage call counts), pairs.jsonl, clusters.jsonl, assignments.jsonl and the manifests, byte\n"
    "for byte. It reads the inputs again (run it where the shards ran when their input paths are\n"
    "relative) and checks that they are the ones the shards read, that every shard 0..N-1 is there\n"
    "once, and that all ran the same options. Exit codes as for audit: 0 no leaks, 1 leaks found,\n"
    "2 bad input or usage, 3 internal.\n"
    "\n"
    "Options:\n"
    "  --out DIR               where the reports go (default leakaudit-report)\n"
    "  --baseline DIR, --waivers FILE, --today YYYY-MM-DD, --fail-on-new  as for audit: applied to\n"
    "                          the merged links\n"
    "  --progress auto|always|never|json  progress on stderr\n"
    "  -q, --quiet             no summary on stdout\n"
    "  --help                  this text\n";

enum { OPT_OUT = 1000, OPT_BASELINE, OPT_WAIVERS, OPT_TODAY, OPT_FAIL_ON_NEW, OPT_PROGRESS, OPT_HELP };

static const struct option k_options[] = {{"out", required_argument, 0, OPT_OUT},
                                          {"baseline", required_argument, 0, OPT_BASELINE},
                                          {"waivers", required_argument, 0, OPT_WAIVERS},
                                          {"today", required_argument, 0, OPT_TODAY},
                                          {"fail-on-new", no_argument, 0, OPT_FAIL_ON_NEW},
                                          {"progress", required_argument, 0, OPT_PROGRESS},
                                          {"quiet", no_argument, 0, 'q'},
                                          {"help", no_argument, 0, OPT_HELP},
                                          {0, 0, 0, 0}};

typedef struct merge_opts {
    const char *out, *baseline, *waivers, *today, *progress;
    int fail_on_new, quiet;
    const char **dirs;
    size_t ndirs;
} merge_opts;

/* The merge's own arguments; -1 to go on, else the exit code. */
static int parse(int argc, char **argv, merge_opts *m)
{
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "q", k_options, NULL)) != -1) {
        switch (opt) {
        case OPT_HELP: fputs(k_help, stdout); return LA_EXIT_CLEAN;
        case OPT_OUT: m->out = optarg; break;
        case OPT_BASELINE: m->baseline = optarg; break;
        case OPT_WAIVERS: m->waivers = optarg; break;
        case OPT_TODAY: m->today = optarg; break;
        case OPT_PROGRESS: m->progress = optarg; break;
        case OPT_FAIL_ON_NEW: m->fail_on_new = 1; break;
        case 'q': m->quiet = 1; break;
        default:
            fprintf(stderr, "leakaudit merge: unknown option or missing value: %s (see leakaudit merge --help)\n",
                    argv[optind - 1]);
            return LA_EXIT_USAGE;
        }
    }
    m->dirs = (const char **)argv + optind;
    m->ndirs = (size_t)(argc - optind);
    if (!m->ndirs) {
        fprintf(stderr, "leakaudit merge: no shard folders given: leakaudit merge --out DIR SHARD_DIR... (see "
                        "leakaudit merge --help)\n");
        return LA_EXIT_USAGE;
    }
    return -1;
}

/* The shards' relative input paths point from the folder they ran in. */
static la_status check_cwd(const la_partial *m, const la_audit_job *j)
{
    char cwd[PATH_MAX];
    if (!m->cwd || !getcwd(cwd, sizeof cwd) || !strcmp(cwd, m->cwd)) return LA_OK;
    for (size_t k = 0; k < j->cli.ninputs; k++)
        if (j->cli.inputs[k].path && j->cli.inputs[k].path[0] != '/' && strcmp(j->cli.inputs[k].path, "-"))
            return la_error(LA_EINVAL, "the shards ran in %s and read %s from there: run leakaudit merge in that "
                                       "folder, or give the shards absolute input paths",
                            m->cwd, j->cli.inputs[k].path);
    return LA_OK;
}

/* The audit the shards ran, rebuilt from their arguments, with the merge's own options. */
static int rebuild_job(const la_partial *m, const merge_opts *o, la_audit_job *job, char ***argv_out)
{
    size_t n = m->argc + 1;
    char **argv = calloc(n + 1, sizeof *argv);
    if (!argv) {
        fprintf(stderr, "leakaudit merge: out of memory\n");
        return LA_EXIT_INTERNAL;
    }
    *argv_out = argv;
    argv[0] = "audit";
    for (size_t k = 0; k < m->argc; k++) argv[k + 1] = m->argv[k];
    int rc = la_cli_parse(&job->cli, (int)n, argv, la_audit_options, "%s", la_audit_job_option, job);
    if (rc >= 0) return rc;
    /* the shards' --shard and --out are not kept; the merge's own options take their place. The
     * merge runs no backend op (the shards did), so a --backend gpu of GPU nodes' shards does not
     * need a device here; report.json says what the shards ran on. */
    job->shard.count = 0;
    job->backend = LA_BACKEND_CPU;
    job->cli.out = o->out ? o->out : job->cli.out;
    job->cli.quiet = o->quiet;
    job->baseline = o->baseline;
    job->waivers = o->waivers;
    job->fail_on_new = o->fail_on_new;
    la_status s = LA_OK;
    if (o->progress) s = la_progress_parse(o->progress, &job->progress);
    if (s == LA_OK && o->today && la_date_parse(o->today, strlen(o->today), 0, &job->today) != LA_OK)
        s = la_error(LA_EINVAL, "--today %s: expected a date YYYY-MM-DD that exists on the calendar", o->today);
    if (s == LA_OK) s = la_audit_job_finish(job);
    if (s == LA_OK) s = check_cwd(m, job);
    if (s != LA_OK) {
        fprintf(stderr, "leakaudit merge: %s (see leakaudit merge --help)\n", la_last_error());
        return s == LA_ENOMEM ? LA_EXIT_INTERNAL : LA_EXIT_USAGE;
    }
    return -1;
}

int la_cmd_merge(int argc, char **argv)
{
    merge_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc >= 0) return rc;
    la_partial *v = calloc(o.ndirs, sizeof *v), merged;
    la_partial_init(&merged);
    if (!v) {
        fprintf(stderr, "leakaudit merge: out of memory\n");
        return LA_EXIT_INTERNAL;
    }
    la_status s = LA_OK;
    for (size_t k = 0; s == LA_OK && k < o.ndirs; k++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", o.dirs[k], LA_SHARD_FILE) >= (int)sizeof path)
            s = la_error(LA_EINVAL, "%s: path too long", o.dirs[k]);
        else if (access(path, F_OK) != 0)
            s = la_error(LA_EINPUT, "%s: no %s in it (not an output folder of leakaudit audit --shard, or that shard "
                                    "has not finished)",
                         o.dirs[k], LA_SHARD_FILE);
        else
            s = la_partial_read(path, &v[k]);
    }
    if (s == LA_OK) s = la_partial_merge(v, o.dirs, o.ndirs, &merged);
    for (size_t k = 0; k < o.ndirs; k++) la_partial_free(&v[k]);
    free(v);
    if (s != LA_OK) {
        fprintf(stderr, "leakaudit merge: %s\n", la_last_error());
        la_partial_free(&merged);
        return la_exit_for(s);
    }

    la_audit_job job;
    la_audit_job_init(&job);
    char **jargv = NULL;
    rc = rebuild_job(&merged, &o, &job, &jargv);
    if (rc < 0) {
        job.merged = &merged;
        rc = la_audit_command_run(&job, "merge");
    }
    la_audit_job_free(&job);
    free(jargv);
    la_partial_free(&merged);
    return rc;
}
