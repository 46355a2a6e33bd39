/* sort_fixture.h - the reference for the key sorts: entries tagged with their input position and
 * ordered by key, then position (the one stable order), for qsort. */
#ifndef LA_SORT_FIXTURE_H
#define LA_SORT_FIXTURE_H

#include <stddef.h>

#include "la_keysort.h"

typedef struct indexed {
    la_key_row e;
    size_t i;
} indexed;

static inline int cmp_indexed(const void *x, const void *y)
{
    const indexed *a = x, *b = y;
    if (a->e.key != b->e.key) return a->e.key < b->e.key ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

#endif /* LA_SORT_FIXTURE_H */
