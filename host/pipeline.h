/*
 * pipeline.h - one audit from options to decisions, for the `audit` command and for the library
 * entry point (la_audit_run in include/leakaudit.h), and the one function that fills the report
 * model (la_report) for every command that writes reports.
 *
 * Not for: printing or writing files. The command prints its summary and writes the reports; the
 * library hands the result to its caller.
 */
#ifndef LA_PIPELINE_H
#define LA_PIPELINE_H

#include "backend.h"
#include "baseline.h"
#include "cli.h"
#include "dispatch.h"
#include "exact.h"
#include "outdir.h"
#include "grade.h"
#include "progress.h"
#include "report.h"
#include "shard.h"
#include "tiers.h"
#include "waivers.h"

/* The options of one audit: the common input options and audit's own. */
typedef struct la_audit_job {
    la_cli cli;
    la_resolve resolve;
    uint8_t link_grade;
    size_t max_cluster;
    la_backend_req backend;
    la_semantic_opts semantic;
    la_near_opts_cli near;
    la_progress_mode progress;  /* --progress (the command's; the library passes warn = 0: none) */
    const char *baseline;       /* --baseline DIR: an earlier run's output folder, or NULL */
    const char *waivers;        /* --waivers FILE, or NULL */
    int32_t today;              /* --today: the day waivers are checked against; LA_NO_DATE: the local date */
    int fail_on_new;            /* --fail-on-new: only links new since the baseline fail the run */
    const char *extra[LA_MAX_EMB_FILES + 1];  /* files read besides the inputs (la_cli.extra_inputs) */
    la_shard shard;             /* --shard: compute this slice's content links and write shard.bin */
    const char *shard_arg;      /* the --shard value as given (a pointer into argv) */
    int argc;                   /* the command's arguments, kept in shard.bin (la_audit_job_record_args) */
    char **argv;
    const la_partial *merged;   /* `merge`: the shards' content links and tier results, used in place
                                   of running the tiers (NULL: run them) */
} la_audit_job;

/* The long options of `leakaudit audit` (getopt_long table, ends with a zero entry). */
extern const struct option la_audit_options[];

void la_audit_job_init(la_audit_job *j);
void la_audit_job_free(la_audit_job *j);

/* An option of audit's own (la_cli_command_fn): *handled is 0 when it is a common option. */
la_status la_audit_job_option(void *job, int opt, const char *name, const char *arg, int *handled /* OUT */);

/* Checks across options (la_cli_finish) once they are all given. */
la_status la_audit_job_finish(la_audit_job *j);

/* The arguments j->argv (argv[0] the command) without --shard and --out, as a shard keeps them for
 * `merge` to run the same audit with: into p->argv. LA_ENOMEM. */
la_status la_audit_job_record_args(const la_audit_job *j, la_partial *p);

/* Everything one audit computed, owned here (la_audit_state_free). report borrows from the rest. */
typedef struct la_audit_state {
    la_table *table;
    la_loader loader;
    uint32_t heldout;
    la_pairs pairs;
    la_exact_result exact;
    la_audit audit;
    la_tier_out near, semantic;
    la_grade_stats grades;
    la_backend_choice backend;
    la_exec exec;                 /* every backend op of the run goes through it, logged per stage */
    char backend_note[700];
    const char *param_names[5], *param_values[5];
    double copy_cosine, digits_cosine; /* the grades' cosines in force */
    const char *grade_cosines_source; /* where the model's own came from (la_model_grade_cosines), or
                                         NULL: it has none, the defaults applied */
    char copy_text[32], digits_text[32];
    const char *ran_on;           /* "gpu" when any stage ran on a device, else "cpu" */
    la_report_section sections[4];
    size_t nsections;
    la_report_timing timings[10 + LA_MAX_STAGES];
    char stage_names[LA_MAX_STAGES][48];
    size_t ntimings;
    la_baseline baseline;         /* --baseline: the earlier run's links */
    la_waivers waivers;           /* --waivers */
    la_delta delta;               /* what the two say about this run's links */
    la_report report;             /* filled once the decisions are made */
    la_progress *progress;        /* NULL when progress is off */
    size_t stage_links;           /* links when the current progress stage began */
    uint8_t *skip;                /* --shard: the seen rows of other shards */
    la_partial partial;           /* --shard: what this shard computed, for shard.bin */
} la_audit_state;

/* Run the audit the job describes into st (zeroed first; free with la_audit_state_free whatever
 * the result). warn: print the backend warnings to stderr (the command, unless --quiet). */
la_status la_audit_execute(const la_audit_job *j, int warn, la_audit_state *st /* OUT */);
void la_audit_state_free(la_audit_state *st);

/* Write every report file of an audit into dir, atomically (outdir.h); a shard writes shard.bin. */
la_status la_audit_write(const la_audit_state *st, const char *dir);

/* Write the manifest `name` of the rows whose outcome is `out` (la_report_manifest_rows) into od,
 * straight from the table's records and the input files (la_manifest_write): no buffer the size of
 * the file. */
la_status la_write_manifest(la_outdir *od, const char *name, const la_report *r, uint32_t out);

/* Fill the parts of a report every command shares: the command, the table, the files and
 * rejects of the loader, the exact-copy results (ex may be NULL), and the settings of c (NULL:
 * the defaults, no cutoff). Everything is borrowed: r lives no longer than its arguments. */
void la_report_init(la_report *r, const char *command, const la_table *t, const la_loader *L,
                    const la_exact_result *ex, const la_cli *c);

/* Exit code for a failed status: bad input or usage, or a device asked for that is not there, 2;
 * anything else 3. */
int la_exit_for(la_status s);

#endif /* LA_PIPELINE_H */
