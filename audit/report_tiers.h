/*
 * report_tiers.h - the report sections of the near and semantic tiers: the tiers (host/tier_*.c)
 * compute and fill these structures; the functions here turn them into findings.near /
 * findings.semantic JSON, report.md and report.html sections, within_pairs.jsonl and
 * nearest.jsonl. Pure rendering: no files, threads or devices.
 */
#ifndef LA_REPORT_TIERS_H
#define LA_REPORT_TIERS_H

#include "buf.h"
#include "leakaudit.h"

/* One backend stage of a tier as it ran (index/dispatch.h's la_stage, copied by host/). */
typedef struct la_report_stage {
    const char *name;        /* "near_signatures", "semantic_tiles", ... */
    const char *backend;     /* backend that ran it: "cpu", "cuda" */
    const char *fallback;    /* why it did not run on the chosen backend; "" when it did */
    size_t calls;
    double items, bytes;     /* documents (or entries, or held-out x seen rows) and input bytes */
} la_report_stage;

#define LA_REPORT_MAX_STAGES 12

typedef struct la_near_report {
    const char *backend;     /* "cpu" or "gpu": where the signatures ran */
    int char_shingles;       /* character (1) or word (0) n-grams */
    int shingle_size, num_perm, containment_min_shingles, simhash_k, within;
    double threshold, containment_threshold;
    int bands, rows;
    double expected_recall;
    size_t rows_signed, candidates_lsh, candidates_simhash, candidates_containment, candidates;
    size_t pairs;            /* across the boundary */
    const la_pair *within_pairs; /* pairs inside one partition (with within), borrowed */
    size_t nwithin;
    la_report_stage stages[LA_REPORT_MAX_STAGES];
    size_t nstages;
} la_near_report;

/* findings.near into json, the report.md section into md, within_pairs.jsonl lines into extra. */
la_status la_report_near(const la_table *t, const la_near_report *r, la_buf *json, la_buf *md, la_buf *extra);

/* A pair found through windows of long texts. */
typedef struct la_window_pair {
    uint32_t a, b;                     /* table rows (seen, held-out) */
    uint32_t a_begin, a_end, b_begin, b_end; /* bytes of the windows that matched */
    float cosine;
} la_window_pair;

typedef struct la_semantic_report {
    const char *kind;                  /* the embedding, described */
    const char *why;                   /* how it was chosen */
    int model;                         /* the built-in encoder ran */
    const char *model_name, *model_hash, *encoder_backend, *encoder_fallback;
    size_t model_window, window_tokens, texts_windowed;
    int no_windows;                    /* --semantic-windows off */
    /* --cache: the file (NULL: no cache), texts found and computed, why a file was ignored ("") */
    const char *cache_file, *cache_note;
    size_t cache_hits, cache_misses;
    int brought_in;                    /* vectors from --embeddings or --embedding-field */
    size_t dim;
    double threshold;
    const char *threshold_source;
    /* the ratio margin (index/semantic.h): 0 off; where the setting came from (or why it is off);
     * the held-out rows it scored and the links it made (pairs with margin set) */
    double margin, margin_lowest; /* margin_lowest: the least cosine it links */
    uint32_t margin_k;
    const char *margin_source;
    size_t margin_candidates, margin_links;
    const la_window_pair *window_pairs;
    size_t nwindow_pairs;
    const char *backend, *method;      /* "cpu"/"gpu"; "tiles", "faiss", "faiss-ivf" */
    size_t pairs, heldout_rows, seen_rows;
    /* every held-out row's nearest seen rows: row[i], then k entries of seen (UINT32_MAX past the
     * last) and cosine */
    size_t nnearest;
    uint32_t k;
    const uint32_t *nearest_row, *nearest_seen;
    const float *nearest_cosine;
    la_report_stage stages[LA_REPORT_MAX_STAGES];
    size_t nstages;
} la_semantic_report;

/* findings.semantic into json, report.md and report.html sections, nearest.jsonl into extra. */
la_status la_report_semantic(const la_table *t, const la_semantic_report *r, la_buf *json, la_buf *md, la_buf *html,
                             la_buf *extra);

#endif /* LA_REPORT_TIERS_H */
