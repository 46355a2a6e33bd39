/*
 * threeset.h - the three-set discipline for a prompt-based classifier: demos / dev / test, made per
 * class from labeled rows, with groups (families and copy clusters) kept whole.
 *
 *  1. Later exact copies (after normalization) come out first: the copy with the smallest id stays,
 *     the others go to quarantine; label conflicts are reported by the caller.
 *  2. Each group belongs to the class of its representative (smallest id). Within a class, groups
 *     are sorted by representative id and shuffled (Fisher-Yates) with SplitMix64 seeded by
 *     seed XOR FNV-1a-64(label): the same rows and seed give the same split, and adding a class does
 *     not reshuffle the others.
 *  3. Demos: groups from the front of the class until demos_per_class rows, but a class never gives up
 *     its last two rows (a group that would overshoot either limit stops the demos).
 *  4. The rest is divided by dev_share: dev takes groups until it reaches its target (rounded, with the
 *     rounding error carried from one class to the next, classes in label order); a class with two or
 *     more groups left gets at least one in each of dev and test; a single remaining group goes to dev.
 */
#ifndef LA_THREESET_H
#define LA_THREESET_H

#include "buf.h"
#include "leakaudit.h"
#include "report.h"

typedef struct la_threeset_params {
    uint64_t seed;
    size_t demos_per_class;
    double dev_share;           /* 0.1 .. 0.9 */
} la_threeset_params;

enum { LA_SET_DEMOS = 0, LA_SET_DEV, LA_SET_TEST, LA_SET_QUARANTINE, LA_SET_COUNT };

typedef struct la_threeset_class {
    const char *label;          /* borrowed from the table */
    size_t rows[LA_SET_COUNT];
    int thin;                   /* fewer than 5 test rows */
} la_threeset_class;

typedef struct la_threeset {
    uint8_t *set;               /* per row: LA_SET_* */
    la_threeset_class *classes; /* by label */
    size_t nclasses;
    size_t rows[LA_SET_COUNT];
    double dev_share_reached;   /* dev / (dev + test) rows */
    double majority_floor;      /* share of the largest class in the test set */
    const char *majority_label;
} la_threeset;

/* The SplitMix64 step (documented so the split can be reproduced elsewhere). */
uint64_t la_splitmix64(uint64_t *state);

/* Make the split. rep: per row, its group representative (la_groups_build); dup_of: per row, its
 * first exact copy or UINT32_MAX. Every row needs a label. */
la_status la_threeset_make(const la_table *t, const uint32_t *rep, const uint32_t *dup_of, const la_threeset_params *p,
                           la_threeset *out /* OUT */);
void la_threeset_free(la_threeset *ts);

/* BLAKE2b-256 fingerprint of the rows in one set: over the rows sorted by id, each contributing its id,
 * label and the XXH3-128 of its normalized text, so it changes when a row is added, removed or
 * relabeled and ignores case and spacing changes. key (32 bytes) or NULL for an unkeyed hash.
 * LA_ENOMEM (hex untouched) when the rows cannot be sorted. */
la_status la_threeset_fingerprint(const la_table *t, const la_threeset *ts, int set, const unsigned char *key,
                                  char hex[65] /* OUT */);

const char *la_threeset_set_name(int set);

/* manifest.json and manifest.md: seed, settings, counts per class and set, fingerprints, the
 * "Test set opened: 0 times" line and a changelog skeleton. */
la_status la_threeset_manifest_json(const la_report *r, const la_threeset *ts, const la_threeset_params *p,
                                    const char fingerprints[LA_SET_COUNT][65], int keyed, la_buf *out);
la_status la_threeset_manifest_md(const la_report *r, const la_threeset *ts, const la_threeset_params *p,
                                  const char fingerprints[LA_SET_COUNT][65], int keyed, la_buf *out);

/* assignments.jsonl of a three-set split: id, split_out, label, group, reasons; then the rejects. */
la_status la_threeset_assignments_jsonl(const la_report *r, const la_threeset *ts, const uint32_t *rep,
                                        const uint32_t *dup_of, la_buf *out);

#endif /* LA_THREESET_H */
