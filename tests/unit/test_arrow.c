/*
 * test_arrow.c - rows in memory through the Arrow C Data Interface (la_options_add_arrow): the same
 * rows as an Arrow struct array and as a JSONL file give the same links, scores, clusters and
 * outcomes; each row reaches the manifests as the JSON of its columns; bad rows are named
 * NAME:ROW: FIELD like a file's lines; a table without an id column gets NAME:ROW ids; column types
 * that are not read are refused with the column's name and left to the caller; the options release
 * what they took exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_fixture.h"
#include "leakaudit.h"

static char g_dev[96], g_test[96];
static int g_released; /* top-level arrays and schemas released */

/* ---- a small Arrow producer: every struct and buffer on the heap, freed by its release ---- */

typedef struct held {
    void *mem[4];
    int nmem;
    int top;
} held;

static void release_array(struct ArrowArray *a)
{
    held *h = a->private_data;
    for (int64_t k = 0; k < a->n_children; k++) {
        a->children[k]->release(a->children[k]);
        free(a->children[k]);
    }
    free(a->children);
    free(a->buffers);
    for (int k = 0; k < h->nmem; k++) free(h->mem[k]);
    g_released += h->top;
    free(h);
    a->release = NULL;
}

static void release_schema(struct ArrowSchema *s)
{
    for (int64_t k = 0; k < s->n_children; k++) {
        s->children[k]->release(s->children[k]);
        free(s->children[k]);
    }
    free(s->children);
    g_released += s->private_data != NULL;
    s->release = NULL;
}

static struct ArrowArray *array(int64_t n, int nbuf, int64_t nkids)
{
    struct ArrowArray *a = calloc(1, sizeof *a);
    held *h = calloc(1, sizeof *h);
    assert_non_null(a);
    assert_non_null(h);
    a->length = n;
    a->n_buffers = nbuf;
    a->buffers = calloc((size_t)(nbuf ? nbuf : 1), sizeof *a->buffers);
    a->n_children = nkids;
    a->children = calloc((size_t)(nkids ? nkids : 1), sizeof *a->children);
    a->release = release_array;
    a->private_data = h;
    return a;
}

static void *own(struct ArrowArray *a, size_t bytes)
{
    held *h = a->private_data;
    void *p = calloc(1, bytes ? bytes : 1);
    assert_non_null(p);
    h->mem[h->nmem++] = p;
    return p;
}

/* Validity bits from v[i] != NULL-ness (strings) or ok[i]; NULL when all are valid. */
static const void *validity(struct ArrowArray *a, const int *ok)
{
    int64_t nulls = 0;
    uint8_t *bits = own(a, (size_t)(a->length + 7) / 8);
    for (int64_t i = 0; i < a->length; i++) {
        if (ok[i]) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
        else nulls++;
    }
    a->null_count = nulls;
    return nulls ? bits : NULL;
}

static struct ArrowArray *utf8(const char *const *v, int64_t n)
{
    struct ArrowArray *a = array(n, 3, 0);
    int ok[16];
    size_t total = 0;
    for (int64_t i = 0; i < n; i++) total += v[i] ? strlen(v[i]) : 0, ok[i] = v[i] != NULL;
    int32_t *off = own(a, (size_t)(n + 1) * sizeof *off);
    char *data = own(a, total);
    for (int64_t i = 0; i < n; i++) {
        size_t len = v[i] ? strlen(v[i]) : 0;
        memcpy(data + off[i], v[i] ? v[i] : "", len);
        off[i + 1] = off[i] + (int32_t)len;
    }
    a->buffers[0] = validity(a, ok);
    a->buffers[1] = off;
    a->buffers[2] = data;
    return a;
}

/* A column of fixed-width values (int64, double, int32 for date32), ok[i] 0 for a null. */
static struct ArrowArray *fixed(const void *v, size_t width, const int *ok, int64_t n)
{
    struct ArrowArray *a = array(n, 2, 0);
    void *data = own(a, (size_t)n * width);
    memcpy(data, v, (size_t)n * width);
    a->buffers[0] = validity(a, ok);
    a->buffers[1] = data;
    return a;
}

static struct ArrowArray *booleans(const int *v, int64_t n)
{
    struct ArrowArray *a = array(n, 2, 0);
    uint8_t *bits = own(a, (size_t)(n + 7) / 8);
    for (int64_t i = 0; i < n; i++)
        if (v[i]) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
    a->buffers[1] = bits;
    return a;
}

static struct ArrowSchema *schema(const char *format, const char *name, int64_t nkids, int top)
{
    struct ArrowSchema *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->format = format;
    s->name = name;
    s->flags = ARROW_FLAG_NULLABLE;
    s->n_children = nkids;
    s->children = calloc((size_t)(nkids ? nkids : 1), sizeof *s->children);
    s->release = release_schema;
    s->private_data = top ? s : NULL;
    return s;
}

/* A batch: columns id, text, family (int64, a null), score (double, a NaN), flag (bool),
 * available_on (date32), meta {lang} (struct), and vec (fixed-size list of 2 doubles). */
typedef struct batch {
    struct ArrowSchema *s;
    struct ArrowArray *a;
} batch;

static batch make_batch(const char *const *ids, const char *const *texts, const int64_t *fam, const int *famok,
                        const double *score, int64_t n, int with_id)
{
    enum { NCOL = 8 };
    batch b = {schema("+s", "", NCOL - !with_id, 1), array(n, 1, NCOL - !with_id)};
    held *h = b.a->private_data;
    h->top = 1;
    int ones[32], flags[16];
    int32_t days[16];
    double vec[32];
    for (int64_t i = 0; i < 32; i++) ones[i] = 1;
    for (int64_t i = 0; i < n; i++) flags[i] = (int)(i & 1), days[i] = 20000 + (int32_t)i;
    for (int64_t i = 0; i < 2 * n; i++) vec[i] = 0.25 * (double)i;
    const char *langs[16];
    for (int64_t i = 0; i < n; i++) langs[i] = "en";
    int64_t c = 0;
    if (with_id) b.s->children[c] = schema("u", "id", 0, 0), b.a->children[c++] = utf8(ids, n);
    b.s->children[c] = schema("u", "text", 0, 0), b.a->children[c++] = utf8(texts, n);
    b.s->children[c] = schema("l", "family", 0, 0), b.a->children[c++] = fixed(fam, sizeof *fam, famok, n);
    b.s->children[c] = schema("g", "score", 0, 0), b.a->children[c++] = fixed(score, sizeof *score, ones, n);
    b.s->children[c] = schema("b", "flag", 0, 0), b.a->children[c++] = booleans(flags, n);
    b.s->children[c] = schema("tdD", "available_on", 0, 0), b.a->children[c++] = fixed(days, sizeof *days, ones, n);
    struct ArrowSchema *ms = schema("+s", "meta", 1, 0);
    ms->children[0] = schema("u", "lang", 0, 0);
    struct ArrowArray *ma = array(n, 1, 1);
    ma->children[0] = utf8(langs, n);
    b.s->children[c] = ms, b.a->children[c++] = ma;
    struct ArrowSchema *vs = schema("+w:2", "vec", 1, 0);
    vs->children[0] = schema("g", "item", 0, 0);
    struct ArrowArray *va = array(n, 1, 1);
    va->children[0] = fixed(vec, sizeof *vec, ones, 2 * n);
    b.s->children[c] = vs, b.a->children[c++] = va;
    return b;
}

static const char *const k_dev_ids[] = {"d1", "d2", "d3"};
static const char *const k_dev_text[] = {"How many legs does a spider have?", "What is the boiling point of water at sea level?",
                                         "Name the capital city of France."};
static const char *const k_test_ids[] = {"t1", "t2", "t3"};
static const char *const k_test_text[] = {"what is the BOILING point of water at sea level?", "Who wrote the play Hamlet?",
                                          "Name the capital city of France"};
static const int64_t k_dev_fam[] = {7, 8, 9}, k_test_fam[] = {10, 8, 11};
static const int k_dev_famok[] = {1, 1, 0}, k_test_famok[] = {1, 1, 1};
static const double k_dev_score[] = {1, 1, 1}, k_test_score[] = {1, 0, 0.5};

/* The same rows as JSONL, as a JSON writer prints the batch's columns. */
static void write_jsonl(const char *path, const char *const *ids, const char *const *texts, const int64_t *fam,
                        const int *famok, const double *score)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 3; i++) {
        char famtext[32], day[11];
        snprintf(famtext, sizeof famtext, "%lld", (long long)fam[i]);
        la_date_format(20000 + i, day);
        fprintf(f, "{\"id\":\"%s\",\"text\":\"%s\",\"family\":%s,\"score\":%g,\"flag\":%s,\"available_on\":\"%s\","
                   "\"meta\":{\"lang\":\"en\"},\"vec\":[%g,%g]}\n",
                ids[i], texts[i], famok[i] ? famtext : "null", score[i], i & 1 ? "true" : "false", day, 0.5 * i,
                0.5 * i + 0.25);
    }
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    if (scratch_make("arrow")) return -1;
    snprintf(g_dev, sizeof g_dev, "%s/dev.jsonl", g_dir);
    snprintf(g_test, sizeof g_test, "%s/test.jsonl", g_dir);
    write_jsonl(g_dev, k_dev_ids, k_dev_text, k_dev_fam, k_dev_famok, k_dev_score);
    write_jsonl(g_test, k_test_ids, k_test_text, k_test_fam, k_test_famok, k_test_score);
    return 0;
}

static la_options *options(void)
{
    la_options *o = quick_options();
    assert_int_equal(la_options_set(o, "cutoff", "2024-10-01"), LA_OK);
    return o;
}

static void add_batch(la_options *o, const char *part, const char *name, batch b, la_status want)
{
    assert_int_equal(la_options_add_arrow(o, part, name, b.s, b.a), want);
    if (want == LA_OK) {
        assert_null(b.s->release); /* moved into the options */
        assert_null(b.a->release);
    }
    free(b.s);
    free(b.a);
}

static la_result *run_arrow(int with_id)
{
    la_options *o = options();
    add_batch(o, "dev", "dev.arrow", make_batch(k_dev_ids, k_dev_text, k_dev_fam, k_dev_famok, k_dev_score, 3, with_id), LA_OK);
    add_batch(o, "test", "mem/test.arrow",
              make_batch(k_test_ids, k_test_text, k_test_fam, k_test_famok, k_test_score, 3, with_id), LA_OK);
    la_result *r = NULL;
    int before = g_released;
    assert_int_equal(la_audit_run(o, &r), LA_OK);
    assert_int_equal(g_released, before); /* the options keep the arrays until they are freed */
    la_options_free(o);
    assert_int_equal(g_released, before + 4);
    return r;
}

static void test_same_as_jsonl(void **state)
{
    (void)state;
    la_options *o = options();
    assert_int_equal(la_options_add_input(o, "dev", g_dev), LA_OK);
    assert_int_equal(la_options_add_input(o, "test", g_test), LA_OK);
    la_result *rf = NULL;
    assert_int_equal(la_audit_run(o, &rf), LA_OK);
    la_options_free(o);
    la_result *ra = run_arrow(1);

    size_t nf, na;
    const la_pair *lf = la_result_links(rf, &nf), *la = la_result_links(ra, &na);
    assert_true(nf >= 3); /* exact t1~d2, family t2~d2, near t3~d3, and time rows */
    assert_int_equal(na, nf);
    const la_row *rowf = la_table_rows_const(la_result_table(rf)), *rowa = la_table_rows_const(la_result_table(ra));
    uint32_t kinds = 0;
    for (size_t k = 0; k < nf; k++) {
        assert_string_equal(rowa[la[k].a].id, rowf[lf[k].a].id);
        assert_string_equal(rowa[la[k].b].id, rowf[lf[k].b].id);
        assert_int_equal(la[k].kinds, lf[k].kinds);
        assert_int_equal(la[k].grade, lf[k].grade);
        assert_memory_equal(&la[k].jaccard, &lf[k].jaccard, sizeof la[k].jaccard);
        assert_memory_equal(&la[k].cosine, &lf[k].cosine, sizeof la[k].cosine);
        kinds |= lf[k].kinds;
    }
    assert_true(kinds & LA_KIND_EXACT);
    assert_true(kinds & LA_KIND_FAMILY);
    assert_true(kinds & LA_KIND_NEAR);
    size_t n = la_table_nrows(la_result_table(rf));
    assert_int_equal(la_table_nrows(la_result_table(ra)), n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(rowa[i].id, rowf[i].id);
        assert_int_equal(rowa[i].line, rowf[i].line);
        assert_int_equal(rowa[i].date, rowf[i].date);
        assert_true(rowa[i].family == rowf[i].family || !strcmp(rowa[i].family, rowf[i].family));
        assert_int_equal(la_result_cluster(ra, i), la_result_cluster(rf, i));
        assert_int_equal(la_result_outcome(ra, i), la_result_outcome(rf, i));
    }
    la_result_stats sf, sa;
    la_result_stats_get(rf, &sf);
    la_result_stats_get(ra, &sa);
    assert_int_equal(sa.quarantined, sf.quarantined);
    assert_int_equal(sa.exit_code, 1);
    assert_true(sa.accuracy == sf.accuracy);
    /* the row as the manifests carry it: the JSON of its columns */
    assert_string_equal(rowa[la_table_find_id(la_result_table(ra), "t3")].raw,
                        "{\"id\":\"t3\",\"text\":\"Name the capital city of France\",\"family\":11,\"score\":0.5,"
                        "\"flag\":false,\"available_on\":\"2024-10-06\",\"meta\":{\"lang\":\"en\"},\"vec\":[1.0,1.25]}");
    char out[128];
    snprintf(out, sizeof out, "%s/report", g_dir);
    assert_int_equal(la_result_write(ra, out), LA_OK);
    la_result_free(rf);
    la_result_free(ra);
}

static void test_generated_ids(void **state)
{
    (void)state;
    la_result *r = run_arrow(0);
    const la_table *t = la_result_table(r);
    assert_true(la_table_find_id(t, "dev.arrow:1") != (size_t)-1);
    assert_true(la_table_find_id(t, "test.arrow:3") != (size_t)-1); /* the base name, as for a file */
    la_result_free(r);
}

static void test_bad_rows_named(void **state)
{
    (void)state;
    const char *texts[] = {"A question about spiders?", NULL, "Another question?"};
    la_options *o = options();
    add_batch(o, "dev", "dev.arrow", make_batch(k_dev_ids, k_dev_text, k_dev_fam, k_dev_famok, k_dev_score, 3, 1), LA_OK);
    add_batch(o, "test", "test.arrow", make_batch(k_test_ids, texts, k_test_fam, k_test_famok, k_test_score, 3, 1), LA_OK);
    la_result *r = NULL;
    assert_int_equal(la_audit_run(o, &r), LA_EINPUT); /* --on-invalid fail */
    assert_null(r);
    assert_int_equal(la_options_set(o, "on-invalid", "reject"), LA_OK);
    assert_int_equal(la_audit_run(o, &r), LA_OK);
    size_t n = 0;
    const la_reject *rej = la_result_rejects(r, &n);
    assert_int_equal(n, 1);
    assert_int_equal(rej[0].line, 2);
    assert_string_equal(rej[0].id, "t2");
    /* as a JSON null in a file: the message lists the record's keys and names the option */
    assert_true(strncmp(rej[0].reasons[0], "text: missing; expected a string; the record has keys id, text, ", 64) == 0);
    assert_string_equal(la_table_file_name(la_result_table(r), rej[0].file), "test.arrow");
    la_result_free(r);
    la_options_free(o);
}

static void test_types_refused(void **state)
{
    (void)state;
    la_options *o = options();
    batch b = make_batch(k_dev_ids, k_dev_text, k_dev_fam, k_dev_famok, k_dev_score, 3, 1);
    b.s->children[1]->format = "z"; /* binary */
    int before = g_released;
    assert_int_equal(la_options_add_arrow(o, "dev", "dev.arrow", b.s, b.a), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "column 'text': Arrow type 'z' is not read"));
    b.s->children[1]->format = "u";
    b.s->children[2]->name = "id"; /* a column twice */
    assert_int_equal(la_options_add_arrow(o, "dev", "dev.arrow", b.s, b.a), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "column 'id': appears twice"));
    b.s->children[2]->name = "family";
    assert_int_equal(la_options_add_arrow(o, "dev", "-", b.s, b.a), LA_EINVAL);
    assert_int_equal(g_released, before); /* refused: still the caller's */
    assert_non_null(b.a->release);
    b.a->release(b.a);
    b.s->release(b.s);
    assert_int_equal(g_released, before + 2);
    free(b.s);
    free(b.a);
    la_options_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_jsonl),
        cmocka_unit_test(test_generated_ids),
        cmocka_unit_test(test_bad_rows_named),
        cmocka_unit_test(test_types_refused),
    };
    return cmocka_run_group_tests(tests, setup, scratch_teardown);
}
