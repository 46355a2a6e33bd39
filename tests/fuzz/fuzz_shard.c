/*
 * fuzz_shard.c - fuzz target for the reader of shard.bin, the partial result of `audit --shard`
 * (host/shard.c). The input is the file without its checksum, which the target appends, so that
 * the fields themselves are fuzzed: any bytes are either refused with a message naming the file,
 * or read into rows and lists that lie inside the table, and written back to the same bytes.
 */
#include "shard.h"

#include "fuzz_check.h"
#include "fuzz_file.h"

#include "la_blake2b.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *file = malloc(size + 32);
    if (!file) return 0;
    if (size) memcpy(file, data, size);
    la_blake2b(file + size, 32, data, size, NULL, 0);
    char path[96];
    if (!la_fuzz_file("shard", "bin", file, size + 32, path)) {
        free(file);
        return 0;
    }
    la_partial p;
    if (la_partial_read(path, &p) == LA_OK) {
        for (size_t k = 0; k < p.pairs.n; k++) LA_FUZZ_CHECK(p.pairs.v[k].a < p.nrows && p.pairs.v[k].b < p.nrows);
        LA_FUZZ_CHECK(p.shard.index < p.shard.count);
        for (size_t k = 0; p.sem_on && k < p.sem.nnearest; k++) LA_FUZZ_CHECK(p.sem.nearest_row[k] < p.nrows);
        LA_FUZZ_CHECK(p.near.nstages <= LA_REPORT_MAX_STAGES && p.sem.nstages <= LA_REPORT_MAX_STAGES);
        la_buf b = {0};
        LA_FUZZ_CHECK(la_partial_encode(&p, &b) == LA_OK);
        LA_FUZZ_CHECK(b.n == size + 32 && memcmp(b.p, file, size + 32) == 0);
        la_buf_free(&b);
        la_partial_free(&p);
    } else {
        LA_FUZZ_CHECK(strstr(la_last_error(), path) != NULL);
    }
    unlink(path);
    free(file);
    return 0;
}
