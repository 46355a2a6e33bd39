/*
 * cmd_audit.c - `leakaudit audit`: read the partitions, find every link across the held-out
 * boundary, decide every row's outcome and write the reports. Exit 0 clean, 1 leaks, 2 bad input
 * or usage, 3 internal error.
 */
#include "commands.h"
#include "outdir.h"
#include "parallel.h"
#include "pipeline.h"

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
    "  --progress auto|always|never|json  progress on stderr, stage by stage (default auto: on a\n"
    "                          terminal only; json: one object per line, for batch logs)\n"
    "Nightly runs (README: Nightly audits):\n"
    "  --baseline DIR          an earlier run's output folder: every link is new or known against\n"
    "                          its pairs.jsonl (same row ids and, where it wrote them, the same\n"
    "                          text hashes), and its links that are gone are listed as resolved\n"
    "  --fail-on-new           only links new since --baseline (and rows newly on the wrong side of\n"
    "                          the cutoff) make the exit code 1\n"
    "  --cache DIR             keep the sentence encoder's vectors in DIR (made if missing), keyed by\n"
    "                          text, model and settings: a later run computes only new texts, with\n"
    "                          the same results; hits and misses in report.json\n"
    "  --waivers FILE          accepted links (JSONL or CSV: heldout_id, seen_id, optional kind,\n"
    "                          reason, accepted_by, expires YYYY-MM-DD): listed, kept out of the gate\n"
    "                          through their expiry date; expired and stale waivers are reported\n"
    "  --today YYYY-MM-DD      the day waivers are checked against (default: the local date)\n"
    "Batch clusters (README: Shards):\n"
    "  --shard I/N             compute the near and semantic links of shard I of N (0-based) of the\n"
    "                          seen rows against every held-out row, and write --out/shard.bin;\n"
    "                          leakaudit merge then writes the unsharded run's reports. --shard N\n"
    "                          takes I from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX; --shard\n"
    "                          auto takes both from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT\n"
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
    "                          order (repeat for every partition); FILE.npy.json from\n"
    "                          leakaudit embed names their model, whose threshold, margin and\n"
    "                          grades then apply\n"
    "  --embedding-field NAME  vectors stored in the rows as a JSON array of numbers\n"
    "  --embed model|lexical|none  model: the built-in sentence encoder (default when a model is\n"
    "                          installed: see leakaudit models); lexical: the built-in TF-IDF of\n"
    "                          wording (default otherwise); none turns the semantic tier off\n"
    "  --model NAME|DIR        encoder model: an installed name or a sentence-transformers folder\n"
    "                          (default all-MiniLM-L6-v2, or multilingual-e5-small when a row is\n"
    "                          not English and it is installed); implies --embed model\n"
    "  --semantic-windows on|off  texts longer than the model window as overlapping sentence-aligned\n"
    "                          windows (default on) or cut at the window\n"
    "  --semantic-threshold X  cosine threshold (default 0.82 for model embeddings, 0.50 lexical)\n"
    "  --semantic-margin R|off  below the threshold, link a held-out row to its nearest seen row\n"
    "                          when their cosine is R times the mean of both rows' 16 best cosines\n"
    "                          (ratio margin: finds translations; default 1.065 with\n"
    "                          multilingual-e5-small, off otherwise)\n"
    "  --semantic-method auto|tiles|faiss|faiss-ivf  search method (default auto: exact tiles)\n"
    "  --semantic-topk K       nearest seen rows kept per held-out row in nearest.jsonl (default 1)\n"
    "  --memory-limit SIZE     bounds the seen vectors held at once: the built-in embeddings are\n"
    "                          computed and searched in batches of at most SIZE/16 (256M at most;\n"
    "                          default SIZE: half the memory of the machine or its cgroup); same\n"
    "                          results at any SIZE of 16M or more\n"
    "  --help                  this text\n"
    "\n"
    "Writes to --out: report.json, report.md, report.html (one self-contained page), report.junit.xml\n"
    "(a test case per kind, for CI), pairs.jsonl, clusters.jsonl, assignments.jsonl,\n"
    "<partition>.jsonl for each partition (the clean manifests), quarantine.jsonl, rejects.jsonl,\n"
    "and nearest.jsonl (semantic) and within_pairs.jsonl (--within) when those run.\n"
    "Exit codes: 0 no leaks (among --fail-on kinds), 1 leaks found, 2 bad input or usage, 3 internal error.\n";

int la_audit_command_run(la_audit_job *job, const char *command)
{
    la_audit_state st;
    int rc;
    /* with a second thread, the report this one replaces gives up its cached pages while the audit
     * runs, and is deleted while the audit frees its memory */
    int helpers = la_parallel_threads(job->cli.threads) > 1;
    if (helpers && job->cli.out && !job->shard.count) la_outdir_release_previous(job->cli.out);
    la_outdir_defer_removal(helpers);
    la_status s = la_audit_execute(job, !job->cli.quiet, &st);
    if (s == LA_OK) s = la_audit_write(&st, job->cli.out);
    if (s == LA_OK && job->shard.count) {
        const la_row *rows = la_table_rows_const(st.table);
        size_t mine = 0;
        for (size_t i = 0; i < la_table_nrows(st.table); i++) mine += rows[i].part != st.heldout && !st.skip[i];
        if (!job->cli.quiet)
            printf("leakaudit audit: shard %u of %u: %zu content links of its %zu seen rows in %s/%s (leakaudit "
                   "merge combines the %u shards into the audit's reports)\n",
                   job->shard.index, job->shard.count, st.partial.pairs.n, mine, job->cli.out, LA_SHARD_FILE,
                   job->shard.count);
        rc = LA_EXIT_CLEAN;
    } else if (s == LA_OK) {
        if (!job->cli.quiet) {
            la_buf b = {0};
            la_report_summary(&st.report, &st.audit, job->cli.out, &b);
            fwrite(b.p, 1, b.n, stdout);
            la_buf_free(&b);
        }
        rc = st.report.exit_code;
    } else {
        fprintf(stderr, "leakaudit %s: %s\n", command, la_last_error()[0] ? la_last_error() : la_strerror(s));
        rc = la_exit_for(s);
    }
    la_audit_state_free(&st);
    la_outdir_settle();
    la_outdir_defer_removal(0);
    return rc;
}

int la_cmd_audit(int argc, char **argv)
{
    la_audit_job job;
    la_audit_job_init(&job);
    job.argc = argc;
    job.argv = argv;
    int rc = la_cli_parse(&job.cli, argc, argv, la_audit_options, k_help, la_audit_job_option, &job);
    if (rc >= 0) {
        la_audit_job_free(&job);
        return rc;
    }
    la_status s = la_audit_job_finish(&job);
    if (s != LA_OK) {
        fprintf(stderr, "leakaudit audit: %s (see leakaudit audit --help)\n", la_last_error());
        la_audit_job_free(&job);
        return s == LA_ENOMEM ? LA_EXIT_INTERNAL : LA_EXIT_USAGE;
    }
    rc = la_audit_command_run(&job, "audit");
    la_audit_job_free(&job);
    return rc;
}
