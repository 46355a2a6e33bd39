/*
 * keysort.c - the CPU loop of the stable key sort (see keysort.h): an LSD radix sort of four 16-bit
 * digits, ping-ponging between the entries and one scratch copy; after four passes the sorted entries
 * are back in place.
 */
#include "keysort.h"

#include <stdlib.h>
#include <string.h>

la_status la_cpu_sort_key_rows(la_key_row *e, size_t n)
{
    if (n < 2) return LA_OK;
    la_key_row *tmp = malloc(n * sizeof *tmp);
    size_t *count = malloc(65536 * sizeof *count);
    if (!tmp || !count) {
        free(tmp);
        free(count);
        return la_error(LA_ENOMEM, "out of memory sorting %zu bucket entries", n);
    }
    la_key_row *src = e, *dst = tmp;
    for (int pass = 0; pass < 4; pass++) {
        int shift = 16 * pass;
        memset(count, 0, 65536 * sizeof *count);
        for (size_t i = 0; i < n; i++) count[(src[i].key >> shift) & 0xffff]++;
        size_t sum = 0;
        for (size_t d = 0; d < 65536; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) dst[count[(src[i].key >> shift) & 0xffff]++] = src[i];
        la_key_row *t = src;
        src = dst;
        dst = t;
    }
    free(count);
    free(tmp);
    return LA_OK;
}
