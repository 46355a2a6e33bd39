/*
 * fuzz_npy.c - fuzz target for the .npy reader: any bytes are read into a matrix of finite floats
 * of the shape the header states, or refused with a message.
 */
#include "npy.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/la-fuzz-%d.npy", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    float *m = NULL;
    size_t rows = 0, cols = 0;
    la_status s = la_npy_read(path, 0, 0, &m, &rows, &cols);
    if (s == LA_OK) {
        for (size_t i = 0; i < rows * cols; i++) assert(isfinite(m[i]));
        free(m);
    } else {
        assert(m == NULL && la_last_error()[0] != '\0');
    }
    unlink(path);
    return 0;
}
