/*
 * test_language.c - the English check behind the default model choice (host/language.h): English
 * reads as English, also with names ("Los Angeles"), accents ("café"), Greek letters in a formula,
 * citations ("et al.") and URLs; Chinese, Japanese, Korean, Russian, Greek, Vietnamese, Spanish,
 * French, German, Portuguese, Italian and Dutch sentences do not; and la_model_default_for picks
 * the multilingual model only when a text is not English and that model is installed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "language.h"
#include "model.h"

static la_lang_verdict verdict(const char *s) { return la_text_language(s, strlen(s)); }

static void test_english_stays_english(void **state)
{
    (void)state;
    static const char *const english[] = {
        "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.",
        "Los Angeles airport worker charged with making threats",
        "Let \xce\xb8 and \xcf\x86 be the angles of the triangle; find \xcf\x88 when \xcf\x89 = 2.",
        "The caf\xc3\xa9 served a na\xc3\xafve r\xc3\xa9sum\xc3\xa9 of the menu.",
        "As shown by Smith et al. (2019), see http://example.com/questions/306 for the dataset.",
        "Yes, it's probably a good idea to renew your passport.",
        "cannot open %s: no such file or directory",
        "",
        "42",
        "\xe2\x82\xac 5 \xe2\x80\x94 \xe2\x9c\x93",
    };
    for (size_t i = 0; i < sizeof english / sizeof *english; i++) {
        if (verdict(english[i]) != LA_LANG_ENGLISH) fprintf(stderr, "not English: %s\n", english[i]);
        assert_int_equal(verdict(english[i]), LA_LANG_ENGLISH);
    }
}

static void test_other_languages_are_found(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        la_lang_verdict v;
    } other[] = {
        {"\xe6\x96\x87\xe4\xbb\xb6\xe4\xb8\x8d\xe5\xad\x98\xe5\x9c\xa8", LA_LANG_UNSPACED_SCRIPT}, /* Chinese */
        {"\xe3\x83\x95\xe3\x82\xa1\xe3\x82\xa4\xe3\x83\xab\xe3\x81\x8c\xe3\x81\x82\xe3\x82\x8a\xe3\x81\xbe\xe3\x81\x9b"
         "\xe3\x82\x93", LA_LANG_UNSPACED_SCRIPT}, /* Japanese */
        {"\xed\x8c\x8c\xec\x9d\xbc\xec\x9d\xb4 \xec\x97\x86\xec\x8a\xb5\xeb\x8b\x88\xeb\x8b\xa4", LA_LANG_UNSPACED_SCRIPT},
        {"\xd0\xa4\xd0\xb0\xd0\xb9\xd0\xbb \xd0\xbd\xd0\xb5 \xd0\xbd\xd0\xb0\xd0\xb9\xd0\xb4\xd0\xb5\xd0\xbd "
         "\xd0\xb8\xd0\xbb\xd0\xb8 \xd0\xbf\xd0\xbe\xd0\xb2\xd1\x80\xd0\xb5\xd0\xb6\xd0\xb4\xd0\xb5\xd0\xbd",
         LA_LANG_OTHER_SCRIPT}, /* Russian */
        {"\xce\xa4\xce\xbf \xce\xb1\xcf\x81\xcf\x87\xce\xb5\xce\xaf\xce\xbf \xce\xb4\xce\xb5\xce\xbd "
         "\xce\xb2\xcf\x81\xce\xad\xce\xb8\xce\xb7\xce\xba\xce\xb5", LA_LANG_OTHER_SCRIPT}, /* Greek */
        {"Kh\xc3\xb4ng th\xe1\xbb\x83 m\xe1\xbb\x9f t\xe1\xbb\x87p v\xc3\xac n\xc3\xb3 \xc4\x91\xc3\xa3 b\xe1\xbb\x8b "
         "x\xc3\xb3\x61", LA_LANG_OTHER_SCRIPT}, /* Vietnamese */
        {"Natalia vendi\xc3\xb3 broches a 48 de sus amigas en abril, y luego vendi\xc3\xb3 la mitad en mayo.",
         LA_LANG_OTHER_LATIN},
        {"Le fichier ne peut pas \xc3\xaatre ouvert parce que il est utilis\xc3\xa9 par une autre application.",
         LA_LANG_OTHER_LATIN},
        {"Die Datei kann nicht ge\xc3\xb6\x66\x66net werden, weil sie von einem anderen Programm verwendet wird.",
         LA_LANG_OTHER_LATIN},
        {"O arquivo n\xc3\xa3o pode ser aberto porque est\xc3\xa1 em uso por outro programa.", LA_LANG_OTHER_LATIN},
        {"Il file non pu\xc3\xb2 essere aperto perch\xc3\xa9 \xc3\xa8 usato da un altro programma.",
         LA_LANG_OTHER_LATIN},
        {"Het bestand kan niet worden geopend omdat het door een ander programma wordt gebruikt.",
         LA_LANG_OTHER_LATIN},
    };
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        if (verdict(other[i].text) != other[i].v) fprintf(stderr, "expected %d: %s\n", (int)other[i].v, other[i].text);
        assert_int_equal(verdict(other[i].text), other[i].v);
    }
    /* invalid UTF-8 is neither letters nor a crash */
    assert_int_equal(la_text_language("\xff\xfe the end of \xc3", 16), LA_LANG_ENGLISH);
}

static char g_root[256];

static int make_root(void **state)
{
    (void)state;
    snprintf(g_root, sizeof g_root, "%s/la_lang_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_root)) return -1;
    setenv("LEAKAUDIT_MODELS", g_root, 1);
    return 0;
}

static int remove_root(void **state)
{
    (void)state;
    char p[512];
    snprintf(p, sizeof p, "%s/" LA_MODEL_MULTILINGUAL "/e5-small-q4.bin", g_root);
    unlink(p);
    snprintf(p, sizeof p, "%s/" LA_MODEL_MULTILINGUAL, g_root);
    rmdir(p);
    rmdir(g_root);
    return 0;
}

static void label(void *ctx, size_t i, char *buf, size_t size)
{
    snprintf(buf, size, "%s %zu", (const char *)ctx, i);
}

static void test_default_model_choice(void **state)
{
    (void)state;
    const char *texts[] = {"How many apples does Sam have now?", "\xe5\xb1\xb1\xe5\xa7\x86\xe6\x9c\x89\xe5\x87\xa0"
                                                               "\xe4\xb8\xaa\xe8\x8b\xb9\xe6\x9e\x9c\xef\xbc\x9f"};
    size_t lens[] = {strlen(texts[0]), strlen(texts[1])};
    char why[300];
    /* English only: the English model, whatever is installed */
    assert_string_equal(la_model_default_for(texts, lens, 1, NULL, NULL, why, sizeof why), LA_MODEL_DEFAULT);
    assert_string_equal(why, "every text reads as English");
    /* a Chinese text, the multilingual model missing: still the English one, and why says so */
    assert_string_equal(la_model_default_for(texts, lens, 2, label, "row", why, sizeof why), LA_MODEL_DEFAULT);
    assert_non_null(strstr(why, "1 of 2 texts are not English (the first: row 1, Chinese"));
    assert_non_null(strstr(why, "but " LA_MODEL_MULTILINGUAL " is not installed"));
    /* once it is installed, the multilingual model */
    char p[512];
    snprintf(p, sizeof p, "%s/" LA_MODEL_MULTILINGUAL, g_root);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/" LA_MODEL_MULTILINGUAL "/e5-small-q4.bin", g_root);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fclose(f);
    assert_string_equal(la_model_default_for(texts, lens, 2, NULL, NULL, why, sizeof why), LA_MODEL_MULTILINGUAL);
    assert_string_equal(why, "1 of 2 texts are not English (the first: text 2, Chinese, Japanese, Korean or "
                             "Thai-family script)");
}

/* The function-word lists are searched by halves: a word added out of order would go unseen. */
static void test_word_lists_are_in_search_order(void **state)
{
    (void)state;
    assert_true(la_language_lists_sorted());
    /* the first, a middle and the last word of each list, and one past either end */
    assert_int_equal(verdict("al alla anche und zu wurde zijn"), LA_LANG_OTHER_LATIN);
    assert_int_equal(verdict("\xc3\xaatre \xc3\xa8 vous werden und une les"), LA_LANG_OTHER_LATIN);
    assert_int_equal(verdict("aa ab zz zzz zzzz zzzzz zzzzzz"), LA_LANG_ENGLISH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_english_stays_english),
        cmocka_unit_test(test_other_languages_are_found),
        cmocka_unit_test(test_word_lists_are_in_search_order),
        cmocka_unit_test_setup_teardown(test_default_model_choice, make_root, remove_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
