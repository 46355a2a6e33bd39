/*
 * groups.h - the grouping key of the split maker: rows sharing a family id, or joined by a link
 * (exact, near or semantic copies), form one group that is never split. Each group is named by
 * its member with the smallest id, so groups do not depend on input order.
 */
#ifndef LA_GROUPS_H
#define LA_GROUPS_H

#include "leakaudit.h"

/* rep[i] receives the index of the smallest-id row of row i's group. links may be NULL. */
la_status la_groups_build(const la_table *t, const la_pairs *links, uint32_t *rep /* OUT: per row */);

#endif /* LA_GROUPS_H */
