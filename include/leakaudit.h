/*
 * leakaudit.h - the public C API of leakaudit.
 *
 * leakaudit finds links between the partitions of an evaluation set (shared family ids, rows on the
 * wrong side of a date cutoff, exact copies after normalization, near and semantic copies) and turns
 * them into a recommendation for every row. This header holds what every module shares: the status
 * type and error reporting, the row table, the link (pair) list, and the evidence kinds.
 *
 * It also runs a whole audit for a program that embeds the library (la_options, la_audit_run,
 * la_result, near the end): options in, links, clusters, assignments and statistics out; and a
 * whole split (la_options_new_split, la_split_run, la_split_result, at the end): options in, every
 * row's set out.
 *
 * It includes no CUDA, FAISS or third-party headers. It is not a stable ABI yet (0.x): the shared
 * library's SONAME carries the minor version (libleakaudit.so.0.1).
 *
 * Conventions: every fallible function returns la_status (LA_OK = 0, negative on failure) and puts
 * the human detail into la_last_error(). Out-parameters come last and are marked OUT.
 * la_x_new(..., la_x **out) pairs with la_x_free(la_x *); la_x_free(NULL) does nothing.
 */
#ifndef LEAKAUDIT_H
#define LEAKAUDIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header; la_version() gives the library's. LEAKAUDIT_VERSION is one number
 * for comparisons: MAJOR * 10000 + MINOR * 100 + PATCH. CMakeLists.txt reads the version here. */
#define LEAKAUDIT_VERSION_MAJOR 0
#define LEAKAUDIT_VERSION_MINOR 1
#define LEAKAUDIT_VERSION_PATCH 0
#define LEAKAUDIT_VERSION \
    (LEAKAUDIT_VERSION_MAJOR * 10000 + LEAKAUDIT_VERSION_MINOR * 100 + LEAKAUDIT_VERSION_PATCH)

#if defined(_WIN32)
#define LA_API
#else
#define LA_API __attribute__((visibility("default")))
#endif

/* ---- status ------------------------------------------------------------------------------- */

typedef enum la_status {
    LA_OK = 0,
    LA_EINVAL = -1,       /* bad argument or usage */
    LA_EINPUT = -2,       /* bad input data (file:line:field in la_last_error) */
    LA_EIO = -3,          /* a file could not be read or written */
    LA_ENOMEM = -4,       /* out of memory */
    LA_ECUDA = -5,        /* a CUDA or cuBLAS call failed (the CPU path still works) */
    LA_ENODEV = -6,       /* no usable device */
    LA_EUNSUPPORTED = -7, /* feature not compiled in */
    LA_EINTERNAL = -8     /* a broken internal contract */
} la_status;

/* Static description of a status code; never NULL. */
LA_API const char *la_strerror(la_status s);

/* Human detail of the last failure on this thread; valid until the next la_* call on this thread
 * that sets an error. Empty string when none. Never NULL. */
LA_API const char *la_last_error(void);

/* Record a failure detail (printf-style) for this thread and return `s`, so callers can write
 * `return la_error(LA_EINPUT, "%s:%zu: id: expected a non-empty string", file, line);`. */
LA_API la_status la_error(la_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Clear this thread's last error. */
LA_API void la_error_clear(void);

/* Propagate a failure: returns from the calling function when expr is not LA_OK. */
#define LA_TRY(expr)                          \
    do {                                      \
        la_status la_try_s_ = (expr);         \
        if (la_try_s_ != LA_OK) return la_try_s_; \
    } while (0)

/* Version string of the library, e.g. "0.1.0". */
LA_API const char *la_version(void);

/* ---- evidence kinds ----------------------------------------------------------------------- */

typedef enum la_kind {
    LA_KIND_FAMILY = 1u << 0,   /* same family id on both sides */
    LA_KIND_TIME = 1u << 1,     /* a row available on the wrong side of the cutoff */
    LA_KIND_EXACT = 1u << 2,    /* same normalized text */
    LA_KIND_NEAR = 1u << 3,     /* MinHash/SimHash candidates verified by Jaccard or containment */
    LA_KIND_SEMANTIC = 1u << 4  /* cosine of embeddings above threshold */
} la_kind;

#define LA_KIND_ALL 0x1Fu
#define LA_KIND_COUNT 5

/* Name of one kind bit ("family", "time", "exact", "near", "semantic"); NULL for other values. */
LA_API const char *la_kind_name(uint32_t kind_bit);

/* Lists of kinds, with their grades, are parsed by la_gate_parse (below). */

/* ---- grades -------------------------------------------------------------------------------- */

/* How much of the held-out item a content link (exact, near, semantic) carries; docs/grades.md
 * gives the rules and the numbers behind them. Family and time links have no grade. */
typedef enum la_grade {
    LA_GRADE_NONE = 0,     /* not graded (family or time evidence only) */
    LA_GRADE_RELATED = 1,  /* shares wording or a template, not the item */
    LA_GRADE_NEAR = 2,     /* an edited or partial copy: most of the item's distinctive content */
    LA_GRADE_COPY = 3      /* the item is there: exact, or nearly all of its distinctive content */
} la_grade;

/* "related", "near" or "copy"; NULL for LA_GRADE_NONE and other values. */
LA_API const char *la_grade_name(int grade);

/* ---- dates -------------------------------------------------------------------------------- */

#define LA_NO_DATE INT32_MIN

/* Parse a canonical ASCII YYYY-MM-DD date that exists on the proleptic Gregorian calendar into days
 * since 1970-01-01. With allow_timestamp, an ISO 8601 timestamp (YYYY-MM-DDTHH:MM[:SS[.f]][Z|±HH:MM])
 * is accepted and its date part used. Returns LA_EINPUT (no detail set) for anything else. */
LA_API la_status la_date_parse(const char *s, size_t n, int allow_timestamp, int32_t *days /* OUT */);

/* Format days since 1970-01-01 as YYYY-MM-DD into buf (at least 11 bytes). */
LA_API void la_date_format(int32_t days, char buf[11]);

/* ---- the row table ------------------------------------------------------------------------ */

/* One input row. Strings are NUL-terminated, owned by the table's arena, and live as long as the
 * table. Optional strings are NULL when absent. */
typedef struct la_row {
    const char *id;        /* unique, non-empty */
    const char *text;      /* joined text fields; NULL when absent (allowed for `split`) */
    const char *norm;      /* normalized text; NULL until normalization */
    size_t norm_len;
    const char *family;    /* NULL: the row is its own family */
    const char *label;
    const char *raw;       /* the original record as one line of JSON, passed through to manifests;
                            * NULL when the table keeps only where the line lies in its input file
                            * (la_table_raw_place: rows read from a plain JSONL file) */
    double score;          /* per-case eval result in [0,1]; NaN when absent */
    uint64_t hash[2];      /* XXH3-128 of norm (hash[0] low, hash[1] high); zero until computed */
    int32_t date;          /* days since 1970-01-01, LA_NO_DATE when absent */
    uint32_t part;         /* partition index into the table's partitions */
    uint32_t file;         /* index into the table's file names */
    uint32_t line;         /* 1-based physical line where the record starts */
    uint32_t ordinal;      /* 0-based position among the records of its partition (rejected ones counted) */
} la_row;

typedef struct la_table la_table;

/* Create an empty table. Free with la_table_free. */
LA_API la_status la_table_new(la_table **out /* OUT */);
LA_API void la_table_free(la_table *t);

/* Partitions: find or add a partition name; returns its index. The first call with a name
 * fixes its index; names are copied. */
LA_API la_status la_table_part(la_table *t, const char *name, uint32_t *index /* OUT */);
/* Look a partition up without adding it; returns LA_EINVAL when absent. */
LA_API la_status la_table_find_part(const la_table *t, const char *name, uint32_t *index /* OUT */);
LA_API uint32_t la_table_npart(const la_table *t);
LA_API const char *la_table_part_name(const la_table *t, uint32_t index);

/* Input files: register a file name (copied); returns its index. */
LA_API la_status la_table_add_file(la_table *t, const char *name, uint32_t *index /* OUT */);
LA_API const char *la_table_file_name(const la_table *t, uint32_t index);
LA_API uint32_t la_table_nfile(const la_table *t);

/* Copy n bytes of s into the table's arena (NUL-terminated); the copy lives as long as the table. */
LA_API la_status la_table_strdup(la_table *t, const char *s, size_t n, const char **out /* OUT */);

/* Append a row (its strings must already live in the table's arena, via la_table_strdup).
 * Does not check id uniqueness: see la_table_find_id. */
LA_API la_status la_table_append(la_table *t, const la_row *row, size_t *index /* OUT */);

/* Index of the row with this id, or (size_t)-1. Ids are indexed as rows are appended. */
LA_API size_t la_table_find_id(const la_table *t, const char *id);

/* Where a row's record lies in its input file (la_row.file) when the table does not hold it: the
 * line's byte offset and length in the file as stored, and a 32-bit digest of its bytes (the low
 * half of XXH3-128) by which a file changed since it was read is caught. Rows read from a plain,
 * uncompressed JSONL file keep this in place of raw, which saves a copy of the input in memory. */
typedef struct la_raw_place {
    uint64_t offset;
    uint32_t len;          /* 0: none */
    uint32_t check;
} la_raw_place;

/* Record where row `row` (already appended, its raw NULL) lies in its file. */
LA_API la_status la_table_set_raw_place(la_table *t, size_t row, const la_raw_place *at);
/* 1 with *at filled when the row's record is kept as a place in its file, else 0. */
LA_API int la_table_raw_place(const la_table *t, size_t row, la_raw_place *at /* OUT */);

LA_API size_t la_table_nrows(const la_table *t);
/* Borrowed pointer to the rows array; valid until the next la_table_append. */
LA_API la_row *la_table_rows(la_table *t);
LA_API const la_row *la_table_rows_const(const la_table *t);

/* ---- inputs: files read and records rejected --------------------------------------------- */

/* The partition of a reject whose partition is unknown. */
#define LA_NO_PART UINT32_MAX


/* One rejected record with every reason found in it. Strings are owned by whoever loaded it (the
 * loader, or an la_result) and live as long as it. */
typedef struct la_reject {
    uint32_t file, line;
    uint32_t part;        /* LA_NO_PART when the partition is unknown */
    char *id;             /* NULL when absent */
    char *raw;            /* the record as one line of JSON, or the raw line when unparseable */
    char **reasons;       /* "FIELD: what was expected" */
    size_t nreasons;
} la_reject;

/* One input file as it was read. */
typedef struct la_file_info {
    char *path;
    const char *format;
    const char *compression;
    size_t bytes;          /* as stored */
    size_t rows_read, rows_rejected;
    int ids_generated;     /* the file has no id field: ids are BASENAME:LINE */
    char blake2b_hex[65];
} la_file_info;

/* ---- links (pairs) ------------------------------------------------------------------------ */

/* One link between two rows of different partitions (or of one partition, for within-partition
 * reports). When one side is the held-out partition, it is b. Scores are NaN when not measured. */
typedef struct la_pair {
    uint32_t a, b;          /* row indices */
    uint32_t kinds;         /* la_kind bits */
    float jaccard;          /* true Jaccard of shingle sets */
    float containment;      /* |A ∩ B| / min(|A|, |B|) */
    float minhash;          /* MinHash estimate of Jaccard */
    float cosine;           /* embedding cosine */
    float margin;           /* ratio margin of a semantic link found below the cosine threshold
                               (docs/semantic.md); NaN for every other link */
    int32_t simhash_dist;   /* Hamming distance of SimHash, -1 when not measured */
    float wcontainment;     /* rarity-weighted share of the held-out row's word pairs found in a */
    float wwords;           /* rarity-weighted share of the held-out row's words found in a */
    float slot_evidence;    /* how much more a looks like an edited copy of b than like another instance
                               of b's template (docs/grades.md); NaN unless b has linked siblings */
    uint8_t grade;          /* la_grade; LA_GRADE_NONE until graded */
    uint8_t nums_held;      /* distinct numbers in the held-out row (capped at 255) */
    uint8_t nums_shared;    /* of them, also in a */
    uint8_t nums_changed;   /* held-out numbers that a states differently in the same words around them */
} la_pair;

typedef struct la_pairs {
    la_pair *v;
    size_t n, cap;
} la_pairs;

/* Initialize a fresh pair with all scores unmeasured. */
LA_API la_pair la_pair_make(uint32_t a, uint32_t b, uint32_t kinds);
LA_API la_status la_pairs_push(la_pairs *p, const la_pair *x);
/* Sort by (b, a) and merge duplicates: kinds are OR-ed, measured scores kept. */
LA_API void la_pairs_normalize(la_pairs *p);
LA_API void la_pairs_free(la_pairs *p);

/* ---- the gate ------------------------------------------------------------------------------ */

/* What fails a run (--fail-on): per kind, the weakest grade that counts; 0 turns the kind off.
 * Family and time links have no grade: they gate whenever their entry is not 0. */
typedef struct la_gate {
    uint8_t min_grade[LA_KIND_COUNT];
} la_gate;

/* The default gate: family, time, exact, and near and semantic links graded near or copy. */
LA_API void la_gate_default(la_gate *g /* OUT */);

/* Parse a --fail-on list: comma-separated KIND or KIND:GRADE items (family, time, exact, near,
 * semantic; GRADE copy, near or related: that grade or stronger; KIND alone means KIND:near), "all"
 * (the default) or "all:GRADE", or "none" alone (report without gating). An empty list, an empty
 * item or a grade on family or time is LA_EINVAL with the reason in la_last_error(). */
LA_API la_status la_gate_parse(const char *spec, la_gate *out /* OUT */);

/* 1 when link p fails gate g through its kind with index `kind` (0..LA_KIND_COUNT-1: family, time,
 * exact, near, semantic), else 0. A content link with LA_GRADE_NONE (not graded) fails whenever its
 * kind is gated. */
LA_API int la_gate_kind_fails(const la_gate *g, const la_pair *p, int kind);

/* 1 when link p fails gate g through any of its kinds, else 0. */
LA_API int la_gate_fails(const la_gate *g, const la_pair *p);

/* The kinds that can fail the run under g (a bit set of la_kind). */
LA_API uint32_t la_gate_kinds(const la_gate *g);

/* The gate written back as a --fail-on list ("none" when nothing gates) into buf (>= 96 bytes). */
LA_API void la_gate_format(const la_gate *g, char *buf, size_t size);

/* ---- running an audit -------------------------------------------------------------------- */

/* The options of one audit: the inputs and every setting `leakaudit audit` takes. Not thread-safe
 * to change from two threads; one la_options may be read by several la_audit_run calls. */
typedef struct la_options la_options;

LA_API la_status la_options_new(la_options **out /* OUT */);
LA_API void la_options_free(la_options *o);

/* Set one option by its `leakaudit audit` long name without the dashes, e.g. ("text-field",
 * "question"), ("cutoff", "2026-01-01"), ("near", "off"), ("embed", "lexical"), ("fail-on",
 * "exact"), ("threads", "4"), ("within", NULL): the same names, values and rules as the command
 * line (leakaudit audit --help). Options that repeat on the command line add up here too. The
 * value is copied. LA_EINVAL with the reason in la_last_error() for an unknown name or a bad
 * value. "out" is accepted and ignored (la_result_write takes the folder). */
LA_API la_status la_options_set(la_options *o, const char *name, const char *value);

/* Whether the `leakaudit audit` option `name` takes a value: 1 (e.g. "text-field"), 0 for a flag
 * ("quiet", "within"), -1 when it is not an option of leakaudit audit. For programs that pass a
 * command line through to la_options_set. */
LA_API int la_option_takes_value(const char *name);

/* One input file (copied): its rows belong to partition `part` ("dev", "test", any name), or,
 * with part NULL, to the partition their split field names. "-" reads standard input. */
LA_API la_status la_options_add_input(la_options *o, const char *part, const char *path);

/* Rows in memory, as the Arrow C Data Interface hands them over (a pyarrow RecordBatch's
 * _export_to_c, nanoarrow, DuckDB, Polars...). The two structs are the interface's own, ABI-stable
 * definitions (arrow.apache.org/docs/format/CDataInterface.html), under its usual guard. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};
struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};
#endif /* ARROW_C_DATA_INTERFACE */

/* One input held in memory: `array` is a struct array (a record batch: one child per column, named
 * by `schema`). Its rows belong to partition `part` ("dev", "test", any name), or, with part NULL,
 * to the partition their split field names; they are read when la_audit_run runs, under the field
 * options in force then, exactly as the rows of a JSONL file would be: each row is the JSON object
 * of its columns (strings, integers, numbers, booleans, null; lists as arrays and structs as
 * objects, so dotted fields reach into them; date32 as "YYYY-MM-DD"; a NaN or infinite number is
 * null), validated by the same rules, and written to the manifests as that JSON line. Column types
 * it reads: null, boolean, int8..int64, uint8..uint64, float32, float64, utf8, large utf8, date32,
 * list, large list, fixed-size list and struct; anything else (dictionary, binary, timestamps,
 * string views...) is LA_EINVAL naming the column: convert it first.
 *
 * `name` (copied) stands for the file name: in messages ("NAME:ROW: FIELD: ...", ROW counting the
 * rows from 1), in the ids of a table without an id column (BASENAME:ROW, as for a file), and in
 * the report's inputs, whose fingerprint is the BLAKE2b-256 of the rows as JSON lines.
 *
 * Ownership: on LA_OK the options take both structs over (the Arrow "move": the caller's copies
 * are marked released) and release them in la_options_free; on failure the caller keeps them. */
LA_API la_status la_options_add_arrow(la_options *o, const char *part, const char *name,
                                      struct ArrowSchema *schema, struct ArrowArray *array);

/* Everything one audit decided; owned by the caller (la_result_free). */
typedef struct la_result la_result;

/* Where a row goes when it is not kept in its partition (see la_result_outcome). */
#define LA_OUTCOME_QUARANTINE UINT32_MAX

/* Run the audit: read and validate the inputs, find every link across the held-out boundary,
 * grade them, build clusters and decide every row's outcome. Writes no file. Like the command, it
 * prints to stderr the first problems of an input refused under --on-invalid fail, and warnings
 * (a GPU fallback) unless "quiet" is set. On
 * success *out is a new result; on failure *out is NULL and la_last_error() says why (LA_EINVAL
 * and LA_EINPUT: options or input, the command's exit code 2). Thread-safe: two audits may run at
 * once on two threads. */
LA_API la_status la_audit_run(const la_options *o, la_result **out /* OUT */);
LA_API void la_result_free(la_result *r);

/* The rows, as read (partitions, ids, texts); borrowed, valid until la_result_free. */
LA_API const la_table *la_result_table(const la_result *r);
/* Index of the held-out partition in the table. */
LA_API uint32_t la_result_heldout(const la_result *r);

/* The links: every pair of rows with evidence across the boundary, sorted by held-out id, then
 * seen id, each with its kinds, scores and grade. Borrowed, valid until la_result_free. */
LA_API const la_pair *la_result_links(const la_result *r, size_t *n /* OUT */);

/* Leak clusters: la_result_cluster gives a row's cluster (1 .. la_result_nclusters; 0: none). */
LA_API size_t la_result_nclusters(const la_result *r);
LA_API uint32_t la_result_cluster(const la_result *r, size_t row);

/* The assignment of a row: the partition index it stays in, or LA_OUTCOME_QUARANTINE. */
LA_API uint32_t la_result_outcome(const la_result *r, size_t row);

/* Records that were rejected (never in the table), with their reasons; borrowed. */
LA_API const la_reject *la_result_rejects(const la_result *r, size_t *n /* OUT */);

/* The figures of the summary. */
typedef struct la_result_stats {
    size_t rows_read;          /* rows placed in the table + rows rejected */
    size_t rows_rejected;
    size_t links;              /* all links */
    size_t gating_links;       /* links that fail the gate (--fail-on) */
    size_t clusters;
    size_t quarantined;        /* rows whose outcome is LA_OUTCOME_QUARANTINE */
    size_t heldout_rows;       /* rows of the held-out partition */
    size_t heldout_clean;      /* of them, not quarantined */
    double accuracy;           /* mean score of the clean held-out rows, or the assumed 0.9 */
    int accuracy_observed;     /* 1: from the rows' scores; 0: assumed */
    double ci95;               /* half width of the 95% interval at that accuracy (NaN: no clean row) */
    int leaks;                 /* 1: the gate failed */
    int exit_code;             /* what `leakaudit audit` would exit with: 0 clean, 1 leaks */
} la_result_stats;

LA_API void la_result_stats_get(const la_result *r, la_result_stats *out /* OUT */);

/* The summary `leakaudit audit` prints when it is done (rows per partition, links by kind and
 * grade, clusters, the clean held-out rows and their interval, the exit code; `dir` is named as
 * where the reports are), as snprintf would write it into buf (size bytes, NUL-terminated; buf
 * may be NULL when size is 0). Returns its length without the NUL: call again with more room when
 * that is size or more. */
LA_API size_t la_result_summary(const la_result *r, const char *dir, char *buf, size_t size);

/* Write the reports `leakaudit audit --out dir` writes (report.json, pairs.jsonl,
 * assignments.jsonl, the manifests, ...), atomically: dir is replaced only when it is absent,
 * empty or a report this tool wrote, and never when it holds an input. The manifests copy the rows
 * read from plain JSONL files back from those files (la_table_raw_place): they must still be there,
 * as they were read; a file changed, truncated or removed since is LA_EINPUT and nothing is
 * written. */
LA_API la_status la_result_write(const la_result *r, const char *dir);

/* ---- making a split ----------------------------------------------------------------------- */

/* Options for a split instead of an audit: every setting `leakaudit split` takes, by the same
 * names through la_options_set ("cutoff", "three-set", "seed", "dev-share", "demos-per-class",
 * "min-share", "fingerprint-key", "backend", "near", "embed", the field options...), with the
 * command's defaults (text optional; a date on every row under "cutoff", a label under
 * "three-set"); the names split does not take ("dev", "test", "part", "heldout", "fail-on") are
 * LA_EINVAL. Inputs come from la_options_add_input and la_options_add_arrow with part NULL: the
 * rule places the rows, so a partition name is LA_EINVAL. la_audit_run refuses these options and
 * la_split_run any others. Free with la_options_free. */
LA_API la_status la_options_new_split(la_options **out /* OUT */);

/* Whether the `leakaudit split` option `name` takes a value: 1, 0 for a flag ("three-set",
 * "quiet"), -1 when it is not an option of leakaudit split. */
LA_API int la_split_option_takes_value(const char *name);

/* Everything one split decided; owned by the caller (la_split_result_free). */
typedef struct la_split_result la_split_result;

/* Run the split: read and validate the inputs, group rows (families, exact, near and, when asked,
 * semantic copies) and place every group by the chronological rule ("cutoff") or the three-set
 * rule ("three-set"), exactly as `leakaudit split` does. Writes no file. Like the command, it
 * prints to stderr the first problems of an input refused under --on-invalid fail, and a line for
 * a dev or test set under 5% of the rows placed or under "min-share" (only the failing one with
 * "quiet"). On success *out is a new result; on failure *out is NULL and la_last_error() says why
 * (LA_EINVAL and LA_EINPUT: options or input, the command's exit code 2). Thread-safe as
 * la_audit_run. */
LA_API la_status la_split_run(const la_options *o, la_split_result **out /* OUT */);
LA_API void la_split_result_free(la_split_result *r);

/* The rows, as read; borrowed, valid until la_split_result_free. Its partitions are the sets a
 * row can be placed in ("demos" under the three-set rule, "dev", "test") and "input", the
 * partition every row is read into. */
LA_API const la_table *la_split_result_table(const la_split_result *r);

/* The set of a row: the partition index of "demos", "dev" or "test" in the table, or
 * LA_OUTCOME_QUARANTINE (a family spanning the cutoff; a later exact copy under three-set). */
LA_API uint32_t la_split_result_set(const la_split_result *r, size_t row);

/* Records that were rejected (never in the table), with their reasons; borrowed. */
LA_API const la_reject *la_split_result_rejects(const la_split_result *r, size_t *n /* OUT */);

/* The figures of the summary. */
typedef struct la_split_stats {
    size_t rows_read;          /* rows placed in the table + rows rejected */
    size_t rows_rejected;
    size_t demos, dev, test;   /* rows placed in each set (demos: three-set only) */
    size_t quarantined;        /* rows set aside */
    int three_set;             /* 1: the three-set rule; 0: the chronological rule */
    int exit_code;             /* what `leakaudit split` would exit with: 0 done, 1 dev or test
                                  under min-share */
} la_split_stats;

LA_API void la_split_result_stats_get(const la_split_result *r, la_split_stats *out /* OUT */);

/* The summary `leakaudit split` prints when it is done (`dir` is named as where the outputs are;
 * NULL or "" leaves out what names the folder), as la_result_summary writes it. */
LA_API size_t la_split_result_summary(const la_split_result *r, const char *dir, char *buf, size_t size);

/* Write the files `leakaudit split --out dir` writes (assignments.jsonl, dev.jsonl, test.jsonl,
 * quarantine.jsonl, rejects.jsonl, report.json, report.md; under three-set manifest.json,
 * manifest.md and demos.jsonl instead of report.md), atomically, under the rules of
 * la_result_write (the input files too). */
LA_API la_status la_split_result_write(const la_split_result *r, const char *dir);

#ifdef __cplusplus
}
#endif
#endif /* LEAKAUDIT_H */
