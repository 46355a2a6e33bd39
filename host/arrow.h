/*
 * arrow.h - rows in memory handed over through the Arrow C Data Interface (la_options_add_arrow in
 * include/leakaudit.h), read as the records a JSONL file of the same rows would hold, so the
 * loader validates them by the same rules. Not for: validation (load.h) or copying the columns:
 * each record is built from the buffers when the loader asks for it, and freed after.
 */
#ifndef LA_ARROW_H
#define LA_ARROW_H

#include "leakaudit.h"
#include "records.h"

#include "la_blake2b.h"

/* One input in memory. path names it and is also the pointer the la_cli input carries as its
 * path, which is how the loader tells it from a file (load.h). */
typedef struct la_arrow_input {
    const char *path;
    struct ArrowSchema schema;
    struct ArrowArray array;
} la_arrow_input;

/* LA_OK when schema and array are a struct array whose columns have types read here (the list in
 * la_options_add_arrow), no column name twice in one struct, every buffer present; else LA_EINVAL
 * naming the column ("column 'x': ..."). */
la_status la_arrow_check(const struct ArrowSchema *schema, const struct ArrowArray *array);

/* Release both structs through their callbacks (once; a released struct has release NULL). */
void la_arrow_release(la_arrow_input *in);

/* Reading one input: a la_record_source over its rows, and what a file's la_file_info holds. */
typedef struct la_arrow_reader {
    const la_arrow_input *in;
    size_t bytes;                    /* bytes of the rows as JSON lines (each with its newline) */
    la_blake2b_state hash;   /* BLAKE2b-256 of those lines */
} la_arrow_reader;

void la_arrow_reader_init(la_arrow_reader *r, const la_arrow_input *in);

/* la_record_source: every row of the reader's input as a JSON object (its columns by name, nulls
 * as JSON null), raw its JSON text, line its 1-based row; a row that is null as a whole is a parse
 * error. */
la_status la_arrow_each(void *reader, la_record_fn fn, void *ctx);

/* The BLAKE2b-256 of the lines read so far, as 64 hex digits and a NUL. */
void la_arrow_reader_digest(la_arrow_reader *r, char hex[65]);

#endif /* LA_ARROW_H */
