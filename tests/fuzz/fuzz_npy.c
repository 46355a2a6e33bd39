/*
 * fuzz_npy.c - fuzz target for the .npy reader: any bytes are read into a matrix of finite floats
 * of the shape the header states, or refused with a message.
 */
#include "npy.h"

#include "fuzz_check.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_file.h"
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[96];
    if (!la_fuzz_file("npy", "npy", data, size, path)) return 0;
    float *m = NULL;
    size_t rows = 0, cols = 0;
    la_status s = la_npy_read(path, 0, 0, &m, &rows, &cols);
    if (s == LA_OK) {
        for (size_t i = 0; i < rows * cols; i++) LA_FUZZ_CHECK(isfinite(m[i]));
        free(m);
    } else {
        LA_FUZZ_CHECK(m == NULL && la_last_error()[0] != '\0');
    }
    unlink(path);
    return 0;
}
