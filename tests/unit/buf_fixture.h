/*
 * buf_fixture.h - a growable byte buffer for unit tests that build inputs or transcripts. Header-
 * only, for cmocka tests; include after <cmocka.h>.
 */
#ifndef LA_TEST_BUF_FIXTURE_H
#define LA_TEST_BUF_FIXTURE_H

#include <stdlib.h>
#include <string.h>

typedef struct buf {
    char *p;   /* n bytes, then a NUL; free() it */
    size_t n, cap;
} buf;

/* Append n bytes of s. */
static void put(buf *b, const void *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

#endif /* LA_TEST_BUF_FIXTURE_H */
