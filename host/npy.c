/*
 * npy.c - the .npy reader (see npy.h). The header is a Python dict literal; only the three keys
 * NumPy writes ('descr', 'fortran_order', 'shape') are parsed, with just enough of the syntax.
 */
#include "npy.h"
#include "la_alloc.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

float la_half_to_float(unsigned short h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalize */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400u));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3FFu) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7F800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Find the value text that follows 'key': in the header dict; NULL when absent. */
static const char *dict_value(const char *hdr, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(hdr, pat);
    if (!p) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        p = strstr(hdr, pat);
    }
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

static la_status parse_header(const char *path, const char *hdr, int *elem, int *big,
                              size_t *rows, size_t *cols) {
    const char *v = dict_value(hdr, "descr");
    if (!v || (*v != '\'' && *v != '"'))
        return la_error(LA_EINPUT, "%s: .npy header has no 'descr'", path);
    char q = *v++;
    const char *e = strchr(v, q);
    if (!e) return la_error(LA_EINPUT, "%s: .npy header: unterminated 'descr'", path);
    size_t n = (size_t)(e - v);
    if (n == 3 && (v[0] == '<' || v[0] == '>' || v[0] == '=') && v[1] == 'f' &&
        (v[2] == '4' || v[2] == '2')) {
        *elem = v[2] - '0';
        *big = v[0] == '>';
    } else {
        return la_error(LA_EINPUT,
                        "%s: dtype '%.*s' is not supported: embeddings must be float32 ('<f4') or "
                        "float16 ('<f2'); convert with np.asarray(x, dtype=np.float32)",
                        path, (int)(n > 16 ? 16 : n), v);
    }
    v = dict_value(hdr, "fortran_order");
    if (!v) return la_error(LA_EINPUT, "%s: .npy header has no 'fortran_order'", path);
    if (strncmp(v, "False", 5) != 0)
        return la_error(LA_EINPUT, "%s: array is in Fortran order; save it in C order "
                        "(np.ascontiguousarray)", path);
    v = dict_value(hdr, "shape");
    if (!v || *v != '(') return la_error(LA_EINPUT, "%s: .npy header has no 'shape'", path);
    v++;
    size_t dims[3];
    int nd = 0;
    for (;;) {
        while (*v == ' ') v++;
        if (*v == ')') break;
        if (!isdigit((unsigned char)*v))
            return la_error(LA_EINPUT, "%s: .npy header: bad 'shape'", path);
        errno = 0;
        char *end;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno || x > SIZE_MAX) return la_error(LA_EINPUT, "%s: .npy header: bad 'shape'", path);
        if (nd < 3) dims[nd] = (size_t)x;
        nd++;
        v = end;
        while (*v == ' ') v++;
        if (*v == ',') v++;
    }
    if (nd != 2)
        return la_error(LA_EINPUT, "%s: array has %d dimension%s; embeddings must be 2-D "
                        "(rows x dims)", path, nd, nd == 1 ? "" : "s");
    *rows = dims[0];
    *cols = dims[1];
    return LA_OK;
}

/* Values per read of a row's data. */
#define NPY_CHUNK ((size_t)4096)

la_status la_npy_read(const char *path, size_t expect_rows, size_t expect_cols, float **out,
                      size_t *rows_out, size_t *cols_out) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return la_error(LA_EIO, "%s: cannot open: %s", path, strerror(errno));
    la_status st = LA_OK;
    unsigned char pre[12];
    char *hdr = NULL;
    unsigned char *raw = NULL;
    float *m = NULL;
    size_t hlen, pre_len;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        st = la_error(LA_EINPUT, "%s: not a .npy file (bad magic)", path);
        goto done;
    }
    if (pre[6] == 1) {
        hlen = pre[8] | (size_t)pre[9] << 8;
        pre_len = 10;
    } else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) {
            st = la_error(LA_EINPUT, "%s: truncated .npy header", path);
            goto done;
        }
        hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        pre_len = 12;
    } else {
        st = la_error(LA_EINPUT, "%s: unsupported .npy format version %d.%d", path, pre[6], pre[7]);
        goto done;
    }
    if (hlen > (1u << 20)) {
        st = la_error(LA_EINPUT, "%s: .npy header too long", path);
        goto done;
    }
    hdr = malloc(hlen + 1);
    if (!hdr) {
        st = la_error(LA_ENOMEM, "%s: out of memory", path);
        goto done;
    }
    if (fread(hdr, 1, hlen, f) != hlen) {
        st = la_error(LA_EINPUT, "%s: truncated .npy header", path);
        goto done;
    }
    hdr[hlen] = '\0';
    int elem = 4, big = 0;
    size_t rows = 0, cols = 0;
    if ((st = parse_header(path, hdr, &elem, &big, &rows, &cols)) != LA_OK) goto done;
    if (cols == 0) {
        st = la_error(LA_EINPUT, "%s: shape (%zu, 0): vectors have no dimensions", path, rows);
        goto done;
    }
    if (expect_cols && cols != expect_cols) {
        st = la_error(LA_EINPUT, "%s: shape (%zu, %zu): expected %zu dimensions", path, rows, cols,
                      expect_cols);
        goto done;
    }
    if (expect_rows && rows != expect_rows) {
        st = la_error(LA_EINPUT, "%s: %zu rows, but the partition has %zu input rows (one vector "
                      "per row, in input order)", path, rows, expect_rows);
        goto done;
    }
    if (rows > SIZE_MAX / cols / 4) {
        st = la_error(LA_EINPUT, "%s: shape (%zu, %zu) is too large", path, rows, cols);
        goto done;
    }
    /* the header is not trusted for an allocation: a regular file must hold exactly that many bytes */
    struct stat fs;
    int sized = fstat(fileno(f), &fs) == 0 && S_ISREG(fs.st_mode);
    if (sized) {
        size_t have = (size_t)fs.st_size > pre_len + hlen ? (size_t)fs.st_size - pre_len - hlen : 0;
        size_t need = rows * cols * (size_t)elem;
        if (have < need) {
            st = la_error(LA_EINPUT, "%s: row %zu: file ends early (header says %zu rows)", path,
                          have / (cols * (size_t)elem), rows);
            goto done;
        }
        if (have > need) {
            st = la_error(LA_EINPUT, "%s: data continues past the %zu rows the header declares", path, rows);
            goto done;
        }
    }
    size_t nval = rows * cols;
    /* values are read NPY_CHUNK at a time: a header of zero rows and a vast width (which a file of
     * no data bytes satisfies) takes no buffer of that width */
    size_t chunk = cols < NPY_CHUNK ? cols : NPY_CHUNK;
    /* a pipe has no size to check the header against: its matrix grows as values arrive */
    size_t capv = sized || nval < NPY_CHUNK * 256 ? nval : NPY_CHUNK * 256;
    m = la_malloc_n(capv, sizeof *m);
    raw = malloc(chunk * (size_t)elem);
    if (!m || !raw) {
        st = la_error(LA_ENOMEM, "%s: out of memory for %zu x %zu floats", path, rows, cols);
        goto done;
    }
    for (size_t r = 0; r < rows; r++) {
        for (size_t c0 = 0; c0 < cols; c0 += chunk) {
            size_t k = cols - c0 < chunk ? cols - c0 : chunk;
            if (fread(raw, (size_t)elem, k, f) != k) {
                st = la_error(LA_EINPUT, "%s: row %zu: file ends early (header says %zu rows)", path, r, rows);
                goto done;
            }
            if (!la_grow((void **)&m, &capv, r * cols + c0 + k, sizeof *m, NPY_CHUNK)) {
                st = la_error(LA_ENOMEM, "%s: out of memory for %zu x %zu floats", path, rows, cols);
                goto done;
            }
            for (size_t c = c0; c < c0 + k; c++) {
                const unsigned char *b = raw + (c - c0) * (size_t)elem;
                float x;
                if (elem == 4) {
                    uint32_t u = big ? (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]
                                     : (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
                    memcpy(&x, &u, sizeof x);
                } else {
                    unsigned short u = big ? (unsigned short)(b[0] << 8 | b[1]) : (unsigned short)(b[1] << 8 | b[0]);
                    x = la_half_to_float(u);
                }
                if (!isfinite(x)) {
                    st = la_error(LA_EINPUT, "%s: row %zu: column %zu: value is %s", path, r, c,
                                  isnan(x) ? "NaN" : "infinite");
                    goto done;
                }
                m[r * cols + c] = x;
            }
        }
    }
    if (fgetc(f) != EOF) {
        st = la_error(LA_EINPUT, "%s: data continues past the %zu rows the header declares", path,
                      rows);
        goto done;
    }
    *out = m;
    m = NULL;
    *rows_out = rows;
    *cols_out = cols;
done:
    fclose(f);
    free(hdr);
    free(raw);
    free(m);
    return st;
}

la_status la_npy_write(const char *path, const float *data, size_t rows, size_t cols) {
    char dict[128];
    int n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, %zu), }",
                     rows, cols);
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)n + pad + 1;
    FILE *f = fopen(path, "wb");
    if (!f) return la_error(LA_EIO, "%s: cannot create: %s", path, strerror(errno));
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)(hlen & 0xFF), (unsigned char)(hlen >> 8)};
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, (size_t)n, f) == (size_t)n;
    for (size_t i = 0; ok && i < pad; i++) ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF;
    /* little-endian hosts only write floats as they are; others byte-swap */
    for (size_t i = 0; ok && i < rows * cols; i++) {
        uint32_t u;
        memcpy(&u, &data[i], sizeof u);
        unsigned char b[4] = {(unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16),
                              (unsigned char)(u >> 24)};
        ok = fwrite(b, 1, 4, f) == 4;
    }
    if (fclose(f) != 0) ok = 0;
    if (!ok) return la_error(LA_EIO, "%s: write failed", path);
    return LA_OK;
}
