/* groups.c - families joined with copy links into groups (see groups.h). */
#include "groups.h"

#include <stdlib.h>
#include <string.h>

static const la_row *g_rows; /* sort context */

static int cmp_family(const void *x, const void *y)
{
    const la_row *a = &g_rows[*(const uint32_t *)x], *b = &g_rows[*(const uint32_t *)y];
    return strcmp(a->family, b->family);
}

static uint32_t find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void unite(uint32_t *parent, const la_row *rows, uint32_t x, uint32_t y)
{
    x = find(parent, x);
    y = find(parent, y);
    if (x == y) return;
    if (strcmp(rows[x].id, rows[y].id) < 0) parent[y] = x;
    else parent[x] = y;
}

la_status la_groups_build(const la_table *t, const la_pairs *links, uint32_t *rep)
{
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order) return la_error(LA_ENOMEM, "out of memory grouping %zu rows", n);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        rep[i] = (uint32_t)i;
        if (rows[i].family) order[m++] = (uint32_t)i;
    }
    g_rows = rows;
    qsort(order, m, sizeof *order, cmp_family);
    for (size_t k = 1; k < m; k++)
        if (strcmp(rows[order[k]].family, rows[order[k - 1]].family) == 0) unite(rep, rows, order[k], order[k - 1]);
    if (links)
        for (size_t k = 0; k < links->n; k++) unite(rep, rows, links->v[k].a, links->v[k].b);
    for (size_t i = 0; i < n; i++) rep[i] = find(rep, (uint32_t)i);
    free(order);
    return LA_OK;
}
