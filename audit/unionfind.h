/*
 * unionfind.h - union-find over row indices whose roots are the members with the smallest id, so
 * that components are named the same whatever the input order. Used by clusters and split groups.
 */
#ifndef LA_UNIONFIND_H
#define LA_UNIONFIND_H

#include "leakaudit.h"

#include <string.h>

static inline uint32_t la_uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static inline void la_uf_union(uint32_t *parent, const la_row *rows, uint32_t x, uint32_t y)
{
    x = la_uf_find(parent, x);
    y = la_uf_find(parent, y);
    if (x == y) return;
    if (strcmp(rows[x].id, rows[y].id) < 0) parent[y] = x;
    else parent[x] = y;
}

#endif /* LA_UNIONFIND_H */
