/*
 * cmd_split.c - `leakaudit split`: make a leak-free split by the chronological family rule or the
 * three-set rule (split_job.c, the same run as la_split_run) and write the assignments, the
 * manifests and a report.
 */
#include "commands.h"
#include "pipeline.h"
#include "split_job.h"

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
    "  --cache DIR             keep the encoder's vectors in DIR between runs (audit --help)\n"
    "  --semantic-threshold X  cosine that joins two rows (default 0.82; 0.50 for lexical)\n"
    "  --semantic-margin R|off below the threshold (down to 0.07 under it), join a row and its\n"
    "                          nearest other row when their cosine over the mean of both rows' 16 best\n"
    "                          cosines is at least R: a translation stands out, a template's rows do\n"
    "                          not (default 1.065 with multilingual-e5-small, else off; audit --help)\n"
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

/* Print the failure of a run: the exit code for it. */
static int failed(la_status s)
{
    fprintf(stderr, "leakaudit split: %s\n", la_last_error()[0] ? la_last_error() : la_strerror(s));
    return la_exit_for(s);
}

/* The summary on stdout unless quiet, the warnings about thin sets on stderr; the exit code. */
static int report_done(const la_split_state *st, const la_cli *c)
{
    la_buf b = {0};
    if (!c->quiet) {
        la_split_summary(st, c->out, &b);
        fwrite(b.p, 1, b.n, stdout);
    }
    b.n = 0;
    int short_set = la_split_short(st, c->quiet, 1, &b);
    fwrite(b.p, 1, b.n, stderr);
    la_buf_free(&b);
    return short_set ? 1 : LA_EXIT_CLEAN;
}

int la_cmd_split(int argc, char **argv)
{
    la_split_job job;
    la_split_job_init(&job);
    job.cli.out = "leakaudit-split";
    int rc = la_cli_parse(&job.cli, argc, argv, la_split_options, k_help, la_split_job_option, &job);
    if (rc >= 0) {
        la_split_job_free(&job);
        return rc;
    }
    la_status s = la_split_job_finish(&job);
    if (s != LA_OK) {
        fprintf(stderr, "leakaudit split: %s (see leakaudit split --help)\n", la_last_error());
        la_split_job_free(&job);
        return s == LA_ENOMEM ? LA_EXIT_INTERNAL : LA_EXIT_USAGE;
    }
    la_split_state st;
    s = la_split_execute(&job, &st);
    if (s == LA_OK) s = la_split_write(&st, job.cli.out);
    rc = s == LA_OK ? report_done(&st, &job.cli) : failed(s);
    la_split_state_free(&st);
    la_split_job_free(&job);
    return rc;
}
