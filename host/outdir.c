/* outdir.c - atomic output directories (see outdir.h). */
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            size_t n = strlen(dir) + strlen(e->d_name) + 2;
            char *p = malloc(n);
            if (!p) continue;
            snprintf(p, n, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(p);
            else unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

static int dir_state(const char *dir, int *has_report)
{
    /* 0: absent, 1: empty dir, 2: non-empty dir, -1: exists but not a directory */
    struct stat st;
    *has_report = 0;
    if (stat(dir, &st) != 0) return 0;
    if (!S_ISDIR(st.st_mode)) return -1;
    DIR *d = opendir(dir);
    if (!d) return 2;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        n++;
        if (!strcmp(e->d_name, "report.json")) *has_report = 1;
    }
    closedir(d);
    return n ? 2 : 1;
}

/* Create every missing parent directory of path (like mkdir -p on its dirname). */
static la_status make_parents(const char *path)
{
    char *p = strdup(path);
    if (!p) return la_error(LA_ENOMEM, "out of memory");
    for (char *q = p + 1; *q; q++) {
        if (*q != '/') continue;
        *q = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            la_status s = la_error(LA_EIO, "--out %s: cannot create %s: %s", path, p, strerror(errno));
            free(p);
            return s;
        }
        *q = '/';
    }
    free(p);
    return LA_OK;
}

la_status la_outdir_begin(const char *dir, la_outdir *o)
{
    memset(o, 0, sizeof *o);
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    if (len == 0) return la_error(LA_EINVAL, "--out: empty directory name");
    int has_report;
    int state;
    o->final = strndup(dir, len);
    if (!o->final) return la_error(LA_ENOMEM, "out of memory");
    state = dir_state(o->final, &has_report);
    if (state < 0) {
        la_status s = la_error(LA_EIO, "--out %s: exists and is not a directory", o->final);
        la_outdir_abort(o);
        return s;
    }
    if (state == 2 && !has_report) {
        la_status s = la_error(LA_EIO,
                               "--out %s: directory exists, is not empty and holds no report.json; refusing to replace "
                               "it (choose a new or empty directory)",
                               o->final);
        la_outdir_abort(o);
        return s;
    }
    o->tmp = malloc(len + 16);
    if (!o->tmp) {
        la_outdir_abort(o);
        return la_error(LA_ENOMEM, "out of memory");
    }
    snprintf(o->tmp, len + 16, "%s.tmp-XXXXXX", o->final);
    la_status ps = make_parents(o->final);
    if (ps != LA_OK) {
        la_outdir_abort(o);
        return ps;
    }
    if (!mkdtemp(o->tmp)) {
        la_status s = la_error(LA_EIO, "--out %s: cannot create a directory beside it: %s", o->final, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        la_outdir_abort(o);
        return s;
    }
    chmod(o->tmp, 0755);
    return LA_OK;
}

la_status la_outdir_write(la_outdir *o, const char *name, const la_buf *b)
{
    size_t n = strlen(o->tmp) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p) return la_error(LA_ENOMEM, "out of memory");
    snprintf(p, n, "%s/%s", o->tmp, name);
    FILE *f = fopen(p, "wb");
    la_status s = LA_OK;
    if (!f) s = la_error(LA_EIO, "%s: cannot create: %s", p, strerror(errno));
    else {
        if (b->n && fwrite(b->p, 1, b->n, f) != b->n) s = la_error(LA_EIO, "%s: write failed: %s", p, strerror(errno));
        if (fclose(f) != 0 && s == LA_OK) s = la_error(LA_EIO, "%s: write failed: %s", p, strerror(errno));
    }
    free(p);
    return s;
}

la_status la_outdir_commit(la_outdir *o)
{
    int has_report;
    int state = dir_state(o->final, &has_report);
    la_status s = LA_OK;
    char *old = NULL;
    if (state > 0) {
        size_t n = strlen(o->final) + 16;
        old = malloc(n);
        if (!old) {
            la_outdir_abort(o);
            return la_error(LA_ENOMEM, "out of memory");
        }
        snprintf(old, n, "%s.old-XXXXXX", o->final);
        if (!mkdtemp(old) || rename(o->final, old) != 0) {
            s = la_error(LA_EIO, "--out %s: cannot move the previous report aside: %s", o->final, strerror(errno));
            if (old[0]) rmdir(old);
            free(old);
            la_outdir_abort(o);
            return s;
        }
    }
    if (rename(o->tmp, o->final) != 0) {
        s = la_error(LA_EIO, "--out %s: cannot move the new report into place: %s", o->final, strerror(errno));
        if (old) rename(old, o->final);
    } else {
        free(o->tmp);
        o->tmp = NULL;
    }
    if (old) {
        if (s == LA_OK) remove_tree(old);
        free(old);
    }
    la_outdir_abort(o);
    return s;
}

void la_outdir_abort(la_outdir *o)
{
    if (o->tmp) remove_tree(o->tmp);
    free(o->tmp);
    free(o->final);
    o->tmp = o->final = NULL;
}
