/*
 * outdir.h - writing an output directory atomically and durably, without ever deleting a file the
 * tool did not write.
 *
 * Files go into a fresh sibling directory `DIR.tmp-PID-XXXXXX`; each is fsynced, then the directory
 * itself (a file's disk writes start as it is written and the commit waits for all of them, so the
 * disk works while the next file is computed), and the new directory takes the place of DIR in one
 * rename (renameat2 RENAME_EXCHANGE where the file system has it, so there is never a moment
 * without DIR). Files may be written from several threads at once. A run writes the list of its
 * files (sorted by name) into DIR/.leakaudit-manifest; a later run replaces DIR only when it is
 * absent, empty, or holds nothing but the files that manifest lists. Anything else (a file a person
 * added, an input, a report of a version that wrote no manifest) makes the run refuse before any
 * work is done.
 * DIR may be a symbolic link to a directory: the link stays and the directory it names is replaced.
 * Temporary directories of runs that were killed are removed by the next run; SIGINT and SIGTERM
 * remove the temporary directory of the current run. Not for: anything but whole-directory output.
 */
#ifndef LA_OUTDIR_H
#define LA_OUTDIR_H

#include "buf.h"
#include "leakaudit.h"

#include <sys/uio.h>

/* The manifest file every output directory holds: one comment line, then one file name a line. */
#define LA_OUTDIR_MANIFEST ".leakaudit-manifest"

typedef struct la_outdir {
    char *final;   /* the directory to replace, symbolic links resolved */
    char *shown;   /* as given on the command line, for messages */
    char *tmp;     /* the temporary directory beside it */
    char **names;  /* files written so far */
    size_t nnames, capnames;
    struct la_outdir_unsynced *unsynced; /* files written whose fsync waits for the commit */
    size_t nunsynced, capunsynced;
} la_outdir;

/* Check, without changing anything, that `dir` may be replaced: it is absent, an empty directory or
 * a directory this tool wrote (see above), and none of the `ninputs` paths in `inputs` ("-" is
 * skipped) lies inside it. Returns LA_OK or LA_EINVAL / LA_EIO with the reason in la_last_error. */
la_status la_outdir_check(const char *dir, const char *const *inputs, size_t ninputs);

/* Check the target again, remove temporary directories that killed runs left beside it, and create
 * the temporary directory. On failure nothing is left behind. */
la_status la_outdir_begin(const char *dir, la_outdir *o /* OUT */);
/* Write one file (a name without slashes, not the manifest's) into the temporary directory. */
la_status la_outdir_write(la_outdir *o, const char *name, const la_buf *b);
/* The same for a file whose pieces come from fill, gathered into writev calls: each call fills up
 * to max pieces (pointing at memory that stays as it is until the next call) and returns how many,
 * 0 at the end, or -1 with *failed set (and la_error's message) to abandon the file. So a manifest
 * of a million rows is never copied into a buffer of its size. */
typedef int (*la_outdir_fill)(void *ctx, struct iovec *iov, int max, la_status *failed);
la_status la_outdir_write_from(la_outdir *o, const char *name, la_outdir_fill fill, void *ctx);

/* Pieces per writev call (at most IOV_MAX, which POSIX puts at 16 or more; Linux has 1024). */
#define LA_OUTDIR_IOV 1024
/* Write the manifest and replace the target with the temporary directory. Frees o. */
la_status la_outdir_commit(la_outdir *o);
/* on = 1: a commit that replaces a previous report removes the old tree on a thread of its own and
 * returns at once; la_outdir_settle waits for it. For a caller with more than one CPU to use and
 * something to do meanwhile (the audit command frees its memory). Off by default. */
void la_outdir_defer_removal(int on);
/* Drop the page cache of the files of the report in dir (those its manifest lists; nothing when dir
 * holds none), on a thread of its own, while the caller computes the report that replaces it: the
 * removal after the swap then has no cached pages to free (with a report just written, 18 of its
 * 26 ms at 50k x 5k went to the old dev.jsonl's pages). The report stays as it is on disk. For a
 * caller with a second CPU; joined by la_outdir_begin and la_outdir_settle. */
void la_outdir_release_previous(const char *dir);
/* Wait until a deferred removal, and a release, have finished (at once when none runs). */
void la_outdir_settle(void);
/* Remove the temporary directory. Frees o. Safe after a failed commit or begin. */
void la_outdir_abort(la_outdir *o);
/* Commit when s is LA_OK, else abort; returns s, or the commit's status. Frees o. */
la_status la_outdir_finish(la_outdir *o, la_status s);

/* While s is LA_OK: empty buffer b, fill it with `call` (a la_status expression writing into b)
 * and write it as `name`; s ends as the first failure. Used as a statement by the writers of every
 * command. */
#define LA_OUTDIR_EMIT(od, s, b, name, call)                         \
    do {                                                             \
        if ((s) == LA_OK) {                                          \
            (b)->n = 0;                                              \
            (s) = (call);                                            \
            if ((s) == LA_OK) (s) = la_outdir_write((od), (name), (b)); \
        }                                                            \
    } while (0)

#endif /* LA_OUTDIR_H */
