/*
 * embed_lexical.h - the built-in `lexical` embedding: feature-hashed TF-IDF.
 *
 * Each text becomes a D-dimensional L2-normalized vector built from word unigrams and bigrams and
 * character 3-, 4- and 5-grams (counted in code points of UTF-8), with sublinear term frequency and
 * inverse document frequency taken over all the texts given (all partitions). Words and characters
 * form two groups, each normalized on its own and mixed by weight, so long texts with many
 * character n-grams do not drown the word evidence. Deterministic: the same texts and parameters
 * give the same bits on any machine and thread count.
 *
 * It measures shared wording, not meaning: reports call its scores lexical similarity. Texts are
 * expected to be normalized already (NFKC + casefold + collapsed spaces, host/); empty texts give
 * zero vectors, which match nothing.
 */
#ifndef LA_EMBED_LEXICAL_H
#define LA_EMBED_LEXICAL_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct la_embed_lexical_params {
    uint32_t dim;        /* output dimensions D */
    float word_weight;   /* share of the squared norm given to word features, in [0, 1] */
    uint64_t seed;       /* hash seed */
    int threads;         /* OpenMP threads; 0 = the OpenMP default */
    const uint8_t *skip; /* NULL, or one flag per text: a flagged text counts in the document
                            frequencies but gets a zero vector (a shard's other rows) */
} la_embed_lexical_params;

#define LA_EMBED_LEXICAL_DIM 1024

void la_embed_lexical_params_default(la_embed_lexical_params *p);

/*
 * Embed n texts (texts[i] of lens[i] bytes; NULL or length 0 is an empty text) into out, n x
 * p->dim floats, row-major, caller-allocated. Rows are unit length, or zero for texts with no
 * feature. Returns LA_EINVAL for bad parameters, LA_ENOMEM. Takes a 16 MB document-frequency table
 * and 16 MB more per OpenMP thread after the first, freed before it returns.
 */
la_status la_cpu_embed_lexical(const char *const *texts, const size_t *lens, size_t n,
                               const la_embed_lexical_params *p, float *out /* OUT: n x dim */);

/*
 * The same in two halves, so that a large set of texts can be embedded in batches: the inverse
 * document frequencies over every text (la_cpu_lexical_idf: 16 MB, and 16 MB more per OpenMP
 * thread after the first while it counts), then the vectors of any of them, any number at a time
 * (la_cpu_embed_lexical_with, p->skip read per text given). The vectors have the bits
 * la_cpu_embed_lexical gives the same texts. p->seed must be the one the frequencies were counted
 * with (LA_EINVAL otherwise).
 */
typedef struct la_lexical_idf la_lexical_idf;
la_status la_cpu_lexical_idf(const char *const *texts, const size_t *lens, size_t n,
                             const la_embed_lexical_params *p, la_lexical_idf **out /* OUT */);
la_status la_cpu_embed_lexical_with(const la_lexical_idf *idf, const char *const *texts, const size_t *lens,
                                    size_t n, const la_embed_lexical_params *p, float *out /* OUT: n x dim */);
void la_lexical_idf_free(la_lexical_idf *idf); /* NULL-safe */

/* Which code hashes the character n-grams on this CPU ("AVX-512", "AVX2" or "portable loop"): a
 * static string, for leakaudit doctor. All give the same hashes. */
const char *la_cpu_lexical_kernel(void);
/* For tests: every later call takes the best loop of at most `most` (0 the portable loop, 1 AVX2,
 * 2 AVX-512) that this build and CPU have. Returns the best they have. Not for use while texts are
 * embedded. */
int la_cpu_lexical_loop(int most);

#ifdef __cplusplus
}
#endif
#endif /* LA_EMBED_LEXICAL_H */
