/*
 * split_job.h - one split from options to decisions, for the `split` command and for the library
 * entry point (la_split_run in include/leakaudit.h): the options of `leakaudit split`, the groups
 * (families, exact, near and semantic copies), the chronological or three-set rule, and the files
 * and summary the command writes.
 *
 * Not for: parsing a command line or deciding an exit code. The command does that (cmd_split.c);
 * the library hands the state to its caller.
 */
#ifndef LA_SPLIT_JOB_H
#define LA_SPLIT_JOB_H

#include "backend.h"
#include "buf.h"
#include "cli.h"
#include "dispatch.h"
#include "exact.h"
#include "report.h"
#include "split.h"
#include "threeset.h"
#include "tiers.h"

/* The options of one split: the common input options and split's own. */
typedef struct la_split_job {
    la_cli cli;
    la_near_opts_cli near;
    la_semantic_opts semantic;
    int three_set;               /* --three-set; else the chronological rule (--cutoff) */
    la_threeset_params ts;
    const char *key_file;        /* --fingerprint-key */
    double min_share;            /* --min-share: dev or test below it makes the exit code 1 */
    la_backend_req backend;
    /* filled by la_split_job_finish */
    const char *extra[LA_MAX_EMB_FILES + 1]; /* files read besides the inputs */
    unsigned char key[32];       /* the fingerprint key, when key_file is given */
    la_backend_choice choice;
} la_split_job;

/* The long options of `leakaudit split` (getopt_long table, ends with a zero entry). */
extern const struct option la_split_options[];

/* Defaults of the command; the caller sets cli.out (the command's default folder, or NULL). */
void la_split_job_init(la_split_job *j);
void la_split_job_free(la_split_job *j);

/* An option of split's own (la_cli_command_fn): *handled is 0 when it is a common option. */
la_status la_split_job_option(void *job, int opt, const char *name, const char *arg, int *handled /* OUT */);

/* Checks across options once they are all given (one rule, the key file, the backend): every
 * input's rows are placed by the rule, not by a split field. */
la_status la_split_job_finish(la_split_job *j);

/* Everything one split decided, owned here (la_split_state_free). report borrows from the rest
 * and from the job, which must outlive the state. */
typedef struct la_split_state {
    la_table *table;
    la_loader loader;
    la_exec exec;
    la_pairs links;              /* what joined the groups */
    la_exact_result exact;
    uint32_t *rep;               /* per row, its group's representative */
    la_audit audit;              /* only out: per row, demos, dev, test or LA_OUT_QUARANTINE */
    la_split chrono;             /* the chronological rule's groups */
    la_threeset ts;              /* the three-set rule's sets */
    uint32_t demos, dev, test;   /* partition indices (demos only under --three-set) */
    const la_split_job *job;
    char fp[LA_SET_COUNT][65];   /* the three sets' fingerprints */
    char note[1200];
    la_report_timing timings[1];
    la_report report;
    /* what joined the groups, for the reports */
    size_t links_exact, links_near, links_semantic, links_margin;
    char sem_kind[300], sem_model[300];
    double sem_threshold, sem_margin;   /* sem_margin 0: off */
    const char *sem_threshold_source, *sem_margin_source;
    la_buf grouping_json, grouping_md;
} la_split_state;

/* Run the split the finished job describes into st (zeroed first; free with la_split_state_free
 * whatever the result). Writes no file and prints nothing but the first problems of a refused
 * input (la_cli_load). */
la_status la_split_execute(const la_split_job *j, la_split_state *st /* OUT */);
void la_split_state_free(la_split_state *st);

/* Write every file of a split into dir, atomically (outdir.h). */
la_status la_split_write(const la_split_state *st, const char *dir);

/* The two lines `leakaudit split` prints when it is done, naming dir as where the outputs are;
 * with dir NULL or empty, what names the folder is left out (the chronological rule's second line,
 * the three-set rule's manifest path). */
void la_split_summary(const la_split_state *st, const char *dir, la_buf *b);

/* Rows placed in each set, indexed by LA_SET_* (demos stays 0 under the chronological rule). */
void la_split_counts(const la_split_state *st, size_t rows[LA_SET_COUNT] /* OUT */);

/* Whether dev or test holds less than --min-share of the rows placed (the exit code 1). Into
 * warnings (may be NULL), one line each, the sets under 5% or under --min-share; quiet leaves out
 * those that do not fail. written: the outputs are already written (the line says so). */
int la_split_short(const la_split_state *st, int quiet, int written, la_buf *warnings);

#endif /* LA_SPLIT_JOB_H */
