/*
 * safetensors.h - read tensors from a `.safetensors` file, memory-mapped.
 *
 * The format: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor name to
 * {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the end of the header),
 * an optional "__metadata__" object, then the raw little-endian data. The header is parsed with
 * json-c and every entry is checked against the file size before any tensor is read.
 * Supported element types for reading as float: F32, F16, BF16. Not for: writing (tests build
 * their own files), or integer tensors beyond being listed.
 */
#ifndef LA_SAFETENSORS_H
#define LA_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"

#define LA_ST_MAX_DIMS 8

typedef enum la_st_dtype { LA_ST_F32 = 1, LA_ST_F16, LA_ST_BF16, LA_ST_OTHER } la_st_dtype;

typedef struct la_st_tensor {
    char *name;
    la_st_dtype dtype;
    char dtype_name[16];
    int ndim;
    int64_t shape[LA_ST_MAX_DIMS];
    size_t nelem;
    const unsigned char *data;  /* into the mapping */
    size_t nbytes;
} la_st_tensor;

typedef struct la_safetensors la_safetensors;

/* Map `path` and parse its header. Errors: LA_EIO (cannot open/map), LA_EINPUT (bad header: the
 * message names the file and the tensor or field), LA_ENOMEM. Free with la_safetensors_free. */
la_status la_safetensors_open(const char *path, la_safetensors **out /* OUT */);
void la_safetensors_free(la_safetensors *st);

/* The tensor named `name`, or NULL. Borrowed: valid until la_safetensors_free. */
const la_st_tensor *la_safetensors_find(const la_safetensors *st, const char *name);
size_t la_safetensors_count(const la_safetensors *st);
const la_st_tensor *la_safetensors_at(const la_safetensors *st, size_t i);
const char *la_safetensors_path(const la_safetensors *st);

/* The tensor `name` converted to float32 into a new buffer (caller frees), checking its shape:
 * `ndim` dims equal to `shape` (a 0 in shape accepts any size there). Errors name the file, the
 * tensor and what was expected. */
la_status la_safetensors_read_f32(const la_safetensors *st, const char *name, int ndim, const int64_t *shape,
                                  float **out /* OUT */);

/* Like la_safetensors_read_f32, but an F32 tensor that is aligned in the mapping on a
 * little-endian host is not copied: *view points into the mapping (valid until
 * la_safetensors_free) and *owned is NULL. Otherwise *owned is the converted copy (caller frees)
 * and *view equals it. Values are checked to be finite either way. */
la_status la_safetensors_view_f32(const la_safetensors *st, const char *name, int ndim, const int64_t *shape,
                                  const float **view /* OUT */, float **owned /* OUT */);

/* The whole mapped file (for fingerprints): borrowed, valid until la_safetensors_free. */
const unsigned char *la_safetensors_bytes(const la_safetensors *st, size_t *size /* OUT */);

/* Map a regular file of at least min_size bytes (at least 1) read-only: *map and *size, unmapped
 * with munmap by the caller. Errors: LA_EIO (cannot open, not a regular file, cannot map) and
 * LA_EINPUT ("too short for <what>"), naming the file. Also used by host/e5s1.c. */
la_status la_file_map(const char *path, size_t min_size, const char *what, const unsigned char **map /* OUT */,
                      size_t *size /* OUT */);

/* bfloat16 to float (exact). */
float la_bf16_to_float(uint16_t h);

#endif /* LA_SAFETENSORS_H */
