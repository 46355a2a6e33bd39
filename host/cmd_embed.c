/*
 * cmd_embed.c - `leakaudit embed FILE... --out X.npy`: sentence vectors of every record's text with
 * the built-in encoder, one float32 row per record in input order, for --embeddings later or for
 * any other tool, and beside them X.npy.json, the model that made them (vec_origin.h). Inputs: JSONL,
 * CSV or TSV (the text fields, default "text", read as audit reads them: la_record_text), or plain
 * text files (.txt: one text per line).
 */
#include "cli.h"
#include "la_alloc.h"
#include "commands.h"
#include "input.h"
#include "load.h"
#include "model.h"
#include "npy.h"
#include "progress.h"
#include "records.h"
#include "vec_origin.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char k_help[] =
    "Usage: leakaudit embed FILE... --out X.npy [options]\n"
    "\n"
    "Embeds the text of every record with the built-in sentence encoder and writes the unit vectors\n"
    "as a float32 .npy matrix, one row per record in input order (files one after another): the\n"
    "vectors `audit --embeddings PART=X.npy` computes itself with --embed model. Beside it, X.npy.json\n"
    "names the model and holds a hash of the vectors: audit then applies that model's calibrated\n"
    "threshold, margin and grades, names it in the report, and refuses vectors of two models.\n"
    "\n"
    "  --out X.npy          output file (required; X.npy.json is written beside it)\n"
    "  --text-field F       the text field of JSONL/CSV/TSV records (default text); as audit reads\n"
    "                       it: repeat to join several with a newline, dotted paths, '*' segments\n"
    "  --format auto|jsonl|csv|tsv|txt  input format (default auto; .txt files: one text per line)\n"
    "  --model NAME|DIR     installed model name or a model folder (default " LA_MODEL_DEFAULT "; when a\n"
    "                       text is not English a note names " LA_MODEL_MULTILINGUAL ", which audit\n"
    "                       chooses by itself then)\n"
    "  --threads N          worker threads (default 0: all cores)\n"
    "  --batch N            sequences per encoder batch (default 128; texts are sorted by length)\n"
    "  --progress auto|always|never|json  progress on stderr (default auto: on a terminal only)\n"
    "  --quiet, -q          print nothing but errors (no note, no summary, no progress)\n"
    "\n"
    "Exit 0 on success, 2 on bad input or usage (a missing field names the file and line), 3 internal.\n";

typedef struct texts {
    char **v;
    size_t *len;
    size_t n, cap;
    const char *fields[LA_MAX_TEXT_FIELDS];
    size_t nfields;
    const char *path;
    la_status err;
} texts;

/* Keep text s[0..n) (taken over when own, else copied). */
static la_status push_text(texts *t, char *s, size_t n, int own)
{
    if (t->n == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 1024;
        char **v = realloc(t->v, nc * sizeof *v);
        if (v) t->v = v;
        size_t *l = realloc(t->len, nc * sizeof *l);
        if (l) t->len = l;
        if (!v || !l) {
            if (own) free(s);
            return la_error(LA_ENOMEM, "out of memory");
        }
        t->cap = nc;
    }
    if (!(t->v[t->n] = own ? s : la_strndup(s, n))) return la_error(LA_ENOMEM, "out of memory");
    t->len[t->n++] = n;
    return LA_OK;
}

static la_status push(texts *t, const char *s, size_t n) { return push_text(t, (char *)s, n, 0); }

static la_status on_record(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                           const char *perr)
{
    texts *t = ctx;
    (void)raw, (void)rawlen;
    if (!rec) return la_error(LA_EINPUT, "%s:%u: %s", t->path, line, perr ? perr : "cannot parse the record");
    /* the record as JSON text (a CSV row's too), read as audit reads a row's text */
    size_t n;
    const char *json = json_object_to_json_string_length(rec, JSON_C_TO_STRING_PLAIN, &n);
    if (!json) return la_error(LA_ENOMEM, "out of memory");
    char *text;
    size_t len;
    la_status s = la_record_text(json, n, t->fields, t->nfields, &text, &len);
    if (s == LA_EINPUT) {
        char why[700];
        snprintf(why, sizeof why, "%s", la_last_error());
        return la_error(LA_EINPUT, "%s:%u: %s", t->path, line, why);
    }
    return s == LA_OK ? push_text(t, text, len, 1) : s;
}

static la_status read_txt(texts *t, const la_input *in)
{
    const char *p = in->data, *e = in->data + in->len;
    while (p < e) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *q = nl ? nl : e;
        size_t n = (size_t)(q - p);
        if (n && p[n - 1] == '\r') n--;
        LA_TRY(push(t, p, n));
        p = q + 1;
    }
    return LA_OK;
}

static void encoding_begins(void *ctx, size_t total) { la_progress_begin(ctx, "encoding", total, "tokens", 0); }
static void encoding_adds(void *ctx, size_t n) { la_progress_add(ctx, n); }

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

int la_cmd_embed(int argc, char **argv)
{
    static const struct option opts[] = {{"out", required_argument, 0, 'o'},       {"text-field", required_argument, 0, 'f'},
                                         {"format", required_argument, 0, 'F'},    {"model", required_argument, 0, 'm'},
                                         {"threads", required_argument, 0, 't'},   {"help", no_argument, 0, 'h'},
                                         {"batch", required_argument, 0, 'b'},     {"quiet", no_argument, 0, 'q'},
                                         {"progress", required_argument, 0, 'P'},
                                         {0, 0, 0, 0}};
    const char *out = NULL, *model = NULL, *fmt_s = "auto";
    texts t = {0};
    int threads = 0, quiet = 0, c;
    long batch = 0;
    la_progress_mode pmode = LA_PROGRESS_AUTO;
    optind = 1;
    while ((c = getopt_long(argc, argv, "q", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'f':
            if (t.nfields == LA_MAX_TEXT_FIELDS) {
                fprintf(stderr, "leakaudit embed: --text-field: at most %d fields\n", LA_MAX_TEXT_FIELDS);
                return LA_EXIT_USAGE;
            }
            t.fields[t.nfields++] = optarg;
            break;
        case 'F': fmt_s = optarg; break;
        case 'm': model = optarg; break;
        case 't': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || !*optarg || v < 0 || v > 4096) {
                fprintf(stderr, "leakaudit embed: --threads %s: expected 0 (all cores) to 4096\n", optarg);
                return LA_EXIT_USAGE;
            }
            threads = (int)v;
            break;
        }
        case 'b':
            batch = atol(optarg);
            if (batch < 1 || batch > 4096) {
                fprintf(stderr, "leakaudit embed: --batch %s: expected 1 to 4096 sequences\n", optarg);
                return LA_EXIT_USAGE;
            }
            break;
        case 'q': quiet = 1; break;
        case 'P':
            if (la_progress_parse(optarg, &pmode) != LA_OK) {
                fprintf(stderr, "leakaudit embed: %s\n", la_last_error());
                return LA_EXIT_USAGE;
            }
            break;
        case 'h': fputs(k_help, stdout); return 0;
        default: fprintf(stderr, "leakaudit embed: see leakaudit embed --help\n"); return LA_EXIT_USAGE;
        }
    }
    if (!t.nfields) t.fields[t.nfields++] = "text";
    if (!out || optind >= argc) {
        fprintf(stderr, "leakaudit embed: %s (see leakaudit embed --help)\n",
                !out ? "--out X.npy is required" : "no input files");
        return LA_EXIT_USAGE;
    }
    int txt = !strcmp(fmt_s, "txt");
    la_format fmt = LA_FMT_AUTO;
    if (!txt && la_format_parse(fmt_s, &fmt) != LA_OK) {
        fprintf(stderr, "leakaudit embed: --format %s: expected auto, jsonl, csv, tsv or txt\n", fmt_s);
        return LA_EXIT_USAGE;
    }
    char dir[PATH_MAX], why[400] = "";
    la_model *m = NULL;
    la_status s = model ? la_model_resolve(model, dir, sizeof dir) : LA_OK;
    la_limits lim;
    la_limits_default(&lim);
    la_progress *prog = la_progress_new(pmode, quiet, "leakaudit embed:", stderr);
    la_progress_begin(prog, "read", (size_t)(argc - optind), "files", 0);
    for (int i = optind; s == LA_OK && i < argc; i++) {
        la_input in;
        if ((s = la_input_read(argv[i], &lim, &in)) != LA_OK) break;
        t.path = argv[i];
        char ext[16];
        la_input_format_ext(argv[i], ext);
        if (txt || (fmt == LA_FMT_AUTO && (!strcmp(ext, "txt") || ends_with(argv[i], ".txt"))))
            s = read_txt(&t, &in);
        else
            s = la_records_each(&in, argv[i], fmt == LA_FMT_AUTO ? la_format_detect(argv[i], &in) : fmt, &lim, on_record, &t);
        la_input_free(&in);
        la_progress_add(prog, 1);
    }
    if (s == LA_OK) {
        char note[48];
        snprintf(note, sizeof note, "%zu texts", t.n);
        la_progress_end(prog, note);
    }
    if (s == LA_OK && !model) {
        /* A fixed default, so that files embedded one by one for the same audit share a model;
         * the audit's own choice for non-English rows is named instead. */
        if (strcmp(la_model_default_for((const char *const *)t.v, t.len, t.n, NULL, NULL, why, sizeof why),
                   LA_MODEL_DEFAULT) && !quiet)
            fprintf(stderr, "leakaudit embed: note: %s; embed with --model %s for vectors by meaning across "
                    "languages (audit chooses it by itself), and embed every file of one audit with the same model\n",
                    why, LA_MODEL_MULTILINGUAL);
        model = LA_MODEL_DEFAULT;
        s = la_model_resolve(model, dir, sizeof dir);
    }
    double t0 = la_now();
    if (s == LA_OK) s = la_model_open(dir, &m);
    float *vec = NULL;
    double t1 = la_now();
    if (s == LA_OK) {
        la_model_set_batch(m, (size_t)batch);
        if (prog) la_model_set_progress(m, encoding_begins, encoding_adds, prog);
        vec = malloc((t.n * la_model_dim(m) + 1) * sizeof *vec);
        s = vec ? la_model_embed(m, (const char *const *)t.v, t.len, t.n, threads, vec)
                : la_error(LA_ENOMEM, "out of memory");
    }
    double t2 = la_now();
    if (s == LA_OK) la_progress_begin(prog, "write", 0, "files", 0);
    if (s == LA_OK) s = la_npy_write(out, vec, t.n, la_model_dim(m));
    /* the model beside the vectors, so that audit --embeddings knows them as its own */
    if (s == LA_OK) s = la_vec_origin_write(out, la_model_name(m), la_model_weights_hash(m), vec, t.n, la_model_dim(m));
    la_progress_end(prog, s == LA_OK ? out : NULL);
    la_progress_free(prog);
    int rc = 0;
    if (s == LA_OK && !quiet) {
        fprintf(stderr, "leakaudit embed: %zu texts, %s (%zu dimensions, weights %s), %.2f s (model load %.2f s, "
                "encoding %.2f s: %.1f texts/s) -> %s\n", t.n, la_model_name(m), la_model_dim(m),
                la_model_weights_hash(m), la_now() - t0, t1 - t0, t2 - t1, (double)t.n / (t2 - t1), out);
    } else if (s != LA_OK) {
        fprintf(stderr, "leakaudit embed: %s\n", la_last_error());
        rc = s == LA_EINPUT || s == LA_EINVAL || s == LA_EIO ? LA_EXIT_USAGE : LA_EXIT_INTERNAL;
    }
    for (size_t i = 0; i < t.n; i++) free(t.v[i]);
    free(t.v);
    free(t.len);
    free(vec);
    la_model_free(m);
    return rc;
}
