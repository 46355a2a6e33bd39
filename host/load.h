/*
 * load.h - reading input files into the row table with validation. Every record becomes either a
 * row in the table or a problem (a reject) with FILE:LINE: FIELD: what was expected. Nothing is
 * dropped: rows read = rows in the table + rejects, per file and per partition.
 */
#ifndef LA_LOAD_H
#define LA_LOAD_H

#include "leakaudit.h"
#include "records.h"

#define LA_MAX_TEXT_FIELDS 16
#define LA_MAX_PART_COUNT 64   /* partitions whose record counts are kept (embeddings need them) */

typedef struct la_load_opts {
    const char *id_field;                       /* default "id" */
    const char *text_fields[LA_MAX_TEXT_FIELDS];  /* default {"text"} */
    size_t ntext;
    const char *split_field;                    /* default "split" */
    const char *family_field;                   /* default "family" */
    const char *date_field;                     /* default "available_on" */
    const char *label_field;                    /* default "label" */
    const char *score_field;                    /* default "score" */
    int allow_timestamp;                        /* --date-format iso8601 */
    int require_text;                           /* audit: 1, split: 0 */
    int require_date;                           /* split: every row needs a date */
    int require_label;                          /* three-set split: every row needs a label */
    la_format format;                           /* LA_FMT_AUTO: by extension or content */
    const char *embedding_field;                /* vectors in the rows (--embedding-field), or NULL */
    la_limits limits;                           /* what one input may cost (input.h) */
    int threads;                                /* parsing JSONL: worker threads, 0 the CPUs there are */
    const char *const *known_parts;             /* allowed values of the split field */
    size_t nknown;
    const struct la_arrow_input *arrow;         /* inputs in memory (arrow.h): a path that is one of */
    size_t narrow;                              /* their path pointers is read from memory */
    size_t spill_from;                          /* once the rows' strings pass this many bytes, the
                                                 * table keeps them in spill files from then on
                                                 * (la_table_spill_to); 0: never */
    size_t spill_mapped;                        /* of them, bytes that may stay mapped (0: 64 MiB) */
} la_load_opts;

void la_load_opts_default(la_load_opts *o);

typedef struct la_loader {
    la_table *table;       /* borrowed */
    la_load_opts opts;
    la_reject *rejects;
    size_t nrejects, caprejects;
    la_file_info *files;   /* indexed like the table's files */
    size_t nfiles, capfiles;
    size_t part_records[LA_MAX_PART_COUNT]; /* records seen per partition index (placed or rejected) */
    float *emb;            /* with embedding_field: nrows x emb_dim in table order */
    size_t emb_dim, emb_cap;
} la_loader;

void la_loader_init(la_loader *L, la_table *t, const la_load_opts *o);
void la_loader_free(la_loader *L);

/* Load one file. part: the partition for every row, or NULL to take it from the split field.
 * Bad records become rejects (not an error status); I/O and allocation failures return an error.
 * A path that is the very pointer of one of opts.arrow's inputs reads that input's rows instead,
 * each row's 1-based number standing for its line. */
la_status la_load_file(la_loader *L, const char *path, const char *part);

/* The text audit reads from one record, the JSON object json[0..n): the fields joined by newlines as
 * --text-field gives them (dotted paths, '*' segments, checked as a row's are), into *out (malloc'ed,
 * NUL-terminated, *len bytes). LA_EINPUT with "FIELD: what is wrong" (the caller names the file and
 * line), LA_EINVAL for 0 or more than LA_MAX_TEXT_FIELDS fields. For `leakaudit embed`, whose vectors
 * must be of the texts the audit reads. */
la_status la_record_text(const char *json, size_t n, const char *const *fields, size_t nfields, char **out,
                         size_t *len);

/* la_load_file, with generated ids FILE:LINE naming the file id_name (NULL: its base name). */
la_status la_load_file_as(la_loader *L, const char *path, const char *part, const char *id_name);

/* "FILE:LINE: FIELD: what" for reason k of reject r, into a malloc'ed string. */
char *la_reject_message(const la_loader *L, const la_reject *r, size_t k);

#endif /* LA_LOAD_H */
