/*
 * fuzz_blocks.c - fuzz target for the block reader (la_input_blocks_*), which decompresses gzip and
 * zstd as it reads: whatever the bytes, reading them a block at a time (the first byte picks the
 * block size, 1 to 256 bytes, and a small --max-ratio or the default) gives what reading the file
 * whole gives: the same decompressed bytes, fingerprint and bytes stored, or a failure of both,
 * with a message. Seeds hold gzip members and zstd frames, whole and cut short.
 */
#include "input.h"

#include "fuzz_check.h"
#include "fuzz_file.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    char path[96];
    if (!la_fuzz_file("blocks", "jsonl", data + 1, size - 1, path)) return 0;
    la_limits lim;
    la_limits_default(&lim);
    if (data[0] & 1) lim.max_ratio = 2.0;
    size_t step = 1 + (data[0] >> 1) * 2;
    la_input whole;
    la_status ws = la_input_read(path, &lim, &whole);
    if (ws != LA_OK) LA_FUZZ_CHECK(la_last_error()[0] != '\0');
    la_input_blocks b;
    int ok = 0;
    la_status bs = la_input_blocks_open(path, &lim, &b, &ok);
    if (bs != LA_OK) {
        LA_FUZZ_CHECK(la_last_error()[0] != '\0' && ws != LA_OK);
    } else if (ok) {
        size_t cap = 1024, len = 0;
        char *got = malloc(cap);
        while (got) {
            if (cap - len < step && !(got = realloc(got, cap *= 2))) break;
            size_t n = 0;
            bs = la_input_blocks_read(&b, got + len, step, &n);
            if (bs != LA_OK || n == 0) break;
            LA_FUZZ_CHECK(n <= step);
            len += n;
        }
        la_input info;
        la_input_blocks_close(&b, &info);
        if (got) {
            if (bs != LA_OK) LA_FUZZ_CHECK(la_last_error()[0] != '\0');
            LA_FUZZ_CHECK((bs == LA_OK) == (ws == LA_OK));
            if (bs == LA_OK && ws == LA_OK) {
                LA_FUZZ_CHECK(len == whole.len && !memcmp(got, whole.data, len));
                LA_FUZZ_CHECK(!strcmp(info.compression, whole.compression));
                LA_FUZZ_CHECK(info.stored_len == whole.stored_len);
                LA_FUZZ_CHECK(!memcmp(info.blake2b, whole.blake2b, sizeof info.blake2b));
            }
        }
        free(got);
    }
    if (ws == LA_OK) la_input_free(&whole);
    remove(path);
    return 0;
}
