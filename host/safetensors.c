/*
 * safetensors.c - the safetensors reader (see safetensors.h). The whole file is mapped read-only;
 * tensors point into the mapping, and conversions to float32 are copies.
 */
#include "safetensors.h"
#include "la_alloc.h"

#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct la_safetensors {
    char *path;
    unsigned char *map;
    size_t size;
    la_st_tensor *t;
    size_t n;
};

float la_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static size_t dtype_size(la_st_dtype d, const char *name)
{
    switch (d) {
    case LA_ST_F32: return 4;
    case LA_ST_F16:
    case LA_ST_BF16: return 2;
    default: break;
    }
    static const struct { const char *n; size_t s; } other[] = {
        {"F64", 8}, {"I64", 8}, {"U64", 8}, {"I32", 4}, {"U32", 4}, {"I16", 2},
        {"U16", 2}, {"I8", 1},  {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
    for (size_t k = 0; k < sizeof other / sizeof *other; k++)
        if (!strcmp(other[k].n, name)) return other[k].s;
    return 0;
}

void la_safetensors_free(la_safetensors *st)
{
    if (!st) return;
    for (size_t i = 0; i < st->n; i++) free(st->t[i].name);
    free(st->t);
    if (st->map && st->map != MAP_FAILED) munmap(st->map, st->size);
    free(st->path);
    free(st);
}

static la_status parse_entry(la_safetensors *st, const char *name, json_object *v, size_t data_begin, la_st_tensor *t)
{
    const char *f = st->path;
    json_object *dt, *shape, *off;
    if (!json_object_is_type(v, json_type_object))
        return la_error(LA_EINPUT, "%s: tensor '%s': header entry is not an object", f, name);
    if (!json_object_object_get_ex(v, "dtype", &dt) || !json_object_is_type(dt, json_type_string))
        return la_error(LA_EINPUT, "%s: tensor '%s': field 'dtype' missing or not a string", f, name);
    if (!json_object_object_get_ex(v, "shape", &shape) || !json_object_is_type(shape, json_type_array))
        return la_error(LA_EINPUT, "%s: tensor '%s': field 'shape' missing or not an array", f, name);
    if (!json_object_object_get_ex(v, "data_offsets", &off) || !json_object_is_type(off, json_type_array) ||
        json_object_array_length(off) != 2)
        return la_error(LA_EINPUT, "%s: tensor '%s': field 'data_offsets' must be an array [begin, end]", f, name);
    const char *dn = json_object_get_string(dt);
    snprintf(t->dtype_name, sizeof t->dtype_name, "%s", dn);
    t->dtype = !strcmp(dn, "F32") ? LA_ST_F32 : !strcmp(dn, "F16") ? LA_ST_F16 : !strcmp(dn, "BF16") ? LA_ST_BF16
                                                                                                  : LA_ST_OTHER;
    size_t es = dtype_size(t->dtype, dn);
    if (!es) return la_error(LA_EINPUT, "%s: tensor '%s': field 'dtype': unknown type '%s'", f, name, dn);
    size_t nd = json_object_array_length(shape);
    if (nd > LA_ST_MAX_DIMS)
        return la_error(LA_EINPUT, "%s: tensor '%s': field 'shape': %zu dimensions (at most %d)", f, name, nd,
                        LA_ST_MAX_DIMS);
    t->ndim = (int)nd;
    size_t nelem = 1;
    for (size_t k = 0; k < nd; k++) {
        json_object *d = json_object_array_get_idx(shape, k);
        if (!json_object_is_type(d, json_type_int) || json_object_get_int64(d) < 0)
            return la_error(LA_EINPUT, "%s: tensor '%s': field 'shape': dimension %zu is not a non-negative integer", f,
                            name, k);
        t->shape[k] = json_object_get_int64(d);
        if (t->shape[k] && nelem > SIZE_MAX / (size_t)t->shape[k])
            return la_error(LA_EINPUT, "%s: tensor '%s': field 'shape': too many elements", f, name);
        nelem *= (size_t)t->shape[k];
    }
    t->nelem = nelem;
    json_object *b = json_object_array_get_idx(off, 0), *e = json_object_array_get_idx(off, 1);
    if (!json_object_is_type(b, json_type_int) || !json_object_is_type(e, json_type_int) ||
        json_object_get_int64(b) < 0 || json_object_get_int64(e) < json_object_get_int64(b))
        return la_error(LA_EINPUT, "%s: tensor '%s': field 'data_offsets': expected 0 <= begin <= end", f, name);
    size_t ob = (size_t)json_object_get_int64(b), oe = (size_t)json_object_get_int64(e);
    if (nelem > SIZE_MAX / es || oe - ob != nelem * es)
        return la_error(LA_EINPUT, "%s: tensor '%s': field 'data_offsets': %zu bytes for %zu elements of %s", f, name,
                        oe - ob, nelem, dn);
    if (oe > st->size - data_begin)
        return la_error(LA_EINPUT, "%s: tensor '%s': field 'data_offsets': data ends at byte %zu, past the end of "
                        "the file (%zu bytes of data): the file is truncated", f, name, oe, st->size - data_begin);
    t->data = st->map + data_begin + ob;
    t->nbytes = oe - ob;
    return LA_OK;
}

la_status la_file_map(const char *path, size_t min_size, const char *what, const unsigned char **map, size_t *size)
{
    *map = NULL;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return la_error(LA_EIO, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return la_error(LA_EIO, "%s: not a regular file", path);
    }
    if ((size_t)sb.st_size < min_size || sb.st_size == 0) {
        close(fd);
        return la_error(LA_EINPUT, "%s: %zu bytes: too short for %s", path, (size_t)sb.st_size, what);
    }
    void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return la_error(LA_EIO, "%s: mmap: %s", path, strerror(errno));
    *map = p;
    *size = (size_t)sb.st_size;
    return LA_OK;
}

la_status la_safetensors_open(const char *path, la_safetensors **out)
{
    *out = NULL;
    la_safetensors *st = calloc(1, sizeof *st);
    if (!st || !(st->path = strdup(path))) {
        free(st);
        return la_error(LA_ENOMEM, "out of memory");
    }
    const unsigned char *map;
    la_status ms = la_file_map(path, 8, "a safetensors file (8-byte header length)", &map, &st->size);
    if (ms != LA_OK) {
        la_safetensors_free(st);
        return ms;
    }
    st->map = (unsigned char *)map;
    uint64_t hlen = 0;
    for (int k = 7; k >= 0; k--) hlen = hlen << 8 | st->map[k];
    la_status s = LA_OK;
    json_object *root = NULL;
    if (hlen == 0 || hlen > st->size - 8 || hlen > (100u << 20)) {
        s = la_error(LA_EINPUT, "%s: header length %llu does not fit the file (%zu bytes): not a safetensors file or "
                     "truncated", path, (unsigned long long)hlen, st->size);
        goto done;
    }
    json_tokener *tok = json_tokener_new();
    if (!tok) {
        s = la_error(LA_ENOMEM, "out of memory");
        goto done;
    }
    root = json_tokener_parse_ex(tok, (const char *)st->map + 8, (int)hlen);
    enum json_tokener_error je = json_tokener_get_error(tok);
    json_tokener_free(tok);
    if (!root || je != json_tokener_success) {
        s = la_error(LA_EINPUT, "%s: header: invalid JSON (%s)", path,
                     je == json_tokener_success ? "incomplete" : json_tokener_error_desc(je));
        goto done;
    }
    if (!json_object_is_type(root, json_type_object)) {
        s = la_error(LA_EINPUT, "%s: header: expected a JSON object", path);
        goto done;
    }
    size_t cap = (size_t)json_object_object_length(root) + 1;
    st->t = calloc(cap, sizeof *st->t);
    if (!st->t) {
        s = la_error(LA_ENOMEM, "out of memory");
        goto done;
    }
    json_object_object_foreach(root, key, val) {
        if (!strcmp(key, "__metadata__")) continue;
        la_st_tensor *t = &st->t[st->n];
        if (!(t->name = strdup(key))) {
            s = la_error(LA_ENOMEM, "out of memory");
            goto done;
        }
        st->n++;
        if ((s = parse_entry(st, key, val, 8 + (size_t)hlen, t)) != LA_OK) goto done;
    }
done:
    json_object_put(root);
    if (s != LA_OK) {
        la_safetensors_free(st);
        return s;
    }
    *out = st;
    return LA_OK;
}

const la_st_tensor *la_safetensors_find(const la_safetensors *st, const char *name)
{
    for (size_t i = 0; i < st->n; i++)
        if (!strcmp(st->t[i].name, name)) return &st->t[i];
    return NULL;
}

size_t la_safetensors_count(const la_safetensors *st) { return st->n; }
const la_st_tensor *la_safetensors_at(const la_safetensors *st, size_t i) { return i < st->n ? &st->t[i] : NULL; }
const char *la_safetensors_path(const la_safetensors *st) { return st->path; }

const unsigned char *la_safetensors_bytes(const la_safetensors *st, size_t *size)
{
    *size = st->size;
    return st->map;
}

/* The tensor, checked against the expected shape and for a float type. */
static la_status lookup_float(const la_safetensors *st, const char *name, int ndim, const int64_t *shape,
                              const la_st_tensor **out)
{
    const la_st_tensor *t = la_safetensors_find(st, name);
    if (!t) return la_error(LA_EINPUT, "%s: tensor '%s' is missing", st->path, name);
    int ok = t->ndim == ndim;
    for (int k = 0; ok && k < ndim; k++) ok = !shape[k] || shape[k] == t->shape[k];
    if (!ok) {
        char want[128] = "", got[128] = "";
        for (int k = 0; k < ndim; k++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", k ? ", " : "", (long long)shape[k]);
        for (int k = 0; k < t->ndim; k++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", k ? ", " : "", (long long)t->shape[k]);
        return la_error(LA_EINPUT, "%s: tensor '%s': field 'shape' is [%s], expected [%s] (from config.json)",
                        st->path, name, got, want);
    }
    if (t->dtype == LA_ST_OTHER)
        return la_error(LA_EINPUT, "%s: tensor '%s': field 'dtype' is %s; F32, F16 or BF16 expected", st->path, name,
                        t->dtype_name);
    *out = t;
    return LA_OK;
}

la_status la_safetensors_view_f32(const la_safetensors *st, const char *name, int ndim, const int64_t *shape,
                                  const float **view, float **owned)
{
    *view = NULL;
    *owned = NULL;
    const la_st_tensor *t;
    LA_TRY(lookup_float(st, name, ndim, shape, &t));
    const uint16_t probe = 1;
    int little = *(const unsigned char *)&probe == 1;
    if (t->dtype == LA_ST_F32 && little && (uintptr_t)t->data % sizeof(float) == 0) {
        const float *f = (const float *)(const void *)t->data;
        for (size_t i = 0; i < t->nelem; i++)
            if (!(f[i] - f[i] == 0))
                return la_error(LA_EINPUT, "%s: tensor '%s': element %zu is %s", st->path, name, i,
                                f[i] != f[i] ? "NaN" : "infinite");
        *view = f;
        return LA_OK;
    }
    LA_TRY(la_safetensors_read_f32(st, name, ndim, shape, owned));
    *view = *owned;
    return LA_OK;
}

la_status la_safetensors_read_f32(const la_safetensors *st, const char *name, int ndim, const int64_t *shape,
                                  float **out)
{
    *out = NULL;
    const la_st_tensor *t;
    LA_TRY(lookup_float(st, name, ndim, shape, &t));
    float *f = la_malloc_n(t->nelem, sizeof *f);
    if (!f) return la_error(LA_ENOMEM, "out of memory for tensor '%s' (%zu values)", name, t->nelem);
    const unsigned char *p = t->data;
    for (size_t i = 0; i < t->nelem; i++) {
        if (t->dtype == LA_ST_F32) {
            uint32_t b = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
                         (uint32_t)p[4 * i + 3] << 24;
            memcpy(&f[i], &b, 4);
        } else {
            uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
            f[i] = t->dtype == LA_ST_F16 ? la_half_to_float(h) : la_bf16_to_float(h);
        }
        if (f[i] != f[i] || f[i] - f[i] != 0) {
            const char *what = f[i] != f[i] ? "NaN" : "infinite";
            free(f);
            return la_error(LA_EINPUT, "%s: tensor '%s': element %zu is %s", st->path, name, i, what);
        }
    }
    *out = f;
    return LA_OK;
}
