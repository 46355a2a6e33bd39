/*
 * fuzz_e5s1.c - fuzz target for the E5S1 model file reader (host/e5s1.c): any bytes either open
 * into pieces, normalization entries and tensors that lie inside the file, or are refused with a
 * message naming the file.
 */
#include "e5s1.h"

#include "fuzz_check.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/la-fuzz-%d.e5s1", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    la_e5s1 *e = NULL;
    if (la_e5s1_open(path, &e) == LA_OK) {
        const la_e5s1_header *h = la_e5s1_head(e);
        for (uint32_t i = 0; i < h->pieces; i++) {
            size_t len;
            float sc;
            const char *p = la_e5s1_piece(e, i, &len, &sc);
            LA_FUZZ_CHECK(p && len > 0 && len <= size && isfinite(sc));
        }
        uint32_t rep[255];
        for (size_t i = 0; i < la_e5s1_norm_count(e); i++) {
            size_t k;
            la_e5s1_norm_at(e, i, rep, &k);
            LA_FUZZ_CHECK(k <= 255);
        }
        float *v = NULL;
        if (la_e5s1_read_f32(e, "emb.pos", (size_t)h->positions * h->hidden, &v) == LA_OK) {
            for (size_t k = 0; k < (size_t)h->positions * h->hidden; k++) LA_FUZZ_CHECK(isfinite(v[k]));
            free(v);
        } else {
            LA_FUZZ_CHECK(v == NULL && strstr(la_last_error(), path));
        }
        la_e5s1_free(e);
    } else {
        LA_FUZZ_CHECK(e == NULL && strstr(la_last_error(), path));
    }
    unlink(path);
    return 0;
}
