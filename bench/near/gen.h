/*
 * gen.h - the seeded corpus generator of the near-copy benchmark: a dev and a test partition of
 * synthetic text (a Zipf-distributed vocabulary of made-up words), with planted test copies of dev
 * rows at known word-edit rates, test items quoted inside longer dev passages, and unrelated
 * distractors. The ground truth is the list of planted (dev, test) pairs.
 *
 * Same seed and sizes, same corpus, on any machine.
 */
#ifndef LA_BENCH_GEN_H
#define LA_BENCH_GEN_H

#include <stddef.h>
#include <stdint.h>

#define GEN_NRATES 7
extern const int gen_rates[GEN_NRATES]; /* percent: 0 (verbatim), 2, 5, 10, 20, 30, 50 */

enum gen_case { GEN_EDIT = 0, GEN_CONTAIN = 1 };

typedef struct gen_truth {
    size_t dev, test;  /* row indices within their partitions */
    int kind;          /* gen_case */
    int rate;          /* edit rate in percent (GEN_EDIT), or the length ratio x10 (GEN_CONTAIN) */
    int long_doc;      /* the copied item is a long document */
} gen_truth;

typedef struct gen_corpus {
    char **dev, **test;  /* NUL-terminated texts, lowercase, single spaces */
    size_t ndev, ntest;
    gen_truth *truth;
    size_t ntruth;
    size_t bytes;        /* total text bytes */
} gen_corpus;

/* Generate ndev dev rows and ntest test rows. About 1/3 of the test rows are planted copies (spread
 * evenly over the edit rates, short questions and long documents), 1/15 are quoted inside dev
 * passages 3-10x longer, the rest are unrelated. Returns 0, or -1 when out of memory. */
int gen_make(uint64_t seed, size_t ndev, size_t ntest, gen_corpus *out);
void gen_free(gen_corpus *c);

/* Write dev.jsonl, test.jsonl (fields id, split, text) and truth.jsonl into dir. Returns 0 or -1. */
int gen_write(const gen_corpus *c, const char *dir);

#endif
