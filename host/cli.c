/* cli.c - shared option handling and validated loading for audit and split (see cli.h). */
#include "cli.h"

#include "buf.h"
#include "input.h"
#include "json_strict.h"
#include "la_alloc.h"
#include "outdir.h"

#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

const char la_cli_common_help[] =
    "Inputs:\n"
    "  --part NAME=FILE        rows of FILE belong to partition NAME (repeatable)\n"
    "  --dev FILE, --test FILE shorthands for --part dev=FILE, --part test=FILE\n"
    "  FILE...                 files whose rows carry a split field (see --split-field)\n"
    "                          FILE may be a folder (every .jsonl, .json, .csv, .tsv file in it and\n"
    "                          its subfolders, .gz and .zst too, in name order) or a pattern such as\n"
    "                          'shards/*.jsonl' (quoted, or the shell expands it first)\n"
    "                          Formats: JSONL, CSV or TSV with a header row; .gz and .zst are read\n"
    "                          transparently; '-' reads standard input.\n"
    "  --format auto|jsonl|csv|tsv  input format (default auto: by extension, else by content)\n"
    "  --heldout NAME          the protected partition (default test); every other one is seen\n"
    "  --parts A,B,...         partition names allowed in split fields (default: train, demos, dev,\n"
    "                          validation, test, the held-out name and every --part name)\n"
    "Fields (dotted paths such as messages.0.content reach nested keys; PART=F sets a field for the\n"
    "rows of one partition, e.g. --text-field test=question, and '=F' names a field with '=' in it):\n"
    "  --id-field F            default id; a file without any id field gets ids FILE:LINE, FILE\n"
    "                          its path from the folder that holds every input\n"
    "  --text-field F          default text; repeat to join several fields with a newline (also per\n"
    "                          partition: --text-field test=question --text-field test=answer); a\n"
    "                          '*' segment takes every element: 'messages.*.content' joins a chat's\n"
    "                          turns with newlines (null and absent ones left out)\n"
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
    "  --quiet, -q             print nothing but errors (no summary, no progress)\n"
    "Limits (past one the run stops with exit 2 naming it; 0 turns it off; sizes take K, M, G):\n"
    "  --max-row-bytes SIZE    bytes of one record (default 1M; longer rows are rejects)\n"
    "  --max-input-bytes SIZE  bytes of one input after decompression (default 16G)\n"
    "  --max-ratio R           decompressed / stored bytes of a .gz or .zst input (default 200)\n"
    "  --max-rows N            records in one input (default 50000000)\n";

/* A byte count or row count: digits with an optional K, M, G or T (powers of 1024). */
la_status la_parse_size(const char *opt, const char *arg, uint64_t *out)
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
    for (size_t k = 0; k < c->npaths; k++) free(c->paths[k]);
    free(c->paths);
    free(c->fields_json);
}

void la_cli_fail(const char *what) { fprintf(stderr, "leakaudit: %s\n", what); }

/* Keep a copy of s with the options (folder listings, patterns and id names outlive them). */
static const char *keep(la_cli *c, const char *s, size_t n)
{
    if (c->npaths == c->cappaths) {
        size_t cap = c->cappaths ? 2 * c->cappaths : 64;
        char **v = la_realloc_n(c->paths, cap, sizeof *v);
        if (!v) return NULL;
        c->paths = v;
        c->cappaths = cap;
    }
    char *copy = strndup(s, n);
    if (copy) c->paths[c->npaths++] = copy;
    return copy;
}

static la_status add_one(la_cli *c, const char *part, const char *path)
{
    if (c->ninputs == LA_CLI_MAX_INPUTS) return la_error(LA_EINVAL, "too many input files (at most %d)", LA_CLI_MAX_INPUTS);
    c->inputs[c->ninputs].part = part;
    c->inputs[c->ninputs].path = path;
    c->inputs[c->ninputs].id_name = NULL;
    c->ninputs++;
    return LA_OK;
}

static int input_like(const char *name)
{
    char ext[16];
    la_input_format_ext(name, ext);
    return !strcmp(ext, "jsonl") || !strcmp(ext, "ndjson") || !strcmp(ext, "json") || !strcmp(ext, "csv") ||
           !strcmp(ext, "tsv") || !strcmp(ext, "tab");
}

/* What a file a folder holds is, when it is rows in a form leakaudit does not read (by its name):
 * a columnar table or a spreadsheet, or an input-like name under a packing the readers do not undo,
 * also under the .gz or .zst the readers do undo (train.parquet.gz); NULL for anything else (a
 * README, a licence, a script). */
static const char *unread_rows(const char *name)
{
    static const char *const undone[] = {".gz", ".zst", ".zstd"};
    for (size_t k = 0; k < sizeof undone / sizeof *undone; k++) {
        size_t n = strlen(name), m = strlen(undone[k]);
        if (n > m && !strcasecmp(name + n - m, undone[k])) {
            char inner[NAME_MAX + 1];
            snprintf(inner, sizeof inner, "%.*s", (int)(n - m), name);
            return unread_rows(inner);
        }
    }
    static const struct {
        const char *ext, *what;
        int packing; /* only around a name that would be an input: train.jsonl.xz, not notes.xz */
    } kinds[] = {
        {".parquet", "Parquet", 0}, {".arrow", "Arrow", 0}, {".feather", "Feather", 0}, {".avro", "Avro", 0},
        {".orc", "ORC", 0}, {".xlsx", "a spreadsheet", 0}, {".xls", "a spreadsheet", 0}, {".ods", "a spreadsheet", 0},
        {".zip", "a zip archive", 0}, {".7z", "a 7-Zip archive", 0}, {".xz", "xz-compressed", 1},
        {".bz2", "bzip2-compressed", 1}, {".lz4", "lz4-compressed", 1}, {".br", "brotli-compressed", 1},
    };
    size_t n = strlen(name);
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        size_t m = strlen(kinds[k].ext);
        if (n <= m || strcasecmp(name + n - m, kinds[k].ext)) continue;
        if (!kinds[k].packing) return kinds[k].what;
        char inner[NAME_MAX + 1];
        snprintf(inner, sizeof inner, "%.*s", (int)(n - m), name);
        return input_like(inner) ? kinds[k].what : NULL;
    }
    return NULL;
}

static int cmp_name(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* Every input-like file under dir (hidden entries skipped), in name order, folder by folder. */
static la_status add_folder(la_cli *c, const char *part, const char *dir, const char *given, int depth)
{
    if (depth > 32) return la_error(LA_EINVAL, "%s: folders nested deeper than 32 levels", given);
    DIR *d = opendir(dir);
    if (!d) return la_error(LA_EIO, "%s: cannot read the folder %s", given, dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    la_status s = LA_OK;
    for (struct dirent *e; s == LA_OK && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **v = la_realloc_n(names, cap, sizeof *v);
            if (!v) s = la_error(LA_ENOMEM, "out of memory");
            else names = v;
        }
        if (s == LA_OK && !(names[n++] = strdup(e->d_name))) s = la_error(LA_ENOMEM, "out of memory");
    }
    closedir(d);
    if (s == LA_OK && n > 1) qsort(names, n, sizeof *names, cmp_name);
    for (size_t k = 0; s == LA_OK && k < n; k++) {
        char full[PATH_MAX];
        int len = snprintf(full, sizeof full, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[k]);
        struct stat st;
        if (len < 0 || (size_t)len >= sizeof full) s = la_error(LA_EINVAL, "%s: a path in it is too long", given);
        else if (stat(full, &st) != 0) continue; /* a dangling link: nothing to read */
        else if (S_ISDIR(st.st_mode)) s = add_folder(c, part, full, given, depth + 1);
        else if (S_ISREG(st.st_mode) && input_like(names[k])) {
            const char *kept = keep(c, full, (size_t)len);
            s = kept ? add_one(c, part, kept) : la_error(LA_ENOMEM, "out of memory");
        } else if (S_ISREG(st.st_mode) && unread_rows(names[k])) {
            /* left out as the folder rule says, but said: la_cli_finish warns, and an empty folder's
             * error names it */
            if (!c->left_out++) {
                c->left_kind = unread_rows(names[k]);
                if (!(c->left_example = keep(c, full, (size_t)len))) s = la_error(LA_ENOMEM, "out of memory");
            }
        }
    }
    for (size_t k = 0; k < n; k++) free(names[k]);
    free(names);
    return s;
}

/* What to do about files left out of a folder (unread_rows). */
#define LEFT_OUT_HINT                                                                                        \
    ": convert them to JSON Lines, CSV or TSV (or decompress them), or give Parquet, Arrow and Feather files " \
    "to the Python package (README: From Python)"

/* One input as given: a file, a folder (every input-like file in it), or a pattern (glob(3)). */
static la_status add_input(la_cli *c, const char *part, const char *path)
{
    if (!path[0]) return la_error(LA_EINVAL, "empty file name");
    struct stat st;
    if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        size_t before = c->ninputs, left = c->left_out;
        LA_TRY(add_folder(c, part, path, path, 0));
        if (c->ninputs == before && c->left_out > left)
            return la_error(LA_EINVAL, "%s: the folder holds no .jsonl, .json, .csv or .tsv file (.gz and .zst "
                                       "included), only files leakaudit does not read, such as %s (%s)%s",
                            path, c->left_example, c->left_kind, LEFT_OUT_HINT);
        if (c->ninputs == before)
            return la_error(LA_EINVAL, "%s: the folder holds no .jsonl, .json, .csv or .tsv file (.gz and .zst "
                                       "included)", path);
        return LA_OK;
    }
    if (strpbrk(path, "*?[") && stat(path, &st) != 0) {
        glob_t g;
        int rc = glob(path, GLOB_ERR, NULL, &g);
        if (rc == GLOB_NOMATCH) return la_error(LA_EINVAL, "%s: no file matches the pattern", path);
        if (rc != 0) return la_error(LA_EIO, "%s: cannot expand the pattern", path);
        la_status s = LA_OK;
        for (size_t k = 0; s == LA_OK && k < g.gl_pathc; k++) {
            const char *kept = keep(c, g.gl_pathv[k], strlen(g.gl_pathv[k]));
            s = kept ? add_input(c, part, kept) : la_error(LA_ENOMEM, "out of memory");
        }
        globfree(&g);
        return s;
    }
    return add_one(c, part, path);
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

static const char *const k_field_names[] = {"id", "text", "split", "family", "date", "label", "score"};

/* The entry of part in c->part_fields, added when new; NULL when there are too many. */
static la_cli_part_fields *part_fields(la_cli *c, const char *part, size_t n)
{
    for (size_t k = 0; k < c->npart_fields; k++)
        if (strlen(c->part_fields[k].part) == n && !strncmp(c->part_fields[k].part, part, n)) return &c->part_fields[k];
    if (c->npart_fields == LA_CLI_MAX_PARTS) return NULL;
    const char *name = keep(c, part, n);
    if (!name) return NULL;
    la_cli_part_fields *f = &c->part_fields[c->npart_fields++];
    memset(f, 0, sizeof *f);
    f->part = name;
    return f;
}

/* --id-field, --text-field, ...: F for every partition, PART=F for one, =F for a name with '='. */
static la_status field_option(la_cli *c, int opt, const char *arg)
{
    const char *what = k_field_names[opt - LA_OPT_ID_FIELD];
    const char *eq = strchr(arg, '='), *field = arg;
    la_cli_part_fields *pf = NULL;
    if (eq == arg) field = arg + 1;
    else if (eq) {
        if (opt == LA_OPT_SPLIT_FIELD)
            return la_error(LA_EINVAL, "--split-field %s: the split field names the partition, so it cannot be set per "
                                       "partition (write '=%s' for a field named so)", arg, arg);
        char optname[32];
        snprintf(optname, sizeof optname, "--%s-field", what);
        LA_TRY(check_part_name(optname, arg, arg, (size_t)(eq - arg)));
        pf = part_fields(c, arg, (size_t)(eq - arg));
        if (!pf) return la_error(LA_EINVAL, "--%s-field %s: too many partitions", what, arg);
        field = eq + 1;
    }
    if (!field[0]) return la_error(LA_EINVAL, "--%s-field '%s': expected a field name", what, arg);
    const char **slot = NULL;
    switch (opt) {
    case LA_OPT_ID_FIELD: slot = pf ? &pf->id_field : &c->load.id_field; break;
    case LA_OPT_SPLIT_FIELD: slot = &c->load.split_field; break;
    case LA_OPT_FAMILY_FIELD: slot = pf ? &pf->family_field : &c->load.family_field; break;
    case LA_OPT_DATE_FIELD: slot = pf ? &pf->date_field : &c->load.date_field; break;
    case LA_OPT_LABEL_FIELD: slot = pf ? &pf->label_field : &c->load.label_field; break;
    case LA_OPT_SCORE_FIELD: slot = pf ? &pf->score_field : &c->load.score_field; break;
    case LA_OPT_TEXT_FIELD: {
        size_t *n = pf ? &pf->ntext : &c->load.ntext;
        const char **v = pf ? pf->text_fields : c->load.text_fields;
        if (!pf && !c->text_fields_set) *n = 0, c->text_fields_set = 1;
        if (*n == LA_MAX_TEXT_FIELDS) return la_error(LA_EINVAL, "--text-field: at most %d fields", LA_MAX_TEXT_FIELDS);
        v[(*n)++] = field;
        return LA_OK;
    }
    }
    *slot = field;
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
    case LA_OPT_SCORE_FIELD: return field_option(c, opt, arg);
    }
    switch (opt) {
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
            return la_error(LA_EINVAL, "--cutoff %s: expected a date YYYY-MM-DD that exists on the calendar%s", arg,
                            la_date_parse(arg, strlen(arg), 1, &c->cutoff) == LA_OK ? " (give the date part of the "
                                                                                     "timestamp)" : "");
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
    case 'q':
    case LA_OPT_QUIET: c->quiet = 1; return LA_OK;
    case LA_OPT_MAX_ROW_BYTES:
    case LA_OPT_MAX_INPUT_BYTES:
    case LA_OPT_MAX_ROWS: {
        static const char *const names[] = {"--max-row-bytes", "--max-input-bytes", "--max-ratio", "--max-rows"};
        uint64_t v = 0;
        LA_TRY(la_parse_size(names[opt - LA_OPT_MAX_ROW_BYTES], arg, &v));
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
    optind = 0; /* glibc: a full restart, so an earlier scan's ordering mode does not carry over */
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "-q", options, &longi)) != -1) {
        if (opt == LA_OPT_HELP) {
            printf(help, la_cli_common_help);
            return LA_EXIT_CLEAN;
        }
        la_status s;
        if (opt == '?' || opt == ':')
            s = la_error(LA_EINVAL, "unknown option or missing value: %s", argv[optind - 1]);
        else {
            int handled = 0;
            s = fn(ctx, opt, opt == 1 || opt == 'q' ? NULL : options[longi].name, optarg, &handled);
            if (!handled) s = la_cli_option(c, opt, optarg);
        }
        if (s != LA_OK) {
            fprintf(stderr, "leakaudit %s: %s (see leakaudit %s --help)\n", c->command, la_last_error(), c->command);
            return s == LA_ENOMEM ? LA_EXIT_INTERNAL : LA_EXIT_USAGE;
        }
    }
    return -1;
}

/* The folder of path, made absolute without resolving the file itself (a link keeps its name). */
static int abs_folder(const char *path, char out[PATH_MAX])
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    return realpath(dir, out) != NULL;
}

/* Generated ids name a file by its path from the deepest folder that holds every input, so
 * train/data.jsonl and test/data.jsonl give train/data.jsonl:1 and test/data.jsonl:1; inputs in
 * one folder keep their base names. Standard input and paths that cannot be resolved keep theirs. */
static la_status id_names(la_cli *c)
{
    char root[PATH_MAX] = "", dir[PATH_MAX];
    int have = 0;
    for (size_t k = 0; k < c->ninputs; k++) {
        if (!strcmp(c->inputs[k].path, "-") || !abs_folder(c->inputs[k].path, dir)) continue;
        if (!have) {
            snprintf(root, sizeof root, "%s", dir);
            have = 1;
            continue;
        }
        /* the common prefix, cut back to whole folder names */
        size_t n = 0;
        while (root[n] && root[n] == dir[n]) n++;
        if (!((root[n] == '\0' || root[n] == '/') && (dir[n] == '\0' || dir[n] == '/'))) {
            while (n > 0 && root[n - 1] != '/') n--;
            if (n > 1) n--; /* drop the slash, keep "/" itself */
        }
        root[n] = '\0';
    }
    if (!have) return LA_OK;
    size_t rn = strlen(root);
    for (size_t k = 0; k < c->ninputs; k++) {
        const char *path = c->inputs[k].path;
        if (!strcmp(path, "-") || !abs_folder(path, dir)) continue;
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        const char *rel = dir + rn;
        while (*rel == '/') rel++;
        char name[PATH_MAX];
        int len = snprintf(name, sizeof name, "%s%s%s", rel, *rel ? "/" : "", base);
        if (len < 0 || (size_t)len >= sizeof name) continue;
        if (!(c->inputs[k].id_name = keep(c, name, (size_t)len))) return la_error(LA_ENOMEM, "out of memory");
    }
    return LA_OK;
}

/* A JSON string or null. */
static void json_field(la_buf *b, const char *name, const char *value, int *first)
{
    la_buf_printf(b, "%s\"%s\": ", *first ? "" : ", ", name);
    la_buf_json_str(b, value);
    *first = 0;
}

static void json_texts(la_buf *b, const char *const *v, size_t n, int *first)
{
    la_buf_printf(b, "%s\"text\": [", *first ? "" : ", ");
    for (size_t k = 0; k < n; k++) {
        if (k) la_buf_puts(b, ", ");
        la_buf_json_str(b, v[k]);
    }
    la_buf_putc(b, ']');
    *first = 0;
}

/* report.json's parameters.fields: the fields every partition is read with, the input format, and
 * per partition the fields given for it alone. */
static la_status fields_json(la_cli *c)
{
    const la_load_opts *o = &c->load;
    la_buf b = {0};
    int first = 1;
    la_buf_putc(&b, '{');
    json_field(&b, "id", o->id_field, &first);
    json_texts(&b, o->text_fields, o->ntext, &first);
    json_field(&b, "split", o->split_field, &first);
    json_field(&b, "family", o->family_field, &first);
    json_field(&b, "date", o->date_field, &first);
    json_field(&b, "label", o->label_field, &first);
    json_field(&b, "score", o->score_field, &first);
    json_field(&b, "format", o->format == LA_FMT_AUTO ? "auto" : la_format_name(o->format), &first);
    la_buf_puts(&b, ", \"by_partition\": {");
    for (size_t k = 0; k < c->npart_fields; k++) {
        const la_cli_part_fields *f = &c->part_fields[k];
        la_buf_puts(&b, k ? ", " : "");
        la_buf_json_str(&b, f->part);
        la_buf_puts(&b, ": {");
        int pfirst = 1;
        if (f->id_field) json_field(&b, "id", f->id_field, &pfirst);
        if (f->ntext) json_texts(&b, f->text_fields, f->ntext, &pfirst);
        if (f->family_field) json_field(&b, "family", f->family_field, &pfirst);
        if (f->date_field) json_field(&b, "date", f->date_field, &pfirst);
        if (f->label_field) json_field(&b, "label", f->label_field, &pfirst);
        if (f->score_field) json_field(&b, "score", f->score_field, &pfirst);
        la_buf_putc(&b, '}');
    }
    la_buf_puts(&b, "}}");
    la_buf_putc(&b, '\0');
    if (b.failed) {
        la_buf_free(&b);
        return la_error(LA_ENOMEM, "out of memory");
    }
    free(c->fields_json);
    c->fields_json = b.p;
    return LA_OK;
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
    if (c->left_out && !c->quiet)
        fprintf(stderr, "leakaudit %s: warning: left out %zu file%s of the input folders holding rows it does not read, "
                        "such as %s (%s)%s\n",
                c->command, c->left_out, c->left_out == 1 ? "" : "s", c->left_example, c->left_kind, LEFT_OUT_HINT);
    size_t stdin_uses = 0;
    for (size_t k = 0; k < c->ninputs; k++) stdin_uses += !strcmp(c->inputs[k].path, "-");
    if (stdin_uses > 1) return la_error(LA_EINVAL, "standard input ('-') can be read only once");
    for (size_t k = 0; k < c->npart_fields; k++) {
        int given = 0;
        for (size_t i = 0; i < c->ninputs; i++) given |= c->inputs[i].part && !strcmp(c->inputs[i].part, c->part_fields[k].part);
        if (!given)
            return la_error(LA_EINVAL, "a field option names the partition '%s', which no --part %s=FILE (or --dev, --test) "
                                       "gives; write '=FIELD' for a field whose name holds '='",
                            c->part_fields[k].part, c->part_fields[k].part);
    }
    LA_TRY(id_names(c));
    LA_TRY(fields_json(c));
    const char *paths[LA_CLI_MAX_INPUTS + 32];
    size_t npaths = 0;
    for (size_t k = 0; k < c->ninputs; k++) paths[npaths++] = c->inputs[k].path;
    for (size_t k = 0; k < c->nextra && npaths < sizeof paths / sizeof *paths; k++) paths[npaths++] = c->extra_inputs[k];
    return c->out ? la_outdir_check(c->out, paths, npaths) : LA_OK; /* NULL: the library's, no folder yet */
}

la_status la_cli_load(la_cli *c, la_table *t, la_loader *L)
{
    c->load.threads = c->threads;
    la_loader_init(L, t, &c->load);
    /* partitions in command-line order, so indices do not depend on the data */
    for (size_t k = 0; k < c->ninputs; k++)
        if (c->inputs[k].part) {
            uint32_t idx;
            LA_TRY(la_table_part(t, c->inputs[k].part, &idx));
        }
    la_load_opts base = L->opts;
    for (size_t k = 0; k < c->ninputs; k++) {
        /* the fields given for this input's partition, over those for every partition */
        const la_cli_part_fields *f = NULL;
        for (size_t p = 0; c->inputs[k].part && p < c->npart_fields; p++)
            if (!strcmp(c->part_fields[p].part, c->inputs[k].part)) f = &c->part_fields[p];
        L->opts = base;
        if (f) {
            if (f->id_field) L->opts.id_field = f->id_field;
            if (f->family_field) L->opts.family_field = f->family_field;
            if (f->date_field) L->opts.date_field = f->date_field;
            if (f->label_field) L->opts.label_field = f->label_field;
            if (f->score_field) L->opts.score_field = f->score_field;
            if (f->ntext) {
                memcpy(L->opts.text_fields, f->text_fields, sizeof f->text_fields);
                L->opts.ntext = f->ntext;
            }
        }
        la_status s = la_load_file_as(L, c->inputs[k].path, c->inputs[k].part, c->inputs[k].id_name);
        L->opts = base;
        LA_TRY(s);
    }
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
