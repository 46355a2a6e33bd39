/*
 * fuzz_safetensors.c - fuzz target for the safetensors reader: any bytes either open into tensors
 * whose data lies inside the file and whose float conversions are finite, or are refused with a
 * message naming the file.
 */
#include "safetensors.h"

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
    snprintf(path, sizeof path, "/tmp/la-fuzz-%d.safetensors", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    la_safetensors *st = NULL;
    la_status s = la_safetensors_open(path, &st);
    if (s == LA_OK) {
        for (size_t i = 0; i < la_safetensors_count(st); i++) {
            const la_st_tensor *t = la_safetensors_at(st, i);
            LA_FUZZ_CHECK(t->nbytes <= size && t->ndim >= 0 && t->ndim <= LA_ST_MAX_DIMS);
            float *v = NULL;
            if (la_safetensors_read_f32(st, t->name, t->ndim, t->shape, &v) == LA_OK) {
                for (size_t k = 0; k < t->nelem; k++) LA_FUZZ_CHECK(isfinite(v[k]));
                free(v);
            } else {
                LA_FUZZ_CHECK(v == NULL && strstr(la_last_error(), path));
            }
        }
        la_safetensors_free(st);
    } else {
        LA_FUZZ_CHECK(st == NULL && strstr(la_last_error(), path));
    }
    unlink(path);
    return 0;
}
