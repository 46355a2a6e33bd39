/* language.c - is a text English? (see language.h for the rules) */
#include "language.h"

#include <stdint.h>
#include <string.h>
#include <utf8proc.h>

/* Han, Kana, Hangul and the scripts of South-East Asia written without spaces between words. */
static int unspaced_script(int32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2FFFF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) ||
           (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0x1100 && c <= 0x11FF) || (c >= 0x3130 && c <= 0x318F) ||
           (c >= 0x0E00 && c <= 0x0EFF) || (c >= 0x1000 && c <= 0x109F) || (c >= 0x1780 && c <= 0x17FF);
}

/* Letters, and the marks that belong to them (vowel signs, combining accents). */
static int is_letter(int32_t c)
{
    if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
        return 1;
    default:
        return 0;
    }
}

/* Lower-case function words of other Latin-script languages that are not English words. */
static const char *const foreign_words[] = { /* at most 192 */
    "el", "los", "las", "del", "una", "por", "para", "con", "est\xc3\xa1", "pero", "m\xc3\xa1s", "que", "como",
    "sus", "este", "esta", "le", "les", "des", "du", "est", "une", "et", "pour", "dans", "pas", "qui", "sur",
    "avec", "sont", "cette", "ce", "au", "aux", "vous", "nous", "ne", "il", "der", "das", "und", "ist", "nicht",
    "ein", "eine", "mit", "f\xc3\xbcr", "auf", "dem", "sich", "auch", "werden", "wird", "zu", "von", "ich",
    "sie", "n\xc3\xa3o", "uma", "s\xc3\xa3o", "mais", "pelo", "pela", "tamb\xc3\xa9m", "isso",
    "della", "che", "gli", "sono", "degli", "nel", "alla", "questo", "anche", "het", "een", "niet", "zijn",
    "voor", "ook", "wordt", "naar", "maar", "deze", "la", "de", "en", "se", "lo", "al", "su", "puede", "um",
    "ao", "voc\xc3\xaa", "seu", "sua", "foi", "ser", "di", "un", "non", "\xc3\xa8", "essere", "questa",
    "pu\xc3\xb2", "kann", "oder", "wurde", "beim", "einen", "keine", "sind", "bitte", "ou", "\xc3\xaatre", "peut",
    "votre", "te", "geen", "worden", "dit", "wilt", "kunnen", "zal", "konnte",
};

static const char *const english_words[] = {
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "with", "as", "was", "on", "be", "by", "this",
    "are", "from", "at", "have", "an", "which", "you", "or", "not", "but", "his", "her", "they", "we", "has",
    "had", "were", "will", "can", "if", "there", "their", "what", "how", "many", "much", "each", "does", "did",
    "she", "he", "its", "into", "than", "then",
};

/* The index of w[0 .. n) in list, or -1. */
static int list_index(const char *w, size_t n, const char *const *list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(list[i]) == n && !memcmp(list[i], w, n)) return (int)i;
    return -1;
}

typedef struct word_counts {
    size_t unspaced;    /* Han, Kana, Hangul, Thai... characters */
    size_t words;       /* words of two or more letters */
    size_t non_ascii;   /* ... with a letter outside ASCII */
    size_t all_words;   /* words of any length */
    size_t foreign;     /* function words of another Latin-script language */
    uint64_t kinds[3];  /* ... which of them (bits by index into foreign_words) */
    size_t english;     /* English function words */
} word_counts;

/* One word s[0 .. n) of `letters` letters, `wide` of them outside ASCII. */
static void count_word(word_counts *c, const char *s, size_t n, size_t letters, size_t wide)
{
    char low[24];
    c->all_words++;
    if (letters >= 2) {
        c->words++;
        c->non_ascii += wide > 0;
    }
    if (n >= sizeof low) return;
    for (size_t i = 0; i < n; i++) low[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] + 32) : s[i];
    int f = list_index(low, n, foreign_words, sizeof foreign_words / sizeof *foreign_words);
    if (f >= 0) c->foreign++, c->kinds[f / 64] |= 1ull << (f % 64);
    c->english += list_index(low, n, english_words, sizeof english_words / sizeof *english_words) >= 0;
}

la_lang_verdict la_text_language(const char *s, size_t n)
{
    word_counts c = {0};
    size_t i = 0, start = 0, letters = 0, wide = 0;
    while (i <= n) {
        int32_t cp = -1;
        utf8proc_ssize_t adv = 1;
        if (i < n) {
            adv = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
            if (adv <= 0) adv = 1, cp = -1;
        }
        if (cp >= 0 && unspaced_script(cp)) c.unspaced++;
        if (cp >= 0 && is_letter(cp) && !unspaced_script(cp)) {
            if (!letters) start = i;
            letters++;
            wide += cp >= 0x80;
        } else if (letters) {
            count_word(&c, s + start, i - start, letters, wide);
            letters = wide = 0;
        }
        i += (size_t)adv;
    }
    if (c.unspaced >= 2) return LA_LANG_UNSPACED_SCRIPT;
    if (c.non_ascii >= 3 && c.non_ascii * 10 >= c.words * 4) return LA_LANG_OTHER_SCRIPT;
    int kinds = __builtin_popcountll(c.kinds[0]) + __builtin_popcountll(c.kinds[1]) + __builtin_popcountll(c.kinds[2]);
    if (c.all_words >= 6 && kinds >= 3 && c.foreign > c.english) return LA_LANG_OTHER_LATIN;
    return LA_LANG_ENGLISH;
}

const char *la_lang_verdict_name(la_lang_verdict v)
{
    switch (v) {
    case LA_LANG_UNSPACED_SCRIPT: return "Chinese, Japanese, Korean or Thai-family script";
    case LA_LANG_OTHER_SCRIPT: return "words with letters outside the English alphabet";
    case LA_LANG_OTHER_LATIN: return "function words of a language other than English";
    default: return "English";
    }
}
