/* cli.c - shared option handling and validated loading for audit and split (see cli.h). */
#include "cli.h"

#include "json_strict.h"
#include "outdir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

const char la_cli_common_help[] =
    "Inputs:\n"
    "  --part NAME=FILE        rows of FILE belong to partition NAME (repeatable)\n"
    "  --dev FILE, --test FILE shorthands for --part dev=FILE, --part test=FILE\n"
    "  FILE...                 files whose rows carry a split field (see --split-field)\n"
    "                          Formats: JSONL, CSV or TSV with a header row; .gz and .zst are read\n"
    "                          transparently; '-' reads standard input.\n"
    "  --format auto|jsonl|csv|tsv  input format (default auto: by extension, else by content)\n"
    "  --heldout NAME          the protected partition (default test); every other one is seen\n"
    "  --parts A,B,...         partition names allowed in split fields (default: train, demos, dev,\n"
    "                          validation, test, the held-out name and every --part name)\n"
    "Fields (dotted paths such as messages.0.content reach nested keys):\n"
    "  --id-field F            default id; a file without any id field gets ids FILE:LINE\n"
    "  --text-field F          default text; repeat to join several fields with a newline\n"
    "  --split-field F         default split\n"
    "  --family-field F        default family\n"
    "  --date-field F          default available_on (canonical YYYY-MM-DD)\n"
    "  --label-field F         default label\n"
    "  --score-field F         default score (per-case result, 0/1 or a number in [0,1])\n"
    "  --date-format canonical|iso8601  iso8601 also accepts a timestamp and uses its date part\n"
    "Validation and output:\n"
    "  --on-invalid fail|reject  fail (default): any invalid row stops the run with exit 2 and\n"
    "                          nothing written; reject: invalid rows go to rejects.jsonl\n"
    "  --cutoff YYYY-MM-DD     date cutoff, inclusive on the held-out (test) side\n"
    "  --out DIR               output directory (default leakaudit-report), written atomically\n"
    "  --threads N             worker threads (default 0: the CPUs this process may use, affinity mask\n"
    "                          and cgroup CPU quota counted); output does not depend on it\n"
    "  --quiet                 print nothing but errors\n"
    "Limits (past one the run stops with exit 2 naming it; 0 turns it off; sizes take K, M, G):\n"
    "  --max-row-bytes SIZE    bytes of one record (default 1M; longer rows are rejects)\n"
    "  --max-input-bytes SIZE  bytes of one input after decompression (default 16G)\n"
    "  --max-ratio R           decompressed / stored bytes of a .gz or .zst input (default 200)\n"
    "  --max-rows N            records in one input (default 50000000)\n";

/* A byte count or row count: digits with an optional K, M, G or T (powers of 1024). */
static la_status parse_count(const char *opt, const char *arg, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = arg;
    if (*p < '0' || *p > '9') return la_error(LA_EINVAL, "%s %s: expected a whole number (sizes may end in K, M or G)", opt, arg);
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10) return la_error(LA_EINVAL, "%s %s: too large", opt, arg);
        v = v * 10 + (uint64_t)(*p - '0');
    }
    int shift = *p == 'K' || *p == 'k' ? 10 : *p == 'M' || *p == 'm' ? 20 : *p == 'G' || *p == 'g' ? 30 : *p == 'T' || *p == 't' ? 40 : 0;
    if (shift) p++;
    if (*p) return la_error(LA_EINVAL, "%s %s: expected a whole number (sizes may end in K, M or G)", opt, arg);
    if (shift && v > (UINT64_MAX >> shift)) return la_error(LA_EINVAL, "%s %s: too large", opt, arg);
    *out = v << shift;
    return LA_OK;
}

void la_cli_init(la_cli *c, const char *command)
{
    memset(c, 0, sizeof *c);
    c->command = command;
    la_load_opts_default(&c->load);
    c->heldout = "test";
    c->out = "leakaudit-report";
    c->cutoff = LA_NO_DATE;
    la_gate_default(&c->gate);
    c->norm = LA_NORM_NFKC;
}

void la_cli_free(la_cli *c)
{
    for (size_t k = 0; k < c->nowned; k++) free(c->owned[k]);
}

void la_cli_fail(const char *what) { fprintf(stderr, "leakaudit: %s\n", what); }

static la_status add_input(la_cli *c, const char *part, const char *path)
{
    if (c->ninputs == LA_CLI_MAX_INPUTS) return la_error(LA_EINVAL, "too many input files (at most %d)", LA_CLI_MAX_INPUTS);
    if (!path[0]) return la_error(LA_EINVAL, "empty file name");
    c->inputs[c->ninputs].part = part;
    c->inputs[c->ninputs].path = path;
    c->ninputs++;
    return LA_OK;
}

/* Names whose manifest NAME.jsonl would be a file the reports already use, or an outcome. They are
 * compared ignoring case, since case-insensitive file systems would still let them collide. */
static const char *const k_reserved_parts[] = {"report",  "pairs",        "assignments", "clusters", "quarantine",
                                               "rejects", "rejected",     "nearest",     "within_pairs",
                                               "manifest"};

/* LA_OK when s[0..n) can name a partition, else LA_EINVAL with "OPT ARG: why" in la_last_error. */
static la_status check_part_name(const char *opt, const char *arg, const char *s, size_t n)
{
    int ok = n > 0 && n <= 64;
    for (size_t i = 0; ok && i < n; i++) {
        char ch = s[i];
        ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_';
    }
    if (!ok)
        return la_error(LA_EINVAL, "%s %s: expected a partition name of 1 to 64 letters, digits, - and _", opt, arg);
    for (size_t k = 0; k < sizeof k_reserved_parts / sizeof *k_reserved_parts; k++)
        if (strlen(k_reserved_parts[k]) == n && !strncasecmp(s, k_reserved_parts[k], n))
            return la_error(LA_EINVAL,
                            "%s %s: the partition name '%.*s' is reserved (its manifest would replace a report file); "
                            "reserved: report, pairs, assignments, clusters, quarantine, rejects, rejected, nearest, "
                            "within_pairs, manifest",
                            opt, arg, (int)n, s);
    return LA_OK;
}

la_status la_cli_option(la_cli *c, int opt, const char *arg)
{
    switch (opt) {
    case 1: return add_input(c, NULL, arg);
    case LA_OPT_PART: {
        const char *eq = strchr(arg, '=');
        if (!eq) return la_error(LA_EINVAL, "--part %s: expected NAME=FILE", arg);
        LA_TRY(check_part_name("--part", arg, arg, (size_t)(eq - arg)));
        /* the name must outlive parsing: keep it with the known names */
        if (c->nknown == LA_CLI_MAX_PARTS || c->nowned == sizeof c->owned / sizeof *c->owned)
            return la_error(LA_EINVAL, "too many partitions");
        char *name = strndup(arg, (size_t)(eq - arg));
        if (!name) return la_error(LA_ENOMEM, "out of memory");
        c->known[c->nknown++] = name;
        c->owned[c->nowned++] = name;
        return add_input(c, name, eq + 1);
    }
    case LA_OPT_DEV: return add_input(c, "dev", arg);
    case LA_OPT_TEST: return add_input(c, "test", arg);
    case LA_OPT_HELDOUT:
        LA_TRY(check_part_name("--heldout", arg, arg, strlen(arg)));
        c->heldout = arg;
        return LA_OK;
    case LA_OPT_PARTS: {
        /* repeated --parts add up; every copy stays alive as long as known[] points into it */
        if (c->nowned == sizeof c->owned / sizeof *c->owned) return la_error(LA_EINVAL, "--parts: given too often");
        char *copy = strdup(arg);
        if (!copy) return la_error(LA_ENOMEM, "out of memory");
        c->owned[c->nowned++] = copy;
        c->parts_given = 1;
        char *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            LA_TRY(check_part_name("--parts", tok, tok, strlen(tok)));
            if (c->nknown == LA_CLI_MAX_PARTS) return la_error(LA_EINVAL, "--parts: too many partitions");
            c->known[c->nknown++] = tok;
        }
        return LA_OK;
    }
    case LA_OPT_ID_FIELD:
    case LA_OPT_TEXT_FIELD:
    case LA_OPT_SPLIT_FIELD:
    case LA_OPT_FAMILY_FIELD:
    case LA_OPT_DATE_FIELD:
    case LA_OPT_LABEL_FIELD:
    case LA_OPT_SCORE_FIELD:
        if (!arg[0]) {
            static const char *const names[] = {"id", "text", "split", "family", "date", "label", "score"};
            return la_error(LA_EINVAL, "--%s-field '': expected a field name", names[opt - LA_OPT_ID_FIELD]);
        }
        break;
    }
    switch (opt) {
    case LA_OPT_ID_FIELD: c->load.id_field = arg; return LA_OK;
    case LA_OPT_TEXT_FIELD:
        if (!c->text_fields_set) c->load.ntext = 0, c->text_fields_set = 1;
        if (c->load.ntext == LA_MAX_TEXT_FIELDS) return la_error(LA_EINVAL, "--text-field: at most %d fields", LA_MAX_TEXT_FIELDS);
        c->load.text_fields[c->load.ntext++] = arg;
        return LA_OK;
    case LA_OPT_SPLIT_FIELD: c->load.split_field = arg; return LA_OK;
    case LA_OPT_FAMILY_FIELD: c->load.family_field = arg; return LA_OK;
    case LA_OPT_DATE_FIELD: c->load.date_field = arg; return LA_OK;
    case LA_OPT_LABEL_FIELD: c->load.label_field = arg; return LA_OK;
    case LA_OPT_SCORE_FIELD: c->load.score_field = arg; return LA_OK;
    case LA_OPT_DATE_FORMAT:
        if (!strcmp(arg, "canonical")) c->load.allow_timestamp = 0;
        else if (!strcmp(arg, "iso8601")) c->load.allow_timestamp = 1;
        else return la_error(LA_EINVAL, "--date-format %s: expected canonical or iso8601", arg);
        return LA_OK;
    case LA_OPT_ON_INVALID:
        if (!strcmp(arg, "fail")) c->reject_invalid = 0;
        else if (!strcmp(arg, "reject")) c->reject_invalid = 1;
        else return la_error(LA_EINVAL, "--on-invalid %s: expected fail or reject", arg);
        return LA_OK;
    case LA_OPT_FORMAT: return la_format_parse(arg, &c->load.format);
    case LA_OPT_NORMALIZE: return la_norm_mode_parse(arg, &c->norm);
    case LA_OPT_CUTOFF:
        if (la_date_parse(arg, strlen(arg), 0, &c->cutoff) != LA_OK)
            return la_error(LA_EINVAL, "--cutoff %s: expected a date YYYY-MM-DD that exists on the calendar", arg);
        return LA_OK;
    case LA_OPT_OUT: c->out = arg; return LA_OK;
    case LA_OPT_FAIL_ON: {
        return la_gate_parse(arg, &c->gate);
    }
    case LA_OPT_THREADS: {
        char *end;
        long v = strtol(arg, &end, 10);
        if (*end || v < 0 || v > 256) return la_error(LA_EINVAL, "--threads %s: expected a number from 0 to 256", arg);
        c->threads = (int)v;
        return LA_OK;
    }
    case LA_OPT_QUIET: c->quiet = 1; return LA_OK;
    case LA_OPT_MAX_ROW_BYTES:
    case LA_OPT_MAX_INPUT_BYTES:
    case LA_OPT_MAX_ROWS: {
        static const char *const names[] = {"--max-row-bytes", "--max-input-bytes", "--max-ratio", "--max-rows"};
        uint64_t v = 0;
        LA_TRY(parse_count(names[opt - LA_OPT_MAX_ROW_BYTES], arg, &v));
        if (v > SIZE_MAX) return la_error(LA_EINVAL, "%s %s: too large", names[opt - LA_OPT_MAX_ROW_BYTES], arg);
        if (opt == LA_OPT_MAX_ROW_BYTES) c->load.limits.max_row_bytes = (size_t)v;
        else if (opt == LA_OPT_MAX_ROWS) c->load.limits.max_rows = (size_t)v;
        else c->load.limits.max_input_bytes = v;
        return LA_OK;
    }
    case LA_OPT_MAX_RATIO: {
        size_t n = strlen(arg);
        double v = n && la_json_number_len(arg, n) == n ? strtod(arg, NULL) : -1;
        if (!(v == 0 || v >= 1)) return la_error(LA_EINVAL, "--max-ratio %s: expected a number of at least 1, or 0 (no limit)", arg);
        c->load.limits.max_ratio = v;
        return LA_OK;
    }
    }
    return la_error(LA_EINVAL, "option %d is not an option of leakaudit %s", opt, c->command);
}

int la_cli_parse(la_cli *c, int argc, char **argv, const struct option *options, const char *help,
                 la_cli_command_fn fn, void *ctx)
{
    int opt, longi = 0;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "-", options, &longi)) != -1) {
        if (opt == LA_OPT_HELP) {
            printf(help, la_cli_common_help);
            return LA_EXIT_CLEAN;
        }
        la_status s;
        if (opt == '?' || opt == ':')
            s = la_error(LA_EINVAL, "unknown option or missing value: %s", argv[optind - 1]);
        else {
            int handled = 0;
            s = fn(ctx, opt, opt == 1 ? NULL : options[longi].name, optarg, &handled);
            if (!handled) s = la_cli_option(c, opt, optarg);
        }
        if (s != LA_OK) {
            fprintf(stderr, "leakaudit %s: %s (see leakaudit %s --help)\n", c->command, la_last_error(), c->command);
            return s == LA_ENOMEM ? LA_EXIT_INTERNAL : LA_EXIT_USAGE;
        }
    }
    return -1;
}

la_status la_cli_finish(la_cli *c)
{
    static const char *const defaults[] = {"train", "demos", "dev", "validation", "test"};
    int explicit_parts = c->parts_given;
    if (!explicit_parts)
        for (size_t k = 0; k < sizeof defaults / sizeof *defaults && c->nknown < LA_CLI_MAX_PARTS; k++)
            c->known[c->nknown++] = defaults[k];
    int have = 0;
    for (size_t k = 0; k < c->nknown; k++)
        if (!strcmp(c->known[k], c->heldout)) have = 1;
    if (!have && c->nknown < LA_CLI_MAX_PARTS) c->known[c->nknown++] = c->heldout;
    c->load.known_parts = c->known;
    c->load.nknown = c->nknown;
    if (c->ninputs == 0) return la_error(LA_EINVAL, "no input files (give --dev FILE --test FILE, --part NAME=FILE or FILE...)");
    size_t stdin_uses = 0;
    for (size_t k = 0; k < c->ninputs; k++) stdin_uses += !strcmp(c->inputs[k].path, "-");
    if (stdin_uses > 1) return la_error(LA_EINVAL, "standard input ('-') can be read only once");
    const char *paths[LA_CLI_MAX_INPUTS + 32];
    size_t npaths = 0;
    for (size_t k = 0; k < c->ninputs; k++) paths[npaths++] = c->inputs[k].path;
    for (size_t k = 0; k < c->nextra && npaths < sizeof paths / sizeof *paths; k++) paths[npaths++] = c->extra_inputs[k];
    return c->out ? la_outdir_check(c->out, paths, npaths) : LA_OK; /* NULL: the library's, no folder yet */
}

la_status la_cli_load(la_cli *c, la_table *t, la_loader *L)
{
    la_loader_init(L, t, &c->load);
    /* partitions in command-line order, so indices do not depend on the data */
    for (size_t k = 0; k < c->ninputs; k++)
        if (c->inputs[k].part) {
            uint32_t idx;
            LA_TRY(la_table_part(t, c->inputs[k].part, &idx));
        }
    for (size_t k = 0; k < c->ninputs; k++) LA_TRY(la_load_file(L, c->inputs[k].path, c->inputs[k].part));
    if (L->nrejects && !c->reject_invalid) {
        size_t shown = 0, total = 0;
        for (size_t r = 0; r < L->nrejects; r++)
            for (size_t k = 0; k < L->rejects[r].nreasons; k++, total++)
                if (shown < 20) {
                    char *m = la_reject_message(L, &L->rejects[r], k);
                    fprintf(stderr, "leakaudit: %s\n", m ? m : "out of memory");
                    free(m);
                    shown++;
                }
        if (total > shown) fprintf(stderr, "leakaudit: ... and %zu more problems\n", total - shown);
        return la_error(LA_EINPUT, "%zu invalid rows in the input; nothing written (use --on-invalid reject to set them "
                                   "aside in rejects.jsonl and go on)", L->nrejects);
    }
    return LA_OK;
}
