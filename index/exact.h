/*
 * exact.h - exact copies after normalization: the hash join across the boundary, duplicates within a
 * partition, and label conflicts (same normalized text, different labels).
 * "First copy" means the copy with the smallest id (byte order), so results do not depend on the
 * order of the input. Rows whose normalized text is empty take no part.
 */
#ifndef LA_EXACT_H
#define LA_EXACT_H

#include "leakaudit.h"

#define LA_NOT_DUP UINT32_MAX

typedef struct la_exact_result {
    uint32_t *dup_of;          /* per row: the first copy in the same partition, or LA_NOT_DUP */
    size_t ndup;               /* rows that are later copies within their partition */
    size_t ncross_groups;      /* texts present on the held-out side and on a seen side */
    /* label conflicts: group g holds rows conflict_rows[conflict_start[g] .. conflict_start[g+1]) */
    uint32_t *conflict_rows;
    size_t *conflict_start;    /* nconflicts + 1 entries */
    size_t nconflicts;
} la_exact_result;

/* Append a LA_KIND_EXACT pair (seen a, held-out b) for every cross-boundary copy to out, and fill res.
 * Needs rows' norm and hash (see la_normalize_table). */
la_status la_exact_find(const la_table *t, uint32_t heldout, la_pairs *out, la_exact_result *res /* OUT */);
void la_exact_result_free(la_exact_result *res);

#endif /* LA_EXACT_H */
