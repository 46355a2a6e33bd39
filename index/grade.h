/*
 * grade.h - grades for content links (exact, near, semantic): copy, near or related.
 *
 * A link is graded on how much of the held-out row's distinctive content the other row carries.
 * Word pairs and words are weighted by rarity: a word pair that r other rows (besides the two
 * linked ones) also contain weighs 1 / (1 + r / k), so a frame shared by hundreds of rows counts
 * little and what only the two rows share counts fully. Numbers are the slots of templated items:
 * when most of the held-out row's numbers are missing while its words survive, or the other row
 * states other numbers in the same words around them, the two are instances of one template and
 * the link is `related` whatever its other scores. Unless the held-out row is a template instance
 * whose siblings are linked too and the other row keeps its slots: the words that most of the
 * held-out row's other linked rows lack are its slots, and a row that keeps far more of them than
 * a sibling would is an edited copy (slot evidence). The rules and the numbers behind them are in
 * docs/grades.md.
 *
 * Not for: finding links (the tiers do), deciding outcomes or gating (audit/ does, from the grade).
 */
#ifndef LA_GRADE_H
#define LA_GRADE_H

#include <stddef.h>

#include "leakaudit.h"

typedef struct la_grade_params {
    double copy_share;        /* weighted word-pair containment for copy (0.9) */
    double near_share;        /* weighted word-pair containment for near (0.45) */
    double near_words;        /* or: weighted word containment (0.65) with every number kept ... */
    double near_words_pairs;  /* ... and at least this weighted word-pair containment (0.25) */
    double near_words_all;    /* or: this weighted word containment (0.90) with every number kept,
                               * whatever became of the word pairs (words reordered) */
    double rarity_k;          /* k of the rarity weight 1 / (1 + r / k) (4) */
    double numbers_alpha;     /* binomial tail below which missing numbers mark a template (0.05) */
    double changed_share;     /* share of held-out numbers restated differently that marks one (0.2) */
    int numbers_max_words;    /* the numbers rules apply to held-out rows of at most this many distinct
                                 words and numbers (150): items, not documents */
    double copy_cosine;       /* model embeddings: cosine for copy (0.97; a model may have its own:
                                 la_model_grade_cosines) */
    double numbers_cosine;    /* model embeddings: below this cosine a link must keep the held-out
                                 row's numbers to be near (0.90) */
    double few_numbers_cosine; /* ... and with only one or two numbers, at least this cosine (0.86) */
    double digits_cosine;     /* model embeddings: from numbers_cosine up to this cosine the two rows
                                 of a link must state the same numbers in digits (one may be missing
                                 from a row that states four or more) to be near; 0: off (the
                                 default; a model's own comes from la_model_grade_cosines) */
    int slot_min_siblings;    /* slot evidence needs the held-out row linked to this many other rows (4) */
    double slot_keep;         /* slot evidence: chance that an edited copy keeps a word (0.85) */
    double slot_evidence;     /* slot evidence (log-likelihood ratio less log siblings) for near (4) */
    int semantic_lexical;     /* semantic links come from the lexical embedding: grade them on wording */
    int threads;              /* worker threads; 0 = online CPUs */
} la_grade_params;

/* The defaults documented in docs/grades.md. */
void la_grade_params_default(la_grade_params *p /* OUT */);

typedef struct la_grade_stats {
    size_t graded;            /* content links graded */
    size_t by_grade[4];       /* indexed by la_grade */
    size_t template_numbers;  /* links held at related because their numbers differ */
    size_t slot_upgrades;     /* links made near by slot evidence that the other rules held at related */
    size_t digits_related;    /* semantic links the digits rule (digits_cosine) held at related */
    size_t rows_counted;      /* rows whose words entered the rarity counts */
    double seconds;
} la_grade_stats;

/* Grade every link of `pairs` that has content evidence (exact, near or semantic): fills grade,
 * wcontainment, wwords and the nums_* fields. Exact links are copies. Links with only family or
 * time evidence keep LA_GRADE_NONE. Rarity counts run over every row of t with normalized text.
 * The result does not depend on p->threads or on the order of `pairs`.
 * Returns LA_ENOMEM, or LA_EINVAL for bad parameters; on failure grades may be partly filled. */
la_status la_grade_pairs(const la_table *t, const la_grade_params *p, la_pairs *pairs,
                         la_grade_stats *stats /* OUT, may be NULL */);

/* For tests: 1 makes the document counts gather their keys with the portable loop even where the
 * CPU has AVX-512 (the same keys), 0 restores the default. Returns whether the AVX-512 loop exists
 * on this CPU. Not for use while grading runs. */
int la_grade_portable_keys(int portable);

#endif /* LA_GRADE_H */
