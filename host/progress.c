/*
 * progress.c - progress lines on stderr (see progress.h).
 */
#include "progress.h"
#include "buf.h"
#include "la_time.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct la_progress {
    FILE *f;
    int json, tty;
    const char *command;
    pthread_mutex_t lock;
    char stage[48], unit[16];
    size_t total;
    double bytes, t0;
    _Atomic double last;
    _Atomic size_t done;
    int open;
};

la_status la_progress_parse(const char *s, la_progress_mode *out)
{
    static const char *const names[] = {"auto", "always", "never", "json"};
    for (int k = 0; k < 4; k++)
        if (!strcmp(s, names[k])) {
            *out = (la_progress_mode)k;
            return LA_OK;
        }
    return la_error(LA_EINVAL, "--progress %s: expected auto, always, never or json", s);
}

la_progress *la_progress_new(la_progress_mode mode, int quiet, const char *command, FILE *f)
{
    if (quiet || mode == LA_PROGRESS_NEVER) return NULL;
    int tty = isatty(fileno(f));
    if (mode == LA_PROGRESS_AUTO && !tty) return NULL;
    la_progress *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->f = f;
    p->json = mode == LA_PROGRESS_JSON;
    p->tty = mode == LA_PROGRESS_AUTO;
    p->command = command;
    pthread_mutex_init(&p->lock, NULL);
    return p;
}

void la_progress_free(la_progress *p)
{
    if (!p) return;
    la_progress_end(p, NULL);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* "1,234,567" */
static void thousands(size_t v, char *out, size_t cap)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%zu", v), w = 0;
    for (int i = 0; i < n && (size_t)w + 2 < cap; i++) {
        if (i && (n - i) % 3 == 0) out[w++] = ',';
        out[w++] = digits[i];
    }
    out[w] = '\0';
}

static void duration(double s, char *out, size_t cap)
{
    if (s < 10) snprintf(out, cap, "%.1f s", s);
    else if (s < 60) snprintf(out, cap, "%.0f s", s);
    else if (s < 3600) snprintf(out, cap, "%d min %02d s", (int)(s / 60), (int)s % 60);
    else snprintf(out, cap, "%d h %02d min", (int)(s / 3600), (int)(s / 60) % 60);
}

/* One report of the open stage; kind is "begin", "update" or "end". Called with the lock held. */
static void emit(la_progress *p, const char *kind, const char *note)
{
    double now = la_now(), secs = now - p->t0;
    size_t done = atomic_load(&p->done);
    double rate = secs > 0 ? (double)done / secs : 0;
    double eta = p->total && done && done < p->total && rate > 0 ? (double)(p->total - done) / rate : -1;
    int end = !strcmp(kind, "end");
    if (p->json) {
        la_buf b = {0};
        la_buf_printf(&b, "{\"progress\": \"%s\", \"command\": ", kind);
        la_buf_json_str(&b, p->command);
        la_buf_puts(&b, ", \"stage\": ");
        la_buf_json_str(&b, p->stage);
        la_buf_printf(&b, ", \"unit\": \"%s\", \"done\": %zu, \"total\": %zu, \"bytes\": %.0f, \"seconds\": %.3f, "
                          "\"rate\": %.1f, \"eta_s\": ",
                      p->unit, done, p->total, p->bytes, secs, rate);
        if (eta >= 0) la_buf_printf(&b, "%.1f", eta);
        else la_buf_puts(&b, "null");
        if (note) {
            la_buf_puts(&b, ", \"note\": ");
            la_buf_json_str(&b, note);
        }
        la_buf_puts(&b, "}\n");
        if (b.p) fwrite(b.p, 1, b.n, p->f);
        la_buf_free(&b);
    } else {
        char a[32], b[32], t[32], line[320];
        int w = 0;
        thousands(done, a, sizeof a);
        thousands(p->total, b, sizeof b);
        int begin = !strcmp(kind, "begin");
        if (!p->total && !done) w = snprintf(line, sizeof line, "%s:", p->stage);
        else if (begin || end) w = snprintf(line, sizeof line, "%s: %s %s", p->stage, p->total ? b : a, p->unit);
        else w = snprintf(line, sizeof line, "%s: %s / %s %s", p->stage, a, b, p->unit);
        if (p->bytes > 0 && (size_t)w < sizeof line)
            w += snprintf(line + w, sizeof line - (size_t)w, ", %.1f MB", p->bytes / 1e6);
        duration(secs, t, sizeof t);
        if (!begin && (size_t)w < sizeof line) w += snprintf(line + w, sizeof line - (size_t)w, end ? " in %s" : ", %s", t);
        if (end && p->bytes > 0 && secs > 0 && (size_t)w < sizeof line)
            w += snprintf(line + w, sizeof line - (size_t)w, " (%.1f MB/s)", p->bytes / 1e6 / secs);
        else if (!end && !begin && rate > 0 && (size_t)w < sizeof line)
            w += snprintf(line + w, sizeof line - (size_t)w, ", %.0f %s/s", rate, p->unit);
        if (eta >= 0 && !end && !begin && (size_t)w < sizeof line) {
            duration(eta, t, sizeof t);
            w += snprintf(line + w, sizeof line - (size_t)w, ", ETA %s", t);
        }
        if (note && (size_t)w < sizeof line) snprintf(line + w, sizeof line - (size_t)w, "; %s", note);
        if (p->tty) fprintf(p->f, "\r\033[K%s %s%s", p->command, line, end ? "\n" : "");
        else fprintf(p->f, "%s %s\n", p->command, line);
    }
    fflush(p->f);
    p->last = now;
}

void la_progress_begin(la_progress *p, const char *stage, size_t total, const char *unit, double bytes)
{
    if (!p) return;
    la_progress_end(p, NULL);
    pthread_mutex_lock(&p->lock);
    snprintf(p->stage, sizeof p->stage, "%s", stage);
    snprintf(p->unit, sizeof p->unit, "%s", unit ? unit : "rows");
    p->total = total;
    p->bytes = bytes;
    p->t0 = la_now();
    atomic_store(&p->done, 0);
    p->open = 1;
    emit(p, "begin", NULL);
    pthread_mutex_unlock(&p->lock);
}

void la_progress_add(la_progress *p, size_t n)
{
    if (!p) return;
    atomic_fetch_add(&p->done, n);
    double every = p->tty ? 0.25 : 10.0;
    if (la_now() - p->last < every || pthread_mutex_trylock(&p->lock) != 0) return;
    if (p->open && la_now() - p->last >= every) emit(p, "update", NULL);
    pthread_mutex_unlock(&p->lock);
}

void la_progress_end(la_progress *p, const char *note)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    if (p->open) {
        if (p->total && atomic_load(&p->done) < p->total) atomic_store(&p->done, p->total);
        emit(p, "end", note);
        p->open = 0;
    }
    pthread_mutex_unlock(&p->lock);
}
