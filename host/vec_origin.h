/*
 * vec_origin.h - where a .npy of sentence vectors came from: the file `leakaudit embed` writes
 * beside its vectors (X.npy.json: the model's name and weights hash, the shape, and a BLAKE2b-256
 * of the float32 values), and what `audit --embeddings` reads back from it. With it, vectors
 * brought back in are known as the model's own: the model's calibrated threshold, margin and grade
 * cosines apply, the report names the model, and vectors of two models are not compared.
 * Not for: reading the vectors themselves (npy.h), or vectors made by other tools (they have no
 * such file and stay "brought in").
 */
#ifndef LA_VEC_ORIGIN_H
#define LA_VEC_ORIGIN_H

#include <stddef.h>

#include "leakaudit.h"

#define LA_VEC_ORIGIN_SUFFIX ".json"

typedef struct la_vec_origin {
    int present;             /* 0: there is no X.npy.json (the other fields are empty) */
    char model[256];         /* the model's folder name */
    char weights[80];        /* "blake2b-256:<hex>" of its weights, as `leakaudit models` shows */
    char vectors[65];        /* BLAKE2b-256 (hex) of the float32 values, row-major, little-endian */
    size_t rows, dim;
} la_vec_origin;

/* BLAKE2b-256 (hex) of rows x dim float32 values, as la_vec_origin.vectors holds it. */
void la_vec_origin_digest(const float *vec, size_t rows, size_t dim, char hex[65] /* OUT */);

/* Write npy_path + ".json" for the vectors vec (rows x dim) made by model (name, weights hash),
 * through a temporary file renamed into place. LA_EIO with the path and the reason. */
la_status la_vec_origin_write(const char *npy_path, const char *model, const char *weights, const float *vec,
                              size_t rows, size_t dim);

/* Read npy_path + ".json" into *out: out->present 0 when there is no such file. LA_EINPUT when it
 * is there but is not such a file (names the file and the field), LA_EIO when it cannot be read. */
la_status la_vec_origin_read(const char *npy_path, la_vec_origin *out /* OUT */);

/* Check that vectors read from npy_path (rows x dim float32, before any normalization) are the
 * ones its origin describes: LA_EINPUT naming both files and what differs otherwise. */
la_status la_vec_origin_check(const la_vec_origin *o, const char *npy_path, const float *vec, size_t rows, size_t dim);

#endif /* LA_VEC_ORIGIN_H */
