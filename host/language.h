/*
 * language.h - is a text English? The question the default model choice asks (tier_semantic.c):
 * all-MiniLM-L6-v2 reads English only, so a row in another language (a translated benchmark item)
 * makes the audit choose the multilingual model when it is installed.
 *
 * A text is "not English" when
 *   - it has at least 2 Han, Kana, Hangul or Thai-family characters (scripts written without
 *     spaces), or
 *   - of its words of two or more letters, at least 3 and at least 40 % have a letter outside
 *     ASCII (Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai, Vietnamese, ...; an English text
 *     with "café" or "naïve", or single Greek letters in a formula, stays English), or
 *   - it has at least 6 words, among them at least 3 different common function words of
 *     Spanish, French, German, Portuguese, Italian or Dutch that are not English words ("los",
 *     "une", "und", "não", "della", "het"), and more of those than English function words ("the",
 *     "of", "and"): a name such as "Los Angeles" or a citation's "et al." is not enough.
 * It is a heuristic for choosing a model, not a language identifier: it never changes a link.
 */
#ifndef LA_LANGUAGE_H
#define LA_LANGUAGE_H

#include <stddef.h>

typedef enum la_lang_verdict {
    LA_LANG_ENGLISH = 0,        /* English, or too little text to tell */
    LA_LANG_UNSPACED_SCRIPT,    /* Han, Kana or Hangul */
    LA_LANG_OTHER_SCRIPT,       /* words written with letters outside ASCII */
    LA_LANG_OTHER_LATIN,        /* function words of another Latin-script language */
} la_lang_verdict;

/* The verdict on the UTF-8 text s[0 .. n) (invalid bytes count as non-letters). */
la_lang_verdict la_text_language(const char *s, size_t n);

/* 1 when the function-word lists are in the byte order their search needs (a check for the tests). */
int la_language_lists_sorted(void);

/* A few words for the verdict ("Han, Kana or Hangul script"), for reports. */
const char *la_lang_verdict_name(la_lang_verdict v);

#endif
