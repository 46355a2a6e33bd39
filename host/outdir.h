/*
 * outdir.h - writing an output directory atomically: files go into a temporary sibling directory,
 * which replaces the target in one rename when everything is written. On any failure the target is
 * left as it was. A target that exists, is not empty and holds no report.json is refused, so a
 * mistyped --out never deletes unrelated files.
 */
#ifndef LA_OUTDIR_H
#define LA_OUTDIR_H

#include "buf.h"
#include "leakaudit.h"

typedef struct la_outdir {
    char *final;
    char *tmp;
} la_outdir;

/* Check the target and create the temporary directory. */
la_status la_outdir_begin(const char *dir, la_outdir *o /* OUT */);
/* Write one file (name without slashes) into the temporary directory. */
la_status la_outdir_write(la_outdir *o, const char *name, const la_buf *b);
/* Replace the target with the temporary directory. Frees o. */
la_status la_outdir_commit(la_outdir *o);
/* Remove the temporary directory. Frees o. Safe after a failed commit or begin. */
void la_outdir_abort(la_outdir *o);

#endif /* LA_OUTDIR_H */
