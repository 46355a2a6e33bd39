/* groups.c - families joined with copy links into groups (see groups.h). */
#include "groups.h"
#include "la_alloc.h"
#include "la_sort.h"
#include "unionfind.h"

#include <stdlib.h>
#include <string.h>

/* Row indices by family; ctx is the rows. */
static int cmp_family(const void *x, const void *y, void *ctx)
{
    const la_row *rows = ctx;
    const la_row *a = &rows[*(const uint32_t *)x], *b = &rows[*(const uint32_t *)y];
    return strcmp(a->family, b->family);
}

la_status la_groups_build(const la_table *t, const la_pairs *links, uint32_t *rep)
{
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    uint32_t *order = la_malloc_n(n, sizeof *order);
    if (!order) return la_error(LA_ENOMEM, "out of memory grouping %zu rows", n);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        rep[i] = (uint32_t)i;
        if (rows[i].family) order[m++] = (uint32_t)i;
    }
    la_sort(order, m, sizeof *order, cmp_family, (void *)rows);
    for (size_t k = 1; k < m; k++)
        if (strcmp(rows[order[k]].family, rows[order[k - 1]].family) == 0) la_uf_union(rep, rows, order[k], order[k - 1]);
    if (links)
        for (size_t k = 0; k < links->n; k++) la_uf_union(rep, rows, links->v[k].a, links->v[k].b);
    for (size_t i = 0; i < n; i++) rep[i] = la_uf_find(rep, (uint32_t)i);
    free(order);
    return LA_OK;
}
