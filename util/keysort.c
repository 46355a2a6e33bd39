/*
 * keysort.c - the stable key sort on the CPU (see la_keysort.h): an MSD radix sort of 8-bit digits
 * taken from the bits where the keys of a range differ, the entries moving between the array and
 * one scratch copy at each level; a range of at most SMALL_RANGE entries is finished by insertion.
 *
 * An LSD sort of four 16-bit digits spread each pass's writes over 65,536 places, a cache miss for
 * nearly every entry (11 ms for the 210k band keys of 50k x 5k rows). 256 places at a time stay in
 * the cache, and after the first digit or two a range fits it whole.
 */
#include "la_keysort.h"

#include <stdlib.h>
#include <string.h>

enum { DIGIT_BITS = 8, SMALL_RANGE = 16 };

/* Stable insertion of src[0..n) into dst[0..n) (src == dst: in place). */
static void insert_sorted(const la_key_row *src, la_key_row *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        la_key_row x = src[i];
        size_t j = i;
        while (j > 0 && dst[j - 1].key > x.key) {
            dst[j] = dst[j - 1];
            j--;
        }
        dst[j] = x;
    }
}

/* The n entries at `in` sorted stably, into `in` (to_in) or into `other`, the scratch beside it.
 * Each level takes at least one of the bits that differ in its range, so it recurses at most 64
 * deep, about 4 KB a level. */
static void sort_range(la_key_row *in, la_key_row *other, size_t n, int to_in)
{
    if (n <= SMALL_RANGE) {
        insert_sorted(in, to_in ? in : other, n);
        return;
    }
    uint64_t any = 0, all = ~0ull;
    for (size_t i = 0; i < n; i++) {
        any |= in[i].key;
        all &= in[i].key;
    }
    uint64_t differ = any & ~all;
    if (!differ) { /* one key: in order already */
        if (!to_in) memcpy(other, in, n * sizeof *in);
        return;
    }
    /* the highest bits that differ, as few as leave about two entries a place */
    int top = 63 - __builtin_clzll(differ), bits = 1;
    while (bits < DIGIT_BITS && ((size_t)2 << bits) < n) bits++;
    if (bits > top + 1) bits = top + 1;
    int shift = top + 1 - bits;
    size_t places = (size_t)1 << bits, mask = places - 1;
    size_t start[(1 << DIGIT_BITS) + 1] = {0}, at[1 << DIGIT_BITS];
    for (size_t i = 0; i < n; i++) start[((in[i].key >> shift) & mask) + 1]++;
    for (size_t p = 0; p < places; p++) start[p + 1] += start[p];
    memcpy(at, start, places * sizeof *at);
    for (size_t i = 0; i < n; i++) other[at[(in[i].key >> shift) & mask]++] = in[i];
    /* each place's entries are now in `other`: sorted from there, back into `in` when asked */
    for (size_t p = 0; p < places; p++) {
        size_t m = start[p + 1] - start[p];
        if (m) sort_range(other + start[p], in + start[p], m, !to_in);
    }
}

la_status la_sort_key_rows(la_key_row *e, size_t n)
{
    if (n <= SMALL_RANGE) {
        insert_sorted(e, e, n);
        return LA_OK;
    }
    la_key_row *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return la_error(LA_ENOMEM, "out of memory sorting %zu bucket entries", n);
    sort_range(e, tmp, n, 1);
    free(tmp);
    return LA_OK;
}
