/* exact.c - exact-copy join on the 128-bit normalized-text hash (see exact.h). */
#include "exact.h"
#include "la_alloc.h"
#include "la_sort.h"

#include "la_keysort.h"

#include <stdlib.h>
#include <string.h>

/* Row indices by hash, then partition, then id; ctx is the rows. */
static int cmp_hash_part_id(const void *x, const void *y, void *ctx)
{
    const la_row *rows = ctx;
    const la_row *a = &rows[*(const uint32_t *)x], *b = &rows[*(const uint32_t *)y];
    if (a->hash[1] != b->hash[1]) return a->hash[1] < b->hash[1] ? -1 : 1;
    if (a->hash[0] != b->hash[0]) return a->hash[0] < b->hash[0] ? -1 : 1;
    if (a->part != b->part) return a->part < b->part ? -1 : 1;
    return strcmp(a->id, b->id);
}

static int same_text(const la_row *a, const la_row *b)
{
    return a->hash[0] == b->hash[0] && a->hash[1] == b->hash[1] && a->norm_len == b->norm_len &&
           memcmp(a->norm, b->norm, a->norm_len) == 0;
}

void la_exact_result_free(la_exact_result *res)
{
    if (!res) return;
    free(res->dup_of);
    free(res->conflict_rows);
    free(res->conflict_start);
    memset(res, 0, sizeof *res);
}

/* order[0 .. m) by cmp_hash_part_id: by the hash's high half with the radix sort, which reads each
 * row's hash once, in order (a comparison sort read two rows at random per comparison: links_s 17
 * against 8 ms at 55 k rows), then each run of one high half by the whole order. A corpus of many
 * copies keeps most of its rows here. */
static la_status sort_by_hash(const la_row *rows, uint32_t *order, size_t m)
{
    la_key_row *e = la_malloc_n(m, sizeof *e);
    if (!e) return la_error(LA_ENOMEM, "out of memory in the exact-copy join (%zu rows)", m);
    for (size_t k = 0; k < m; k++) e[k] = (la_key_row){rows[order[k]].hash[1], order[k], 0};
    la_status st = la_sort_key_rows(e, m);
    for (size_t k = 0; st == LA_OK && k < m; k++) order[k] = e[k].row;
    for (size_t g = 0; st == LA_OK && g < m;) {
        size_t end = g + 1;
        while (end < m && e[end].key == e[g].key) end++;
        if (end - g > 1) la_sort(order + g, end - g, sizeof *order, cmp_hash_part_id, (void *)rows);
        g = end;
    }
    free(e);
    return st;
}

/* A text's slot in the table of high halves (hash_slot.row: the row + 1, 0 for an empty slot; many:
 * another row has that high half too). */
typedef struct hash_slot {
    uint64_t key;
    uint32_t row;
    uint32_t many;
} hash_slot;

la_status la_exact_find(const la_table *t, uint32_t heldout, la_pairs *out, la_exact_result *res)
{
    memset(res, 0, sizeof *res);
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    /* The rows that share their hash's high half with another row go into order, sorted by
     * cmp_hash_part_id; the rest, whose text no other row has, can have no copy, link or conflict,
     * and are left out. Each row's high half goes through an open-addressing table as the rows are
     * read once, in order (where sorting every row by it took 2 of the join's 2.8 ms at 55k rows);
     * the sort (sort_by_hash) is of the rows that share one, few but for a corpus of many copies.
     * The order is that of sorting every row and keeping those in runs of two or more. */
    size_t cap = 16;
    while (cap < n + n / 2) cap <<= 1;
    int shift = 64 - __builtin_ctzll((unsigned long long)cap);
    uint32_t *order = la_malloc_n(n, sizeof *order);
    hash_slot *tab = la_zalloc_n(cap, sizeof *tab);
    res->dup_of = la_malloc_n(n, sizeof *res->dup_of);
    res->conflict_rows = la_malloc_n(n, sizeof *res->conflict_rows);
    res->conflict_start = malloc((n + 1) * sizeof *res->conflict_start);
    if (!order || !tab || !res->dup_of || !res->conflict_rows || !res->conflict_start) {
        free(order);
        free(tab);
        la_exact_result_free(res);
        return la_error(LA_ENOMEM, "out of memory in the exact-copy join (%zu rows)", n);
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        res->dup_of[i] = LA_NOT_DUP;
        if (!rows[i].norm || !rows[i].norm_len) continue;
        uint64_t key = rows[i].hash[1];
        size_t at = (size_t)(key >> shift); /* cap >= 16: shift <= 60 */
        while (tab[at].row && tab[at].key != key) at = (at + 1) & (cap - 1);
        if (!tab[at].row) {
            tab[at] = (hash_slot){key, (uint32_t)i + 1, 0};
            continue;
        }
        /* the second row of a high half brings the first with it; later ones come alone */
        if (!tab[at].many) order[m++] = tab[at].row - 1;
        tab[at].many = 1;
        order[m++] = (uint32_t)i;
    }
    free(tab);
    la_status sorted = sort_by_hash(rows, order, m);
    if (sorted != LA_OK) {
        free(order);
        la_exact_result_free(res);
        return sorted;
    }

    size_t nconf_rows = 0;
    la_status st = LA_OK;
    for (size_t g = 0; g < m && st == LA_OK;) {
        size_t e = g + 1;
        while (e < m && same_text(&rows[order[g]], &rows[order[e]])) e++;
        /* duplicates within a partition: rows of one partition are contiguous, smallest id first */
        for (size_t i = g + 1; i < e; i++) {
            size_t first = i;
            while (first > g && rows[order[first - 1]].part == rows[order[i]].part) first--;
            if (first != i) {
                res->dup_of[order[i]] = order[first];
                res->ndup++;
            }
        }
        /* cross-boundary pairs: every copy on a seen side with every copy held out */
        int has_held = 0, has_seen = 0;
        for (size_t i = g; i < e; i++) {
            if (rows[order[i]].part == heldout) has_held = 1;
            else has_seen = 1;
        }
        if (has_held && has_seen) {
            res->ncross_groups++;
            for (size_t i = g; i < e && st == LA_OK; i++) {
                if (rows[order[i]].part != heldout) continue;
                for (size_t j = g; j < e && st == LA_OK; j++) {
                    if (rows[order[j]].part == heldout) continue;
                    la_pair p = la_pair_make(order[j], order[i], LA_KIND_EXACT);
                    p.jaccard = p.containment = 1.0f;
                    st = la_pairs_push(out, &p);
                }
            }
        }
        /* label conflicts: two labelled rows with different labels */
        const char *lab = NULL;
        int conflict = 0;
        for (size_t i = g; i < e; i++) {
            const char *l = rows[order[i]].label;
            if (!l) continue;
            if (!lab) lab = l;
            else if (strcmp(lab, l) != 0) conflict = 1;
        }
        if (conflict) {
            res->conflict_start[res->nconflicts++] = nconf_rows;
            for (size_t i = g; i < e; i++)
                if (rows[order[i]].label) res->conflict_rows[nconf_rows++] = order[i];
        }
        g = e;
    }
    res->conflict_start[res->nconflicts] = nconf_rows;
    free(order);
    return st;
}
