/*
 * embed_cache.c - the encoder's vectors kept between runs (see embed_cache.h): the file read whole
 * and checked, entries in growable arrays with an open-addressing table on the text key, the file
 * written back whole through a temporary name.
 */
#include "embed_cache.h"
#include "input.h"

#include <errno.h>
#include "la_blake2b.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "la_alloc.h"

#define MAGIC "LAEMBC01"
#define ORDER 0x0A0B0C0Du
#define VERSION 1u

typedef struct entry {
    unsigned char key[16];
    uint32_t win, nwin;
    size_t at; /* first window in the begin/end/vec arrays */
} entry;

struct la_embed_cache {
    char path[4096], dir[4096];
    char *settings;
    size_t dim;
    entry *e;
    size_t n, cap;
    uint32_t *span; /* begin, end per window */
    float *vec;
    size_t nw, capw;
    size_t *slot; /* entry index + 1, 0 empty; nslot a power of two */
    size_t nslot;
};

void la_embed_cache_key(const char *text, size_t len, unsigned char key[LA_EMBED_CACHE_KEY])
{
    la_blake2b(key, LA_EMBED_CACHE_KEY, (const unsigned char *)text, len, NULL, 0);
}

static size_t slot_of(const la_embed_cache *c, const unsigned char key[16])
{
    size_t h;
    memcpy(&h, key, sizeof h);
    size_t i = h & (c->nslot - 1);
    while (c->slot[i] && memcmp(c->e[c->slot[i] - 1].key, key, 16)) i = (i + 1) & (c->nslot - 1);
    return i;
}

static la_status grow_slots(la_embed_cache *c)
{
    if (c->nslot && 2 * (c->n + 1) <= c->nslot) return LA_OK;
    size_t ns = c->nslot ? 2 * c->nslot : 1024;
    size_t *s = calloc(ns, sizeof *s);
    if (!s) return la_error(LA_ENOMEM, "out of memory");
    free(c->slot);
    c->slot = s;
    c->nslot = ns;
    for (size_t k = 0; k < c->n; k++) c->slot[slot_of(c, c->e[k].key)] = k + 1;
    return LA_OK;
}

/* Room for one more entry and nwin more windows. */
static la_status reserve(la_embed_cache *c, size_t nwin)
{
    LA_TRY(grow_slots(c));
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 256;
        entry *e = la_realloc_n(c->e, nc, sizeof *e);
        if (!e) return la_error(LA_ENOMEM, "out of memory");
        c->e = e, c->cap = nc;
    }
    if (c->nw + nwin > c->capw) {
        size_t nc = c->capw ? 2 * c->capw : 256;
        while (nc < c->nw + nwin) nc *= 2;
        uint32_t *s = la_realloc_n(c->span, 2 * nc, sizeof *s);
        if (s) c->span = s;
        float *v = s ? la_realloc_n(c->vec, nc, c->dim * sizeof *v) : NULL;
        if (!v) return la_error(LA_ENOMEM, "out of memory");
        c->vec = v, c->capw = nc;
    }
    return LA_OK;
}

static la_status add(la_embed_cache *c, const unsigned char key[16], uint32_t win, size_t nwin, const uint32_t *span,
                     const void *vec /* nwin x dim floats, maybe unaligned */)
{
    LA_TRY(reserve(c, nwin));
    size_t i = slot_of(c, key);
    if (!c->slot[i]) c->slot[i] = ++c->n;
    entry *e = &c->e[c->slot[i] - 1];
    memcpy(e->key, key, 16);
    e->win = win, e->nwin = (uint32_t)nwin, e->at = c->nw; /* a replaced entry's old windows stay unused */
    memcpy(c->span + 2 * c->nw, span, 2 * nwin * sizeof *span);
    memcpy(c->vec + c->nw * c->dim, vec, nwin * c->dim * sizeof(float));
    c->nw += nwin;
    return LA_OK;
}

/* A little reader over the file's bytes: 0 once it runs past the end. */
typedef struct reader {
    const unsigned char *p;
    size_t left;
} reader;

static int take(reader *r, void *dst, size_t n)
{
    if (n > r->left) return 0;
    memcpy(dst, r->p, n);
    r->p += n, r->left -= n;
    return 1;
}

/* Parse a whole file into c; a short reason in why when it does not check out. */
static int parse(la_embed_cache *c, const unsigned char *buf, size_t size, const char **why)
{
    unsigned char sum[32];
    if (size < 8 + 16 + 8 + 32 || memcmp(buf, MAGIC, 8)) return *why = "not a leakaudit embedding cache", 0;
    la_blake2b(sum, sizeof sum, buf, size - 32, NULL, 0);
    if (memcmp(sum, buf + size - 32, 32)) return *why = "its checksum does not match (damaged or cut short)", 0;
    reader r = {buf + 8, size - 8 - 32};
    uint32_t order, version, dim, slen;
    uint64_t n;
    if (!take(&r, &order, 4) || order != ORDER) return *why = "written on a machine of another byte order", 0;
    if (!take(&r, &version, 4) || version != VERSION) return *why = "another format version", 0;
    if (!take(&r, &dim, 4) || dim != c->dim || !take(&r, &slen, 4) || slen != strlen(c->settings) ||
        slen > r.left || memcmp(r.p, c->settings, slen))
        return *why = "made under other settings", 0;
    r.p += slen, r.left -= slen;
    if (!take(&r, &n, 8)) return *why = "cut short", 0;
    uint32_t *span = NULL;
    int ok = 1;
    for (uint64_t k = 0; k < n && ok; k++) {
        unsigned char key[16];
        uint32_t win, nwin;
        ok = take(&r, key, 16) && take(&r, &win, 4) && take(&r, &nwin, 4) && nwin &&
             (size_t)nwin * (2 * 4 + c->dim * 4) <= r.left;
        if (!ok) break;
        span = la_realloc_n(span, 2 * (size_t)nwin, sizeof *span);
        ok = span && take(&r, span, 2 * (size_t)nwin * 4) && add(c, key, win, nwin, span, r.p) == LA_OK;
        r.p += (size_t)nwin * c->dim * 4, r.left -= (size_t)nwin * c->dim * 4;
    }
    free(span);
    if (!ok || r.left) return *why = "its entries do not add up", 0;
    return 1;
}

static void reset(la_embed_cache *c)
{
    c->n = c->nw = 0;
    if (c->slot) memset(c->slot, 0, c->nslot * sizeof *c->slot);
}

static la_status load(la_embed_cache *c, char *note, size_t cap)
{
    struct stat sb;
    if (stat(c->path, &sb) != 0) {
        if (errno == ENOENT) return LA_OK;
        return la_error(LA_EIO, "--cache: %s: %s", c->path, strerror(errno));
    }
    la_input in;
    la_status s = la_input_read(c->path, NULL, &in);
    if (s == LA_ENOMEM) return s;
    const char *why = "a read error";
    if (s != LA_OK || !parse(c, (const unsigned char *)in.data, in.len, &why)) {
        reset(c);
        snprintf(note, cap, "the cache file %s was ignored (%s) and is rewritten at the end of the run", c->path, why);
    }
    if (s == LA_OK) la_input_free(&in);
    return LA_OK;
}

la_status la_embed_cache_open(const char *dir, const char *settings, size_t dim, la_embed_cache **out, char *note,
                              size_t cap)
{
    *out = NULL;
    note[0] = 0;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return la_error(LA_EIO, "--cache %s: %s", dir, strerror(errno));
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return la_error(LA_EIO, "--cache %s: not a folder", dir);
    la_embed_cache *c = calloc(1, sizeof *c);
    if (!c || !(c->settings = strdup(settings))) {
        free(c);
        return la_error(LA_ENOMEM, "out of memory");
    }
    c->dim = dim;
    unsigned char h[32];
    la_blake2b(h, sizeof h, (const unsigned char *)settings, strlen(settings), NULL, 0);
    snprintf(c->dir, sizeof c->dir, "%s", dir);
    int k = snprintf(c->path, sizeof c->path, "%s/embed-", dir);
    for (int i = 0; i < 8; i++) k += snprintf(c->path + k, sizeof c->path - (size_t)k, "%02x", h[i]);
    snprintf(c->path + k, sizeof c->path - (size_t)k, ".lacache");
    la_status s = load(c, note, cap);
    if (s != LA_OK) {
        la_embed_cache_free(c);
        return s;
    }
    *out = c;
    return LA_OK;
}

const char *la_embed_cache_path(const la_embed_cache *c) { return c->path; }

void la_embed_cache_free(la_embed_cache *c)
{
    if (!c) return;
    free(c->settings);
    free(c->e);
    free(c->span);
    free(c->vec);
    free(c->slot);
    free(c);
}

int la_embed_cache_get(const la_embed_cache *c, const unsigned char key[LA_EMBED_CACHE_KEY], uint32_t win,
                       size_t *nwin, const uint32_t **begin, const uint32_t **end, const float **vec)
{
    if (!c->n) return 0;
    size_t i = slot_of(c, key);
    if (!c->slot[i]) return 0;
    const entry *e = &c->e[c->slot[i] - 1];
    if (e->win && e->win != win) return 0;
    *nwin = e->nwin;
    *begin = c->span + 2 * e->at;
    *end = c->span + 2 * e->at + 1;
    *vec = c->vec + e->at * c->dim;
    return 1;
}

la_status la_embed_cache_put(la_embed_cache *c, const unsigned char key[LA_EMBED_CACHE_KEY], uint32_t win,
                             size_t nwin, const uint32_t *begin, const uint32_t *end, const float *vec)
{
    uint32_t *span = la_malloc_n(2 * nwin, sizeof *span);
    if (!span) return la_error(LA_ENOMEM, "out of memory");
    for (size_t w = 0; w < nwin; w++) span[2 * w] = begin[w], span[2 * w + 1] = end[w];
    la_status s = add(c, key, win, nwin, span, vec);
    free(span);
    return s;
}

/* fwrite into the file and the running checksum. */
static int put(FILE *f, la_blake2b_state *st, const void *p, size_t n)
{
    la_blake2b_update(st, p, n);
    return fwrite(p, 1, n, f) == n;
}

la_status la_embed_cache_save(la_embed_cache *c, char *path, size_t cap)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", c->path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return la_error(LA_EIO, "--cache: %s: %s", tmp, strerror(errno));
    la_blake2b_state st;
    la_blake2b_init(&st, NULL, 0, 32);
    uint32_t head[4] = {ORDER, VERSION, (uint32_t)c->dim, (uint32_t)strlen(c->settings)};
    uint64_t n = c->n;
    int ok = put(f, &st, MAGIC, 8) && put(f, &st, head, sizeof head) && put(f, &st, c->settings, head[3]) &&
             put(f, &st, &n, 8);
    for (size_t k = 0; ok && k < c->n; k++) {
        const entry *e = &c->e[k];
        ok = put(f, &st, e->key, 16) && put(f, &st, &e->win, 4) && put(f, &st, &e->nwin, 4) &&
             put(f, &st, c->span + 2 * e->at, 2 * (size_t)e->nwin * 4) &&
             put(f, &st, c->vec + e->at * c->dim, (size_t)e->nwin * c->dim * 4);
    }
    unsigned char sum[32];
    la_blake2b_final(&st, sum, sizeof sum);
    ok = ok && fwrite(sum, 1, 32, f) == 32;
    /* on disk before the rename, so that after a crash the name holds the old file or the new */
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, c->path) != 0) {
        int err = errno;
        unlink(tmp);
        return la_error(LA_EIO, "--cache: writing %s: %s", c->path, strerror(err));
    }
    snprintf(path, cap, "%s", c->path);
    return LA_OK;
}
