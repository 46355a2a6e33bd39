/*
 * npy.h - read embeddings from a NumPy .npy file.
 *
 * Accepts a 2-D array of float32 or float16 ('<f4', '<f2', or big-endian '>f4', '>f2'), C order,
 * format versions 1.0 to 3.0. Every value is checked: NaN or infinity is an error naming the file,
 * the row (counted from 0, as NumPy indexes) and the column. Not for: writing .npy files, or arrays
 * of other types (convert with `np.asarray(x, dtype=np.float32)` first).
 */
#ifndef LA_NPY_H
#define LA_NPY_H

#include <stddef.h>

#include "leakaudit.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Read path into a newly allocated float32 matrix, rows x cols, row-major; free it with free().
 *   expect_rows, expect_cols: required shape; 0 accepts any.
 * Errors: LA_EIO when the file cannot be opened or read; LA_EINPUT for a bad header, dtype, order,
 * shape, row count, truncated data, or a NaN/inf value ("FILE: row R: column C: value is NaN");
 * LA_ENOMEM. On error *out is NULL.
 */
la_status la_npy_read(const char *path, size_t expect_rows, size_t expect_cols,
                      float **out /* OUT: owned by the caller */, size_t *rows /* OUT */,
                      size_t *cols /* OUT */);

/* Write a float32 C-order 2-D .npy file (for tests and benchmarks). */
la_status la_npy_write(const char *path, const float *data, size_t rows, size_t cols);

/* IEEE 754 half (binary16) to float; exact. */
float la_half_to_float(unsigned short h);

#ifdef __cplusplus
}
#endif
#endif /* LA_NPY_H */
