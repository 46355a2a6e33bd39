/* test_unigram.c - the SentencePiece unigram tokenizer against golden tokenizations of the
 * reference `tokenizers` package (tests/data/encoder/unigram_*, made by
 * bench/encoder/make_unigram_fixture.py: NFKC + Replace normalizer, WhitespaceSplit + Metaspace,
 * Viterbi with unknown runs fused), and clear errors for what it does not read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tokenizer_unigram.h"

static char g_data[PATH_MAX];

static void test_golden(void **state)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/unigram_tokenizer.json", g_data);
    la_unigram *u;
    assert_int_equal(la_unigram_new(p, &u), LA_OK);
    assert_int_equal(la_unigram_size(u), 800);
    snprintf(p, sizeof p, "%s/unigram_golden.jsonl", g_data);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char line[1 << 16];
    size_t n = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        json_object *o = json_tokener_parse(line), *jt = NULL, *ji = NULL;
        assert_true(o && json_object_object_get_ex(o, "text", &jt) && json_object_object_get_ex(o, "ids", &ji));
        int32_t *ids = NULL;
        size_t nid = 0, cap = 0;
        assert_int_equal(la_unigram_encode(u, json_object_get_string(jt), (size_t)json_object_get_string_len(jt), &ids,
                                           &nid, &cap),
                         LA_OK);
        size_t want = json_object_array_length(ji);
        int same = nid == want;
        for (size_t k = 0; same && k < want; k++) same = ids[k] == json_object_get_int(json_object_array_get_idx(ji, k));
        if (!same) {
            bad++;
            fprintf(stderr, "differs for '%s': %zu ids, reference %zu:", json_object_get_string(jt), nid, want);
            for (size_t k = 0; k < nid; k++) fprintf(stderr, " %s", la_unigram_piece(u, ids[k]));
            fprintf(stderr, "\n");
        }
        free(ids);
        json_object_put(o);
        n++;
    }
    fclose(f);
    la_unigram_free(u);
    assert_true(n >= 70);
    assert_int_equal(bad, 0);
}

static void expect_error(const char *json, la_status want, const char *needle)
{
    char p[64];
    snprintf(p, sizeof p, "/tmp/la_unigram_XXXXXX");
    int fd = mkstemp(p);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    la_unigram *u = NULL;
    la_status s = la_unigram_new(p, &u);
    if (s != want || !strstr(la_last_error(), needle) || !strstr(la_last_error(), p))
        fail_msg("expected %d with '%s' and the file name, got %d: %s", want, needle, s, la_last_error());
    assert_null(u);
    unlink(p);
}

static void test_errors_name_file_and_field(void **state)
{
    expect_error("{\"model\": {\"type\": \"BPE\"}}", LA_EINPUT, "'model'");
    expect_error("{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}", LA_EINPUT, "model.vocab");
    expect_error("{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\", -1.0]]}}", LA_EINPUT, "unk_id");
    expect_error("{\"model\": {\"type\": \"Unigram\", \"unk_id\": 0, \"vocab\": [[\"a\", -1.0]]}, "
                 "\"normalizer\": {\"type\": \"Precompiled\", \"precompiled_charsmap\": \"\"}}",
                 LA_EUNSUPPORTED, "'Precompiled'");
    expect_error("not json", LA_EINPUT, "JSON");
    la_unigram *u = NULL;
    assert_int_equal(la_unigram_new("/nonexistent/tokenizer.json", &u), LA_EINPUT);
    assert_non_null(strstr(la_last_error(), "/nonexistent/tokenizer.json"));
}

int main(void)
{
    snprintf(g_data, sizeof g_data, "%s", __FILE__);
    char *slash = strrchr(g_data, '/');
    snprintf(slash ? slash + 1 : g_data, sizeof g_data - (size_t)(slash ? slash + 1 - g_data : 0), "../data/encoder");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_errors_name_file_and_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
