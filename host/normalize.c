/* normalize.c - text normalization and exact-copy hashing (see normalize.h). */
#include "normalize.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <utf8proc.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

la_status la_norm_mode_parse(const char *s, la_norm_mode *out)
{
    if (!strcmp(s, "nfkc")) *out = LA_NORM_NFKC;
    else if (!strcmp(s, "space")) *out = LA_NORM_SPACE;
    else if (!strcmp(s, "none")) *out = LA_NORM_NONE;
    else return la_error(LA_EINVAL, "--normalize: unknown mode '%s' (expected nfkc, space or none)", s);
    return LA_OK;
}

const char *la_norm_mode_name(la_norm_mode m)
{
    return m == LA_NORM_NFKC ? "nfkc" : m == LA_NORM_SPACE ? "space" : "none";
}

static int is_space_cp(utf8proc_int32_t c)
{
    if (c == ' ' || (c >= 9 && c <= 13) || c == 0x85) return 1;
    if (c < 0x80) return 0;
    utf8proc_category_t cat = utf8proc_category(c);
    return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

/* Collapse whitespace runs in place; returns the new length. */
static size_t collapse_space(char *s, size_t n)
{
    size_t w = 0, i = 0;
    int pending = 0;
    while (i < n) {
        utf8proc_int32_t c;
        utf8proc_ssize_t adv = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &c);
        if (adv <= 0) adv = 1, c = -1;
        if (c >= 0 && is_space_cp(c)) {
            pending = w > 0;
        } else {
            if (pending) s[w++] = ' ';
            pending = 0;
            memmove(s + w, s + i, (size_t)adv);
            w += (size_t)adv;
        }
        i += (size_t)adv;
    }
    s[w] = '\0';
    return w;
}

la_status la_normalize(const char *s, size_t n, la_norm_mode mode, char **out, size_t *outlen)
{
    char *r;
    size_t len;
    if (mode == LA_NORM_NFKC) {
        utf8proc_uint8_t *dst = NULL;
        utf8proc_ssize_t m = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &dst,
                                          UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD);
        if (m < 0) return la_error(LA_EINPUT, "text: cannot normalize: %s", utf8proc_errmsg(m));
        r = (char *)dst;
        len = (size_t)m;
    } else {
        r = malloc(n + 1);
        if (!r) return la_error(LA_ENOMEM, "out of memory normalizing text");
        memcpy(r, s, n);
        r[n] = '\0';
        len = n;
    }
    if (mode != LA_NORM_NONE) len = collapse_space(r, len);
    *out = r;
    *outlen = len;
    return LA_OK;
}

void la_text_hash128(const char *s, size_t n, uint64_t out[2])
{
    XXH128_hash_t h = XXH3_128bits(s, n);
    out[0] = h.low64;
    out[1] = h.high64;
}

typedef struct norm_job {
    la_table *t;
    la_norm_mode mode;
    size_t begin, end;
    char **tmp;      /* per-row malloc'ed normalized text, copied into the arena afterwards */
    size_t *tmplen;
    la_status st;
    char err[256];
} norm_job;

static void *norm_worker(void *arg)
{
    norm_job *j = arg;
    la_row *rows = la_table_rows(j->t);
    for (size_t i = j->begin; i < j->end; i++) {
        if (!rows[i].text) continue;
        la_status s = la_normalize(rows[i].text, strlen(rows[i].text), j->mode, &j->tmp[i], &j->tmplen[i]);
        if (s != LA_OK) {
            j->st = s;
            strncpy(j->err, la_last_error(), sizeof j->err - 1);
            return NULL;
        }
        la_text_hash128(j->tmp[i], j->tmplen[i], rows[i].hash);
    }
    return NULL;
}

la_status la_normalize_table(la_table *t, la_norm_mode mode, int threads)
{
    size_t n = la_table_nrows(t);
    if (threads <= 0) threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    if ((size_t)threads > n / 256 + 1) threads = (int)(n / 256 + 1);
    char **tmp = calloc(n ? n : 1, sizeof *tmp);
    size_t *tmplen = calloc(n ? n : 1, sizeof *tmplen);
    norm_job jobs[64];
    pthread_t tid[64];
    if (!tmp || !tmplen) {
        free(tmp);
        free(tmplen);
        return la_error(LA_ENOMEM, "out of memory normalizing %zu rows", n);
    }
    for (int k = 0; k < threads; k++) {
        jobs[k] = (norm_job){t, mode, n * (size_t)k / (size_t)threads, n * (size_t)(k + 1) / (size_t)threads,
                             tmp, tmplen, LA_OK, {0}};
        if (k > 0 && pthread_create(&tid[k], NULL, norm_worker, &jobs[k]) != 0) jobs[k].st = LA_EINTERNAL;
    }
    norm_worker(&jobs[0]);
    for (int k = 1; k < threads; k++)
        if (jobs[k].st != LA_EINTERNAL) pthread_join(tid[k], NULL);
    la_status st = LA_OK;
    for (int k = 0; k < threads && st == LA_OK; k++)
        if (jobs[k].st != LA_OK) st = la_error(jobs[k].st, "%s", jobs[k].err[0] ? jobs[k].err : "thread start failed");
    la_row *rows = la_table_rows(t);
    for (size_t i = 0; i < n; i++) {
        if (st == LA_OK && tmp[i]) {
            const char *p;
            st = la_table_strdup(t, tmp[i], tmplen[i], &p);
            if (st == LA_OK) {
                rows[i].norm = p;
                rows[i].norm_len = tmplen[i];
            }
        }
        free(tmp[i]);
    }
    free(tmp);
    free(tmplen);
    return st;
}
