/*
 * tiers.h - the evidence tiers beyond exact/family/time as the audit pipeline runs them: options,
 * preparing their inputs (embeddings from .npy files, a JSON field or the built-in lexical
 * embedding), running them (their backend ops through the run's la_exec) and handing their
 * structured results to audit/report_tiers.c, which renders the report sections.
 */
#ifndef LA_TIERS_H
#define LA_TIERS_H

#include "buf.h"
#include "leakaudit.h"
#include "load.h"
#include "dispatch.h"
#include "near.h"
#include "progress.h"
#include "shard.h"

#define LA_MAX_EMB_FILES 16

typedef struct la_semantic_opts {
    int enabled;                 /* --embed none turns the tier off */
    int lexical;                 /* no embeddings given: the built-in lexical embedding */
    const char *emb_part[LA_MAX_EMB_FILES];   /* --embeddings PART=FILE.npy */
    const char *emb_path[LA_MAX_EMB_FILES];
    char *owned[LA_MAX_EMB_FILES];
    size_t nemb;
    const char *embedding_field; /* --embedding-field */
    double threshold;            /* NaN: the default for the embedding kind */
    double margin;               /* --semantic-margin: NaN the model's own (la_semantic_margin_for), 0 off */
    int method;
    unsigned topk;
    unsigned lexical_dim;
    int use_gpu;                 /* the encoder runs on the GPU (set by the pipeline from --backend) */
    la_exec *exec;               /* where the similarity tiles run (set by the pipeline; NULL: CPU) */
    la_progress *progress;       /* the encoder's progress, in tokens (set by the pipeline; NULL: none) */
    int model;                   /* --embed model (or --model): the built-in sentence encoder */
    int embed_set;               /* --embed was given: no default choice is made */
    const char *model_name;      /* --model NAME|DIR (default: LA_MODEL_DEFAULT) */
    int no_windows;              /* --semantic-windows off: one vector per row, cut at the window */
    const char *cache_dir;       /* --cache DIR: the encoder's vectors kept between runs (embed_cache.h) */
    char default_why[400];       /* why model_name was chosen for the rows (la_semantic_choose_model) */
    char vectors_model[256];     /* --embeddings: the model every file's origin (vec_origin.h) names,
                                    or "" (set by la_semantic_choose_model) */
    char vectors_weights[80];    /* ... and its weights hash */
    char vectors_note[700];      /* what the origins said, for the report ("" without --embeddings) */
    const uint8_t *skip;         /* a shard (set by the pipeline; NULL: none): flagged seen rows are
                                    neither embedded nor searched (shard.h) */
    la_partial *partial;         /* a shard: the structured result is kept here as well */
    size_t memory_limit;         /* --memory-limit in bytes (0: la_memory_default): bounds the seen
                                    vectors held at once when the tier streams (la_tier_semantic) */
} la_semantic_opts;

void la_semantic_opts_init(la_semantic_opts *o);

/* --memory-limit's default: half the memory the process may use (la_memory_usable: the physical
 * memory, or the cgroup's limit when lower). */
size_t la_memory_default(void);

/* When the built-in encoder runs and no model was named: the model for these rows (the
 * multilingual one when a row is not English and it is installed: la_model_default_for), set in
 * o->model_name with the reason in o->default_why. With --embeddings: the model that made the
 * vectors when every file has the origin file `leakaudit embed` writes (vec_origin.h) and they all
 * name one model, in o->vectors_model (its calibrated threshold, margin and grades then apply);
 * LA_EINPUT when two files name different models or weights, or an origin file is damaged. Call
 * it on a copy of the options, once the rows are read; every later call (threshold, embeddings,
 * the tier) then uses that model. LA_ENOMEM when out of memory. */
la_status la_semantic_choose_model(la_semantic_opts *o, const la_table *t);
void la_semantic_opts_free(la_semantic_opts *o);
/* Options: "embeddings", "embedding-field", "embed", "model", "semantic-threshold",
 * "semantic-method", "semantic-topk", "semantic-windows", "cache". Returns LA_EUNSUPPORTED for other names. */

/* The semantic getopt_long entries both commands take, all reporting option id `id`; audit adds
 * --semantic-method and --semantic-topk. */
#define LA_SEMANTIC_LONG_OPTIONS(id)                                                                      \
    {"embeddings", required_argument, 0, id}, {"embedding-field", required_argument, 0, id},             \
    {"embed", required_argument, 0, id}, {"semantic-threshold", required_argument, 0, id},               \
    {"model", required_argument, 0, id}, {"cache", required_argument, 0, id}
la_status la_semantic_option(la_semantic_opts *o, const char *name, const char *arg);

typedef struct la_near_opts_cli {
    int enabled;                 /* --near off turns the tier off */
    la_near_params p;            /* p.skip: a shard's flags (set by the pipeline) */
    la_partial *partial;         /* a shard: the structured result is kept here as well */
} la_near_opts_cli;

void la_near_opts_init(la_near_opts_cli *o);

/* The near tier's getopt_long entries, all reporting option id `id` (the name tells them apart).
 * --within is audit's alone. */
#define LA_NEAR_LONG_OPTIONS(id)                                                                           \
    {"near", required_argument, 0, id}, {"near-threshold", required_argument, 0, id},                     \
    {"containment-threshold", required_argument, 0, id}, {"shingle", required_argument, 0, id},           \
    {"shingle-size", required_argument, 0, id}, {"num-perm", required_argument, 0, id},                   \
    {"simhash-k", required_argument, 0, id}
/* Options: "near", "near-threshold", "containment-threshold", "within", "shingle", "shingle-size",
 * "num-perm", "simhash-k". Returns LA_EUNSUPPORTED for other names. */
la_status la_near_option(la_near_opts_cli *o, const char *name, const char *arg);

/* Output of one tier for the report. */
typedef struct la_tier_out {
    la_buf json;      /* findings.<name> */
    la_buf md;        /* report.md section */
    la_buf html;      /* report.html section, may be empty */
    la_buf extra;     /* an extra file (nearest.jsonl for semantic), may be empty */
    double seconds;
    int lexical_embedding; /* semantic: the vectors were the built-in lexical embedding (wording,
                              not meaning), so its links are graded on wording alone */
    const char *backend;   /* where the tier ran: "cpu" or "gpu" */
    char fallback[600];    /* why a GPU request ran on the CPU ("" when it did not) */
    char model_name[256];  /* semantic: the built-in encoder's model that made the vectors, or "" (the
                              grades take its calibrated values: la_model_grade_cosines) */
} la_tier_out;

void la_tier_out_free(la_tier_out *o);

/* The embedding of every row in table order (nrows x dim, unit rows or zero; caller frees): from
 * the .npy files (partitions without rows need none), the JSON field, or the lexical embedding.
 * *kind describes it for reports. */
la_status la_semantic_embeddings(const la_semantic_opts *o, const la_loader *L, const la_table *t, int threads,
                                 float **emb /* OUT */, size_t *dim /* OUT */, const char **kind /* OUT */);

/* The cosine threshold in force: --semantic-threshold, else the default for the embedding kind. */
double la_semantic_threshold_for(const la_semantic_opts *o);

/* The ratio margin in force (index/semantic.h; 0 off): --semantic-margin, else the model's
 * calibrated one (la_model_margin), else off; *source says which (static string). */
double la_semantic_margin_for(const la_semantic_opts *o, const char **source /* OUT */);

/* Run the semantic tier: pairs appended to `pairs`. */
la_status la_tier_semantic(const la_semantic_opts *o, const la_loader *L, const la_table *t, uint32_t heldout,
                           int threads, la_pairs *pairs, la_tier_out *out);

/* Run the near tier: cross-boundary pairs appended to `pairs`; with within, pairs inside one
 * partition go to out->extra as within_pairs.jsonl lines instead (they are not leaks). */
la_status la_tier_near(const la_near_opts_cli *o, const la_table *t, uint32_t heldout, int threads, la_pairs *pairs,
                       la_tier_out *out);

#endif /* LA_TIERS_H */
