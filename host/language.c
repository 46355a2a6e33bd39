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

/* Lower-case function words of other Latin-script languages that are not English words. Both lists
 * are kept in byte order (memcmp, a prefix first): list_index searches them by halves, and
 * la_language_lists_sorted lets the tests check it. */
static const char *const foreign_words[] = { /* at most 192 */
    "al", "alla", "anche", "ao", "au", "auch", "auf", "aux", "avec", "beim", "bitte", "ce", "cette", "che",
    "como", "con", "dans", "das", "de", "degli", "del", "della", "dem", "der", "des", "deze", "di", "dit",
    "du", "een", "ein", "eine", "einen", "el", "en", "essere", "est", "esta", "este", "est\xc3\xa1", "et",
    "foi", "f\xc3\xbcr", "geen", "gli", "het", "ich", "il", "isso", "ist", "kann", "keine", "konnte",
    "kunnen", "la", "las", "le", "les", "lo", "los", "maar", "mais", "mit", "m\xc3\xa1s", "naar", "ne", "nel",
    "nicht", "niet", "non", "nous", "n\xc3\xa3o", "oder", "ook", "ou", "para", "pas", "pela", "pelo", "pero",
    "peut", "por", "pour", "puede", "pu\xc3\xb2", "que", "questa", "questo", "qui", "se", "ser", "seu",
    "sich", "sie", "sind", "sono", "sont", "su", "sua", "sur", "sus", "s\xc3\xa3o", "tamb\xc3\xa9m", "te",
    "um", "uma", "un", "una", "und", "une", "voc\xc3\xaa", "von", "voor", "votre", "vous", "werden", "wilt",
    "wird", "worden", "wordt", "wurde", "zal", "zijn", "zu", "\xc3\xa8", "\xc3\xaatre",
};

static const char *const english_words[] = {
    "an", "and", "are", "as", "at", "be", "but", "by", "can", "did", "does", "each", "for", "from", "had",
    "has", "have", "he", "her", "his", "how", "if", "in", "into", "is", "it", "its", "many", "much", "not",
    "of", "on", "or", "she", "than", "that", "the", "their", "then", "there", "they", "this", "to", "was",
    "we", "were", "what", "which", "will", "with", "you",
};

/* w[0 .. n) against the NUL-terminated word b, in byte order with a prefix first. */
static int word_cmp(const char *w, size_t n, const char *b)
{
    size_t m = strlen(b);
    int c = memcmp(w, b, n < m ? n : m);
    return c ? c : (n > m) - (n < m);
}

/* The index of w[0 .. n) in the sorted list, or -1. */
static int list_index(const char *w, size_t n, const char *const *list, size_t count)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = word_cmp(w, n, list[mid]);
        if (!c) return (int)mid;
        if (c < 0) hi = mid;
        else lo = mid + 1;
    }
    return -1;
}

static int sorted(const char *const *list, size_t count)
{
    for (size_t i = 1; i < count; i++)
        if (word_cmp(list[i - 1], strlen(list[i - 1]), list[i]) >= 0) return 0;
    return 1;
}

int la_language_lists_sorted(void)
{
    return sorted(foreign_words, sizeof foreign_words / sizeof *foreign_words) &&
           sorted(english_words, sizeof english_words / sizeof *english_words);
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
        if (i < n && (unsigned char)s[i] < 0x80) {
            cp = (unsigned char)s[i]; /* ASCII: one byte, no decoding */
        } else if (i < n) {
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
