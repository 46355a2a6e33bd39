/*
 * manifest.h - writing a manifest: the original records of chosen rows, one line each, into an
 * output directory. A row whose record the table holds (la_row.raw) is written from memory; a row
 * read from a plain JSONL file keeps only where its line lies (la_table_raw_place), and its line is
 * copied from that file, in the order the rows come: from the file mapped (la_input_map), or where
 * it cannot be mapped (or LEAKAUDIT_READ_MAP=0) read a block at a time.
 */
#ifndef LA_MANIFEST_H
#define LA_MANIFEST_H

#include "leakaudit.h"
#include "outdir.h"

/* Bytes of an input file read per block, at most, while manifests copy lines from it unmapped; a
 * block ends before a gap of more than LA_MANIFEST_GAP bytes to the next line the manifest takes. */
#define LA_MANIFEST_BLOCK ((size_t)4 << 20)
#define LA_MANIFEST_GAP ((size_t)16 << 10)

/* Write `name` into od: the records of rows[0..n) of t, in that order, each followed by a newline.
 * A line copied from its file must still be the line that was read (its length and digest): a file
 * changed, truncated or gone since the audit read it is LA_EINPUT naming the file and the line, and
 * the manifest is not written. */
la_status la_manifest_write(la_outdir *od, const char *name, const la_table *t, const uint32_t *rows, size_t n);
/* The same lines appended to out, with the same checks. */
la_status la_manifest_buf(const la_table *t, const uint32_t *rows, size_t n, la_buf *out);

#endif /* LA_MANIFEST_H */
