/*
 * progress.h - progress on stderr while a command runs (--progress auto|always|never|json).
 *
 *   auto    on a terminal, one line per stage that updates in place (rows, MB/s, ETA when the
 *           stage reports its work as it goes); nothing when stderr is not a terminal
 *   always  the same, as plain lines (one when a stage begins, updates every 10 s, one when it ends)
 *   never   nothing
 *   json    one JSON object per line: {"progress": "begin"|"update"|"end", "stage": ..., "done": ...,
 *           "total": ..., "bytes": ..., "seconds": ..., "rate": ..., "eta_s": ...}, for batch logs
 *
 * --quiet (-q) turns it off whatever the mode. Updates may come from any thread (la_progress_add);
 * printing is rate-limited (a terminal every 0.25 s, lines every 10 s) and serialized. Progress
 * never changes an output file.
 */
#ifndef LA_PROGRESS_H
#define LA_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

#include "leakaudit.h"

typedef enum la_progress_mode { LA_PROGRESS_AUTO = 0, LA_PROGRESS_ALWAYS, LA_PROGRESS_NEVER, LA_PROGRESS_JSON } la_progress_mode;

la_status la_progress_parse(const char *s, la_progress_mode *out /* OUT */);

typedef struct la_progress la_progress;

/* A reporter for one run of `command`, writing to f (stderr); NULL when progress is off (every
 * call below accepts NULL and does nothing) or out of memory. */
la_progress *la_progress_new(la_progress_mode mode, int quiet, const char *command, FILE *f);
void la_progress_free(la_progress *p);

/* A stage begins: total units of work ("rows"), 0 when unknown, and the bytes they hold (0: not
 * shown). Ends the previous stage if one is open. */
void la_progress_begin(la_progress *p, const char *stage, size_t total, const char *unit, double bytes);
/* n more units of the open stage done; safe from several threads. */
void la_progress_add(la_progress *p, size_t n);
/* The open stage ends, with a note ("7,836 pairs") or NULL. */
void la_progress_end(la_progress *p, const char *note);

#endif /* LA_PROGRESS_H */
