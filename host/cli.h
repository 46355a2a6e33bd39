/*
 * cli.h - command-line options shared by the commands that read inputs (audit, split): fields,
 * formats, partitions, validation and output settings, and the validated load of every input.
 */
#ifndef LA_CLI_H
#define LA_CLI_H

#include "la_time.h"
#include "leakaudit.h"
#include "load.h"
#include "normalize.h"

#include <getopt.h>

#define LA_CLI_MAX_INPUTS 4096
#define LA_CLI_MAX_PARTS 64

/* Exit codes. */
enum { LA_EXIT_CLEAN = 0, LA_EXIT_LEAKS = 1, LA_EXIT_USAGE = 2, LA_EXIT_INTERNAL = 3 };

typedef struct la_cli_input {
    const char *part;   /* NULL: from the split field */
    const char *path;
    const char *id_name; /* what generated ids FILE:LINE name the file: its path from the inputs' common
                            folder (la_cli_finish), or NULL for its base name */
} la_cli_input;

/* Field options given for one partition (--text-field PART=FIELD and the like); NULL or 0: the
 * option for every partition holds. */
typedef struct la_cli_part_fields {
    const char *part;
    const char *id_field, *family_field, *date_field, *label_field, *score_field;
    const char *text_fields[LA_MAX_TEXT_FIELDS];
    size_t ntext;
} la_cli_part_fields;

typedef struct la_cli {
    const char *command;
    la_load_opts load;
    int text_fields_set;
    la_cli_input inputs[LA_CLI_MAX_INPUTS];
    size_t ninputs;
    const char *known[LA_CLI_MAX_PARTS];
    size_t nknown;
    int parts_given;                   /* --parts was given: no default names */
    char *owned[2 * LA_CLI_MAX_PARTS]; /* --part names and --parts lists, freed with the options */
    size_t nowned;
    char **paths;                      /* files found in folders and by patterns, and ids' file names */
    size_t npaths, cappaths;
    la_cli_part_fields part_fields[LA_CLI_MAX_PARTS];
    size_t npart_fields;
    char *fields_json;                 /* the fields in force, for report.json (la_cli_finish) */
    const char *heldout;
    const char *out;
    const char *const *extra_inputs; /* files a command reads besides the inputs (embeddings, keys) */
    size_t nextra;
    int reject_invalid;
    la_norm_mode norm;
    int32_t cutoff;
    la_gate gate;              /* --fail-on */
    int threads;
    int quiet;
    size_t left_out;            /* files in input folders left out that hold rows leakaudit cannot read */
    const char *left_example;   /* the first of them, and what it is */
    const char *left_kind;
} la_cli;

/* The long options every input-reading command accepts; ids are LA_OPT_* below. */
enum {
    LA_OPT_PART = 1000, LA_OPT_DEV, LA_OPT_TEST, LA_OPT_HELDOUT, LA_OPT_PARTS, LA_OPT_ID_FIELD, LA_OPT_TEXT_FIELD,
    LA_OPT_SPLIT_FIELD, LA_OPT_FAMILY_FIELD, LA_OPT_DATE_FIELD, LA_OPT_LABEL_FIELD, LA_OPT_SCORE_FIELD,
    LA_OPT_DATE_FORMAT, LA_OPT_ON_INVALID, LA_OPT_FORMAT, LA_OPT_NORMALIZE, LA_OPT_CUTOFF, LA_OPT_OUT,
    LA_OPT_FAIL_ON, LA_OPT_THREADS, LA_OPT_QUIET, LA_OPT_HELP,
    LA_OPT_MAX_ROW_BYTES, LA_OPT_MAX_INPUT_BYTES, LA_OPT_MAX_RATIO, LA_OPT_MAX_ROWS,
    LA_OPT_COMMAND_BASE = 2000   /* command-specific options start here */
};

#define LA_CLI_COMMON_OPTIONS                                                                                   \
    {"part", required_argument, 0, LA_OPT_PART}, {"dev", required_argument, 0, LA_OPT_DEV},                   \
    {"test", required_argument, 0, LA_OPT_TEST}, {"heldout", required_argument, 0, LA_OPT_HELDOUT},           \
    {"parts", required_argument, 0, LA_OPT_PARTS}, {"id-field", required_argument, 0, LA_OPT_ID_FIELD},       \
    {"text-field", required_argument, 0, LA_OPT_TEXT_FIELD},                                                   \
    {"split-field", required_argument, 0, LA_OPT_SPLIT_FIELD},                                                 \
    {"family-field", required_argument, 0, LA_OPT_FAMILY_FIELD},                                               \
    {"date-field", required_argument, 0, LA_OPT_DATE_FIELD},                                                   \
    {"label-field", required_argument, 0, LA_OPT_LABEL_FIELD},                                                 \
    {"score-field", required_argument, 0, LA_OPT_SCORE_FIELD},                                                 \
    {"date-format", required_argument, 0, LA_OPT_DATE_FORMAT},                                                 \
    {"on-invalid", required_argument, 0, LA_OPT_ON_INVALID}, {"format", required_argument, 0, LA_OPT_FORMAT},  \
    {"normalize", required_argument, 0, LA_OPT_NORMALIZE}, {"cutoff", required_argument, 0, LA_OPT_CUTOFF},    \
    {"out", required_argument, 0, LA_OPT_OUT}, {"fail-on", required_argument, 0, LA_OPT_FAIL_ON},              \
    {"threads", required_argument, 0, LA_OPT_THREADS}, {"quiet", no_argument, 0, LA_OPT_QUIET},               \
    {"help", no_argument, 0, LA_OPT_HELP},                                                                     \
    {"max-row-bytes", required_argument, 0, LA_OPT_MAX_ROW_BYTES},                                             \
    {"max-input-bytes", required_argument, 0, LA_OPT_MAX_INPUT_BYTES},                                         \
    {"max-ratio", required_argument, 0, LA_OPT_MAX_RATIO}, {"max-rows", required_argument, 0, LA_OPT_MAX_ROWS}

/* Help text for the common options. */
extern const char la_cli_common_help[];

void la_cli_init(la_cli *c, const char *command);
void la_cli_free(la_cli *c);

/* Handle one common option (or a positional file when opt == 1). Returns LA_OK, or LA_EINVAL with a
 * message in la_last_error (also when opt is not a common option). */
la_status la_cli_option(la_cli *c, int opt, const char *arg);

/* A command's own options: *handled = 1 when the option is the command's (then any status but
 * LA_OK is a usage error with the message in la_last_error), 0 to pass it on to la_cli_option. */
typedef la_status (*la_cli_command_fn)(void *ctx, int opt, const char *name, const char *arg, int *handled /* OUT */);

/* Parse argv with getopt_long: --help prints help (a format with one %s for the common options'
 * help), the command's options go to fn, the rest to la_cli_option. Returns -1 to go on, or the
 * exit code to return now (0 after --help, 2 after a usage error, with the message printed). */
int la_cli_parse(la_cli *c, int argc, char **argv, const struct option *options, const char *help,
                 la_cli_command_fn fn, void *ctx);

/* Finish parsing: defaults that depend on other options, checks across options, and the check that
 * --out may be replaced and holds none of the inputs (see outdir.h), before any work is done. */
la_status la_cli_finish(la_cli *c);

/* Load every input. On invalid rows with --on-invalid fail, prints the first 20 problems and a count
 * to stderr and returns LA_EINPUT. */
la_status la_cli_load(la_cli *c, la_table *t, la_loader *L);

/* Print "leakaudit: <message>" to stderr. */
void la_cli_fail(const char *what);

/* A whole number with an optional K, M, G or T suffix (powers of 1024), for option `opt`; LA_EINVAL
 * with the option named otherwise. */
la_status la_parse_size(const char *opt, const char *arg, uint64_t *out /* OUT */);

#endif /* LA_CLI_H */
