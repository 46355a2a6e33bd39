/*
 * shard.h - an audit spread over processes: `audit --shard I/N` computes the content tiers (near
 * and semantic copies) for a deterministic slice of the seen rows against every held-out row and
 * writes what it found as a partial result (shard.bin); `leakaudit merge` reads the N partials,
 * checks that they belong together, and hands the pipeline (pipeline.c) their union, from which it
 * writes the report an unsharded run writes.
 *
 * Why the union is the unsharded result: every content link joins one held-out row and one seen
 * row, and each seen row belongs to exactly one shard. What a tier computes from all rows (the
 * shingle frequencies the containment samples come from, the lexical embedding's word weights,
 * the window size and the model chosen from the rows) every shard computes from all rows too; the
 * search itself is exact, and its ties go to the lower row index, which a slice keeps in order.
 *
 * Not for: choosing what runs in a shard (pipeline.c), reading the inputs (load.h).
 */
#ifndef LA_SHARD_H
#define LA_SHARD_H

#include "leakaudit.h"
#include "report_tiers.h"

#include <stddef.h>
#include <stdint.h>

#define LA_SHARD_FILE "shard.bin"
#define LA_SHARD_MAX 4096

typedef struct la_shard {
    uint32_t index, count;  /* count 0: not sharded */
} la_shard;

/* --shard I/N (0 <= I < N), N (the index from SLURM_ARRAY_TASK_ID, less SLURM_ARRAY_TASK_MIN when
 * set, or from Kubernetes' JOB_COMPLETION_INDEX), or auto (index and count from SLURM_ARRAY_TASK_ID
 * and SLURM_ARRAY_TASK_COUNT). LA_EINVAL with the reason. */
la_status la_shard_parse(const char *arg, la_shard *out /* OUT */);

/* The shard of a row: a hash of its partition name and id, so it does not depend on input order. */
uint32_t la_shard_of(const char *part, const char *id, uint32_t count);

/* One flag per row (caller frees): 1 for a seen row outside shard sh. */
la_status la_shard_skip(const la_table *t, uint32_t heldout, la_shard sh, uint8_t **skip /* OUT */);

/* What a shard computed, or the union of all of them (la_partial_merge). Strings and arrays owned. */
typedef struct la_partial {
    la_shard shard;
    char **argv;               /* the audit's arguments, without --shard and --out */
    size_t argc;
    char *cwd;                 /* where the shard ran: relative input paths point from there */
    uint64_t nrows;            /* rows of the table */
    char **file_path, **file_hash;  /* every input file read, and its BLAKE2b-256 (hex) */
    size_t nfiles;
    char *ran_on, *backend_note, *device;
    la_pairs pairs;            /* the content links of this shard's seen rows */

    int near_on;
    la_near_report near;       /* within_pairs unused; stage names owned */
    size_t near_signed_heldout;
    char *near_fallback;

    int sem_on;
    la_semantic_report sem;    /* strings and arrays owned (cast away const when freed) */
    size_t sem_windowed_heldout;
    int sem_lexical;
    char *sem_fallback;
} la_partial;

void la_partial_init(la_partial *p);
void la_partial_free(la_partial *p);

/* Keep a tier's structured result in p (deep copies): near_signed_heldout is the held-out share of
 * r->rows_signed, windowed_heldout that of r->texts_windowed. */
la_status la_partial_keep_near(la_partial *p, const la_near_report *r, size_t near_signed_heldout, const char *fallback);
la_status la_partial_keep_semantic(la_partial *p, const la_semantic_report *r, size_t windowed_heldout, int lexical,
                                   const char *fallback);

/* Serialize p (with a BLAKE2b checksum) into b, or read it back from the file at path (LA_EINPUT
 * with the path and what is wrong: not a shard file, another format version, damaged). */
la_status la_partial_encode(const la_partial *p, la_buf *b);
la_status la_partial_read(const char *path, la_partial *p /* OUT */);

/* Check that v[0..n) are the shards 0..N-1 of one audit, each once, with the same arguments and
 * inputs, and combine them into out: links concatenated, counters summed, held-out counts taken
 * once, every held-out row's nearest seen rows the best over the shards, the stages' calls, items
 * and bytes summed. LA_EINPUT naming the folder that does not fit. dirs name v's folders. */
la_status la_partial_merge(const la_partial *v, const char *const *dirs, size_t n, la_partial *out /* OUT */);

#endif /* LA_SHARD_H */
