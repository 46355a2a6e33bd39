/*
 * check_selftest.c - LA_FUZZ_CHECK stays on with NDEBUG defined (as in a Release build): this
 * program must abort (ctest expects it to fail). With assert() it would exit 0.
 */
#define NDEBUG 1
#include "fuzz_check.h"

int main(int argc, char **argv)
{
    (void)argv;
    LA_FUZZ_CHECK(argc == 0); /* never true: argv[0] is there */
    return 0;
}
