/*
 * fuzz_check.h - the fuzz targets' checks: LA_FUZZ_CHECK(cond) aborts with file:line and the
 * condition whenever cond is false, in every build. Unlike assert() it does not depend on NDEBUG,
 * so a Release build with -DLA_LIBFUZZER=ON checks what a debug build checks.
 */
#ifndef LA_FUZZ_CHECK_H
#define LA_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define LA_FUZZ_CHECK(cond)                                                                      \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond);        \
            abort();                                                                             \
        }                                                                                        \
    } while (0)

#endif /* LA_FUZZ_CHECK_H */
