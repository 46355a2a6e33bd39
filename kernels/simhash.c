/*
 * simhash.c - the CPU loop of the weighted 64-bit SimHash (math in simhash_core.h). The input is a
 * sorted shingle multiset, so each run of equal hashes is one distinct shingle whose length is its
 * weight.
 */
#include "near_kernels.h"
#include "simhash_core.h"

uint64_t la_cpu_simhash(const uint64_t *h, size_t n)
{
    int32_t acc[64] = {0};
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && h[j] == h[i]) j++;
        la_simhash_vote(acc, la_simhash_hash(h[i]), (int32_t)(j - i));
        i = j;
    }
    return la_simhash_finish(acc);
}
