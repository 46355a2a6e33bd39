/*
 * gsm8k_fixture.h - real text for the backend tests: the questions of the bundled examples/gsm8k
 * (1,007 dev and 300 test questions with planted near copies), lower-cased, as a row table and as
 * one CSR text batch. Header-only, for cmocka tests; include after <cmocka.h>. LA_SOURCE_DIR is set
 * by tests/CMakeLists.txt; the environment variable of that name overrides it.
 */
#ifndef LA_TEST_GSM8K_FIXTURE_H
#define LA_TEST_GSM8K_FIXTURE_H

#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table_fixture.h"

typedef struct gsm8k {
    fixture f;
    char *text;        /* every question, concatenated */
    uint64_t *off;     /* n + 1 offsets into text */
    size_t n;
} gsm8k;

static void gsm8k_read(gsm8k *g, const char *file, uint32_t part, size_t *cap)
{
    char path[1024], line[1 << 16];
    const char *root = getenv("LA_SOURCE_DIR"); /* the bundle of bench/gpu.sh runs elsewhere */
    snprintf(path, sizeof path, "%s/examples/gsm8k/%s", root && *root ? root : LA_SOURCE_DIR, file);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    while (fgets(line, sizeof line, fp)) {
        json_object *o = json_tokener_parse(line), *q, *id;
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "question", &q) && json_object_object_get_ex(o, "id", &id));
        const char *s = json_object_get_string(q);
        size_t len = strlen(s), at = g->off[g->n];
        while (at + len > *cap) g->text = realloc(g->text, *cap *= 2);
        for (size_t i = 0; i < len; i++) g->text[at + i] = (char)tolower((unsigned char)s[i]);
        char *norm = strndup(g->text + at, len);
        add(&g->f, part, json_object_get_string(id), norm);
        free(norm);
        g->off = realloc(g->off, (g->n + 2) * sizeof *g->off);
        g->off[++g->n] = at + len;
        json_object_put(o);
    }
    fclose(fp);
}

static void gsm8k_load(gsm8k *g)
{
    memset(g, 0, sizeof *g);
    setup(&g->f);
    size_t cap = 1 << 20;
    g->text = malloc(cap);
    g->off = calloc(1, sizeof *g->off);
    gsm8k_read(g, "dev.jsonl", g->f.dev, &cap);
    gsm8k_read(g, "test.jsonl", g->f.test, &cap);
}

static void gsm8k_free(gsm8k *g)
{
    la_table_free(g->f.t);
    free(g->text);
    free(g->off);
}

#endif /* LA_TEST_GSM8K_FIXTURE_H */
