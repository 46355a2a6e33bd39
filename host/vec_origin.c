/*
 * vec_origin.c - the origin file beside a .npy of sentence vectors (see vec_origin.h).
 */
#include "vec_origin.h"
#include "buf.h"

#include <errno.h>
#include <json-c/json.h>
#include "la_blake2b.h"
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void la_vec_origin_digest(const float *vec, size_t rows, size_t dim, char hex[65])
{
    unsigned char d[32];
    la_blake2b(d, sizeof d, (const unsigned char *)vec, (unsigned long long)(rows * dim * sizeof *vec), NULL, 0);
    sodium_bin2hex(hex, 65, d, sizeof d);
}

static char *origin_path(const char *npy_path)
{
    size_t n = strlen(npy_path);
    char *p = malloc(n + sizeof LA_VEC_ORIGIN_SUFFIX);
    if (p) {
        memcpy(p, npy_path, n);
        memcpy(p + n, LA_VEC_ORIGIN_SUFFIX, sizeof LA_VEC_ORIGIN_SUFFIX);
    }
    return p;
}

la_status la_vec_origin_write(const char *npy_path, const char *model, const char *weights, const float *vec,
                              size_t rows, size_t dim)
{
    char hex[65];
    la_vec_origin_digest(vec, rows, dim, hex);
    la_buf b = {0};
    la_buf_puts(&b, "{\"made_by\": \"leakaudit embed\", \"model\": ");
    la_buf_json_str(&b, model);
    la_buf_puts(&b, ", \"weights\": ");
    la_buf_json_str(&b, weights);
    la_buf_printf(&b, ", \"rows\": %zu, \"dim\": %zu, \"dtype\": \"float32\", \"vectors_blake2b_256\": \"%s\"}\n", rows,
                  dim, hex);
    char *path = origin_path(npy_path), *tmp = path ? malloc(strlen(path) + 8) : NULL;
    la_status s = la_buf_status(&b) == LA_OK && path && tmp ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    if (s == LA_OK) {
        sprintf(tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        int ok = f && fwrite(b.p, 1, b.n, f) == b.n;
        if (f && fclose(f) != 0) ok = 0;
        if (!ok || rename(tmp, path) != 0) {
            s = la_error(LA_EIO, "%s: cannot write: %s", path, strerror(errno));
            unlink(tmp);
        }
    }
    free(path);
    free(tmp);
    la_buf_free(&b);
    return s;
}

static la_status bad(const char *path, const char *field, const char *expected)
{
    return la_error(LA_EINPUT, "%s: %s: expected %s (the file `leakaudit embed` writes beside its vectors; embed "
                               "again, or remove it to bring the vectors in without a model)",
                    path, field, expected);
}

static int get_string(json_object *o, const char *field, char *dst, size_t cap)
{
    json_object *v;
    if (!json_object_object_get_ex(o, field, &v) || !json_object_is_type(v, json_type_string)) return 0;
    const char *s = json_object_get_string(v);
    size_t n = (size_t)json_object_get_string_len(v);
    if (!n || n >= cap || memchr(s, '\0', n)) return 0;
    memcpy(dst, s, n + 1);
    return 1;
}

static int get_size(json_object *o, const char *field, size_t *dst)
{
    json_object *v;
    if (!json_object_object_get_ex(o, field, &v) || !json_object_is_type(v, json_type_int)) return 0;
    int64_t x = json_object_get_int64(v);
    if (x < 0) return 0;
    *dst = (size_t)x;
    return 1;
}

static int is_hex64(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))) return 0;
    return n == 64;
}

la_status la_vec_origin_read(const char *npy_path, la_vec_origin *out)
{
    memset(out, 0, sizeof *out);
    char *path = origin_path(npy_path);
    if (!path) return la_error(LA_ENOMEM, "out of memory");
    struct stat sb;
    if (stat(path, &sb) != 0) {
        free(path);
        return LA_OK;
    }
    la_status s = LA_OK;
    json_object *root = json_object_from_file(path);
    char dtype[16];
    if (!root || !json_object_is_type(root, json_type_object)) s = bad(path, "the file", "one JSON object");
    else if (!get_string(root, "model", out->model, sizeof out->model)) s = bad(path, "model", "a model name");
    else if (!get_string(root, "weights", out->weights, sizeof out->weights)) s = bad(path, "weights", "a weights hash");
    else if (!get_size(root, "rows", &out->rows)) s = bad(path, "rows", "a count");
    else if (!get_size(root, "dim", &out->dim) || !out->dim) s = bad(path, "dim", "a positive count");
    else if (!get_string(root, "dtype", dtype, sizeof dtype) || strcmp(dtype, "float32")) s = bad(path, "dtype", "\"float32\"");
    else if (!get_string(root, "vectors_blake2b_256", out->vectors, sizeof out->vectors) || !is_hex64(out->vectors))
        s = bad(path, "vectors_blake2b_256", "64 lowercase hex digits");
    else out->present = 1;
    if (root) json_object_put(root);
    free(path);
    if (s != LA_OK) memset(out, 0, sizeof *out);
    return s;
}

la_status la_vec_origin_check(const la_vec_origin *o, const char *npy_path, const float *vec, size_t rows, size_t dim)
{
    if (!o->present) return LA_OK;
    if (o->rows != rows || o->dim != dim)
        return la_error(LA_EINPUT, "%s%s describes %zu x %zu vectors, and %s holds %zu x %zu: embed again, or remove "
                                   "%s%s to bring the vectors in without a model",
                        npy_path, LA_VEC_ORIGIN_SUFFIX, o->rows, o->dim, npy_path, rows, dim, npy_path,
                        LA_VEC_ORIGIN_SUFFIX);
    char hex[65];
    la_vec_origin_digest(vec, rows, dim, hex);
    if (strcmp(hex, o->vectors))
        return la_error(LA_EINPUT, "%s%s describes other vectors than %s holds (their BLAKE2b-256 differs: the .npy "
                                   "changed since `leakaudit embed` wrote it): embed again, or remove %s%s to bring "
                                   "the vectors in without a model",
                        npy_path, LA_VEC_ORIGIN_SUFFIX, npy_path, npy_path, LA_VEC_ORIGIN_SUFFIX);
    return LA_OK;
}
