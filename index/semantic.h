/*
 * semantic.h - the `semantic` evidence tier: cosine similarity of embeddings across the boundary.
 *
 * One entry point for the pipeline, la_semantic_find: given one L2-normalized vector per table row,
 * it returns every (seen, held-out) pair with cosine >= threshold and, for every held-out row, its
 * nearest seen rows. Three ways to get there, chosen by la_semantic_params.method:
 *   tiles      exact: blocked SGEMM on OpenBLAS with fused thresholding (kernels/simtile.c)
 *   faiss      exact: FAISS IndexFlatIP range search + k-NN search, through the FAISS C API
 *   faiss-ivf  approximate: FAISS IVF (inverted lists over k-means cells) for very large inputs
 * Both exact paths re-score candidates in a fixed order (kernels/simtile_core.h), so they report the
 * same pair set and the same cosines. `auto` takes the tiles, and the IVF index only past the size
 * LA_SEMANTIC_APPROX_ABOVE (see docs/semantic.md for the measurements behind it).
 *
 * Also here: the checks for vectors that come from outside (la_vec_check_normalize, used by the
 * .npy and JSON readers) and the built-in lexical embedding of a table (la_semantic_embed_lexical).
 */
#ifndef LA_SEMANTIC_H
#define LA_SEMANTIC_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch.h"
#include "leakaudit.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    LA_SEMANTIC_AUTO = 0,
    LA_SEMANTIC_TILES = 1,
    LA_SEMANTIC_FAISS = 2,
    LA_SEMANTIC_FAISS_IVF = 3
};

/* Default thresholds, calibrated in bench/semantic (docs/semantic.md): for model embeddings
 * (all-MiniLM-L6-v2 on GSM8K rephrases) and for the built-in lexical embedding. */
#define LA_SEMANTIC_THRESHOLD_MODEL 0.82
#define LA_SEMANTIC_THRESHOLD_LEXICAL 0.50

/* auto switches to the approximate index (IVF, nprobe 16) when n_heldout * n_seen * dim exceeds
 * this: about 10k x 8M x 384, where IVF overtakes the exact tiles by extrapolation of the
 * 100k x 10k measurements (docs/semantic.md). */
#define LA_SEMANTIC_APPROX_ABOVE 3e13

/* The ratio margin (docs/semantic.md, "Translations: the ratio margin"): a held-out row's best seen
 * row is linked below the threshold when its cosine stands out from both rows' neighbourhoods,
 *   margin = cosine / ((mean of the held-out row's K best cosines over seen rows
 *                       + mean of the seen row's K best cosines over held-out rows) / 2) >= margin,
 * with K = LA_SEMANTIC_MARGIN_K, and the cosine at least the threshold minus
 * LA_SEMANTIC_MARGIN_BELOW. */
#define LA_SEMANTIC_MARGIN_K 16
#define LA_SEMANTIC_MARGIN_BELOW 0.07

/* "no neighbour" in la_semantic_nearest.seen */
#define LA_SEMANTIC_NONE UINT32_MAX

typedef struct la_semantic_params {
    double threshold;     /* report pairs with cosine >= threshold; in (0, 1] */
    uint32_t topk;        /* nearest seen rows kept per held-out row, >= 1 */
    int method;           /* LA_SEMANTIC_AUTO, _TILES, _FAISS, _FAISS_IVF */
    int threads;          /* 0 = the OpenMP default */
    uint32_t ivf_nlist;   /* IVF cells; 0 = about 4 * sqrt(n_seen) */
    uint32_t ivf_nprobe;  /* IVF cells visited per query; 0 = default */
    double approx_above;  /* see LA_SEMANTIC_APPROX_ABOVE; <= 0 never goes approximate */
    double margin;        /* ratio margin for links below the threshold (see above); 0 = off */
    uint32_t margin_k;    /* K of the margin; LA_SEMANTIC_MARGIN_K by default */
    double approx_max_bytes; /* auto takes the approximate index only when the seen vectors take at
                                most this many bytes (it holds them all); <= 0: no bound */
    la_exec *exec;        /* where the tiles run (stage "semantic_tiles", dispatch.h); NULL = the CPU
                             reference. On a device backend, auto takes the exact tiles at every
                             size. A device failure falls back as the exec says. Borrowed. */
} la_semantic_params;

/* threshold LA_SEMANTIC_THRESHOLD_MODEL, topk 1, no margin, auto, all threads, CPU. */
void la_semantic_params_default(la_semantic_params *p);

/* For every held-out row (in table order) its k nearest seen rows, best first. */
typedef struct la_semantic_nearest {
    size_t n;          /* held-out rows */
    uint32_t k;
    uint32_t *row;     /* n: table index of each held-out row, ascending */
    uint32_t *seen;    /* n * k: table index of the seen row, LA_SEMANTIC_NONE past the last */
    float *cosine;     /* n * k: its cosine, NaN past the last */
} la_semantic_nearest;

void la_semantic_nearest_free(la_semantic_nearest *nn); /* frees the arrays; NULL-safe */

typedef struct la_semantic_stats {
    const char *method;   /* "tiles", "faiss", "faiss-ivf" (static string) */
    size_t n_heldout, n_seen, dim, n_pairs;
    size_t rescored;      /* candidates within the re-score margin of the threshold (tiles) */
    size_t margin_candidates; /* held-out rows whose best seen row was scored by the margin */
    size_t margin_links;  /* of them, linked by it (pairs with margin set) */
    double margin_seconds; /* wall time of the margin's pass (part of seconds) */
    double seconds;       /* wall time of the search */
    double gflops;        /* 2 * n_heldout * n_seen * dim / seconds / 1e9 (exact paths) */
    const char *backend;  /* "gpu" when the tiles ran on a device backend, else "cpu" (static string) */
    char fallback[600];   /* why the tiles fell back to the CPU ("" when they did not) */
} la_semantic_stats;

/*
 * Find semantic links across the boundary of partition heldout_part.
 *   t: the table; rows of heldout_part are held out, all other rows are seen.
 *   emb: la_table_nrows(t) x dim floats, row-major, in table row order, each row L2-normalized
 *        (la_vec_check_normalize) or zero (matches nothing). Borrowed for the call.
 *   out: pairs appended, a = seen row, b = held-out row, kinds LA_KIND_SEMANTIC, cosine set (and
 *        margin, for the links the margin adds below the threshold when p->margin > 0).
 *        Appended in (b, a) order; run la_pairs_normalize to merge with other evidence.
 *   nearest: filled (caller frees with la_semantic_nearest_free); may be NULL.
 *   stats: may be NULL.
 * Thread safety: uses p->threads threads itself; do not run two at once (FAISS and OpenBLAS
 * share the process's OpenMP settings). Returns LA_EINVAL (bad parameters), LA_EUNSUPPORTED (a
 * FAISS method in a build without FAISS), LA_EINTERNAL (a FAISS failure, message attached),
 * LA_ENOMEM. On failure out keeps its earlier pairs and nearest is left empty.
 */
la_status la_semantic_find(const la_table *t, uint32_t heldout_part, const float *emb, size_t dim,
                           const la_semantic_params *p, la_pairs *out /* OUT: appended */,
                           la_semantic_nearest *nearest /* OUT */,
                           la_semantic_stats *stats /* OUT */);

/* The method p asks for, with auto decided for nq held-out and ns seen rows of dim dimensions:
 * the exact tiles, or the IVF index past p->approx_above on the CPU when FAISS is built in. */
int la_semantic_method_for(const la_semantic_params *p, size_t nq, size_t ns, size_t dim);

/* The same without copying the vectors: emb's rows are reordered in place (held-out rows first),
 * so the caller must not read emb afterwards except to free it. Same pairs, lists and stats. */
la_status la_semantic_find_inplace(const la_table *t, uint32_t heldout_part, float *emb, size_t dim,
                                   const la_semantic_params *p, la_pairs *out /* OUT: appended */,
                                   la_semantic_nearest *nearest /* OUT */,
                                   la_semantic_stats *stats /* OUT */);

/*
 * The exact tiles with the seen side given in batches, so that only the held-out vectors and one
 * batch of seen vectors are in memory at once (the tier embeds the seen rows batch by batch):
 *   begin: Q (nq x dim, L2-normalized or zero) and qid (the id each Q row stands for, ascending)
 *          are borrowed until end; batch_rows (rounded up to whole tiles of LA_SIMTILE_BLOCK_S) is
 *          how many seen rows wait in the stream's own buffer before they go through the tiles.
 *   add:   ns seen rows, ids ascending across every call; copied, so S may be reused at once.
 *   end:   pairs (a = seen id, b = held-out id) and nearest lists as la_semantic_find gives them
 *          for the same rows, with the ids in place of table indices; stats as there, method
 *          "tiles", seconds the tiles' own time.
 * On the CPU the batches are cut into the tiles of one call, so pairs, cosines, lists and the
 * re-scored count are the ones la_semantic_find gives. Free with la_semantic_stream_free (also
 * after end, and after a failure).
 */
typedef struct la_semantic_stream la_semantic_stream;
la_status la_semantic_stream_begin(const float *Q, const uint32_t *qid, size_t nq, size_t dim, size_t batch_rows,
                                   const la_semantic_params *p, la_semantic_stream **out /* OUT */);
la_status la_semantic_stream_add(la_semantic_stream *s, const float *S, const uint32_t *sid, size_t ns);
la_status la_semantic_stream_end(la_semantic_stream *s, la_pairs *out /* OUT: appended */,
                                 la_semantic_nearest *nearest /* OUT */, la_semantic_stats *stats /* OUT */);
void la_semantic_stream_free(la_semantic_stream *s); /* NULL-safe */

/* The ratio margin on a self-join (`leakaudit split`, rows against the same rows): row i and its
 * nearest other row b join when their cosine is in the band below the threshold and cosine /
 * ((m_i + m_b) / 2) >= margin, m being each row's mean over its margin_k best cosines with the
 * other rows. top_idx / top_cos: n best-first lists of k over the same rows (a row is among its
 * own; k > margin_k keeps margin_k others). Pairs (a < b, kind semantic, cosine and margin set)
 * are appended to out; nothing when margin is 0. LA_ENOMEM. */
la_status la_semantic_margin_self(const uint32_t *top_idx, const float *top_cos, size_t n, uint32_t k, double threshold,
                                  double margin, uint32_t margin_k, la_pairs *out /* OUT: appended */);

/* Is the FAISS path compiled in? */
int la_semantic_have_faiss(void);

/* Name of a method ("auto", "tiles", "faiss", "faiss-ivf"); parse one into *method. */
const char *la_semantic_method_name(int method);
la_status la_semantic_method_parse(const char *name, int *method /* OUT */);

/*
 * Check one vector that came from outside and normalize it in place to unit length.
 *   where: context for the message, e.g. "emb.npy: row 17" or "test.jsonl:12: field vec".
 * Returns LA_EINPUT with "WHERE: component C is NaN" (or infinite), or "WHERE: vector is all zeros
 * and has no direction".
 */
la_status la_vec_check_normalize(float *v, size_t dim, const char *where);

/*
 * The built-in lexical embedding of every row of t (kernels/embed_lexical.h): the row's normalized
 * text (norm) when set, else its text. dim 0 takes the default. *out is a new nrows x dim matrix
 * (free with free()).
 */
la_status la_semantic_embed_lexical(const la_table *t, uint32_t dim, int threads,
                                    float **out /* OUT: owned by the caller */);
/* The same, with rows flagged in skip (NULL: none) counted in the word weights but given zero
 * vectors: a shard's other rows (host/shard.h), whose vectors it does not need. */
la_status la_semantic_embed_lexical_some(const la_table *t, uint32_t dim, int threads,
                                         const uint8_t *skip, float **out /* OUT: owned by the caller */);

#ifdef __cplusplus
}
#endif
#endif /* LA_SEMANTIC_H */
