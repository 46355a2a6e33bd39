/*
 * grade.c - grades for content links (see grade.h).
 *
 * Three phases:
 *   1. the held-out rows that have a content link put their words and word pairs into one table;
 *   2. every row of the table (all partitions) counts, for each key of that table it contains, one
 *      document (the exact document frequency, only for keys that grading reads);
 *   3. each link compares its two rows: weighted containment of the held-out row's word pairs and
 *      words, its numbers, and the numbers the other row states in the same words around them.
 * Words are the near tier's: maximal runs of bytes that are not ASCII whitespace or punctuation.
 * The small English number words (two .. twenty, the tens, hundred, thousand, million, twice,
 * double, triple, thrice, fourfold, dozen, decade, duo, trio, quartet, quintet; not "one" alone,
 * which is as often a pronoun) count as the numbers they name, so "three" in one row matches "3" in
 * the other; number words next to each other join ("twenty-five", "3 dozen", "four decades" are 25,
 * 36 and 40), and an ordinal written with digits counts as its number ("4th" is 4). Counting "one"
 * as 1 was measured: it made a clean GSM8K train/test audit fail on a template sibling.
 */
#include "grade.h"
#include "la_alloc.h"
#include "la_arena.h"
#include "la_bits.h"
#include "la_prefetch.h"
#include "la_time.h"

#include "near_kernels.h"
#include "parallel.h"
#include "shingle_core.h"
#include "shingle_scan.h"

#include <pthread.h>

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONTENT_KINDS (LA_KIND_EXACT | LA_KIND_NEAR | LA_KIND_SEMANTIC)
#define K_UNI 0x756e696772616d73ull /* "unigrams" */
#define K_BI 0x62696772616d7373ull  /* "bigramss" */
#define K_CTX 0x636f6e7465787473ull /* "contexts" */

void la_grade_params_default(la_grade_params *p)
{
    p->copy_share = 0.9;
    p->near_share = 0.45;
    p->near_words = 0.65;
    p->near_words_pairs = 0.25;
    p->near_words_all = 0.90;
    p->rarity_k = 4.0;
    p->numbers_alpha = 0.05;
    p->changed_share = 0.2;
    p->numbers_max_words = 150;
    p->copy_cosine = 0.97;
    p->numbers_cosine = 0.90;
    p->few_numbers_cosine = 0.86;
    p->digits_cosine = 0;
    p->slot_min_siblings = 4;
    p->slot_keep = 0.85;
    p->slot_evidence = 4.0;
    p->semantic_lexical = 1;
    p->threads = 0;
}

/* ---- words ------------------------------------------------------------------------------------- */

typedef struct u64v {
    uint64_t *v;
    size_t n, cap;
} u64v;

static int u64v_reserve(u64v *a, size_t need)
{
    if (need <= a->cap) return 1;
    size_t cap = a->cap ? a->cap : 64;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / sizeof *a->v) return 0;
        cap *= 2;
    }
    uint64_t *v = realloc(a->v, cap * sizeof *v);
    if (!v) return 0;
    a->v = v;
    a->cap = cap;
    return 1;
}

/* The words of one row: their hashes in text order, and which are numbers. */
typedef struct words {
    u64v h;
    unsigned char *num;
    size_t numcap;
} words;

static const char *const k_number_words[][2] = {
    {"zero", "0"},       {"two", "2"},         {"three", "3"},      {"four", "4"},
    {"five", "5"},       {"six", "6"},        {"seven", "7"},       {"eight", "8"},      {"nine", "9"},
    {"ten", "10"},       {"eleven", "11"},    {"twelve", "12"},     {"thirteen", "13"},  {"fourteen", "14"},
    {"fifteen", "15"},   {"sixteen", "16"},   {"seventeen", "17"},  {"eighteen", "18"},  {"nineteen", "19"},
    {"twenty", "20"},    {"thirty", "30"},    {"forty", "40"},      {"fifty", "50"},     {"sixty", "60"},
    {"seventy", "70"},   {"eighty", "80"},    {"ninety", "90"},     {"hundred", "100"},  {"thousand", "1000"},
    {"million", "1000000"}, {"twice", "2"},     {"double", "2"},      {"triple", "3"},     {"thrice", "3"},
    {"fourfold", "4"},   {"dozen", "12"},     {"decade", "10"},     {"duo", "2"},        {"trio", "3"},
    {"quartet", "4"},    {"quintet", "5"}};

/* Words that multiply the number before them: "3 dozen" is 36, "four decades" 40, "two hundred" 200. */
static const struct {
    const char *word;
    unsigned factor;
} k_multipliers[] = {{"dozen", 12},  {"dozens", 12},      {"decade", 10},         {"decades", 10},
                     {"hundred", 100}, {"thousand", 1000}, {"million", 1000000}};

/* The index of s[0 .. n) in a table of words (stride: bytes per entry), or -1. Most words are
 * rejected by their first letter before any comparison. */
static int word_index(const char *s, size_t n, const void *table, size_t count, size_t stride)
{
    for (size_t i = 0; i < count; i++) {
        const char *w = *(const char *const *)((const char *)table + i * stride);
        if (w[0] == s[0] && strlen(w) == n && memcmp(s, w, n) == 0) return (int)i;
    }
    return -1;
}

static unsigned multiplier(const char *s, size_t n)
{
    if (n < 5 || n > 8 || (s[0] != 'd' && s[0] != 'h' && s[0] != 't' && s[0] != 'm')) return 0;
    int i = word_index(s, n, k_multipliers, sizeof k_multipliers / sizeof *k_multipliers, sizeof *k_multipliers);
    return i < 0 ? 0 : k_multipliers[i].factor;
}

/* "4th", "21st", "2nd", "3rd": digits followed by an ordinal suffix. */
static int ordinal_suffix(const char *s, size_t n)
{
    char a = s[n - 2], b = s[n - 1];
    if (s[n - 3] < '0' || s[n - 3] > '9') return 0;
    return (a == 's' && b == 't') || (a == 'n' && b == 'd') || (a == 'r' && b == 'd') || (a == 't' && b == 'h');
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The value of the whole number written s[b .. e) in digits, or 0: not all digits, a leading zero,
 * more than 9 digits, or a piece of a longer number ("1.5", "2,000"). */
static uint64_t digits_value(const char *s, size_t n, size_t b, size_t e)
{
    if (e - b > 9 || s[b] == '0') return 0;
    if (b >= 2 && (s[b - 1] == '.' || s[b - 1] == ',') && is_digit(s[b - 2])) return 0;
    if (e + 1 < n && (s[e] == '.' || s[e] == ',') && is_digit(s[e + 1])) return 0;
    uint64_t v = 0;
    for (size_t k = b; k < e; k++) {
        if (!is_digit(s[k])) return 0;
        v = v * 10 + (uint64_t)(s[k] - '0');
    }
    return v;
}

/* What the last word split_words kept says about the number it may be part of. */
typedef struct number_state {
    uint64_t value; /* its value when it is a whole number (0: it is not) */
    int tens;       /* a tens word ("twenty"): a unit word after it adds to it ("twenty-five") */
    int scaled;     /* a multiple of a hundred from a multiplier ("three hundred"): a smaller number
                       word after it adds to it ("three hundred twenty") */
    size_t end;     /* where it ends in the text */
} number_state;

/* Only spaces, or one hyphen, between the last word and the next at b. */
static int adjacent(const char *s, const number_state *st, size_t b)
{
    int hyphens = 0;
    for (size_t k = st->end; k < b; k++) {
        if (s[k] == '-') hyphens++;
        else if (s[k] != ' ') return 0;
    }
    return hyphens <= 1;
}

/* The number a word s[b .. e) joins to the last one, or 0: "3" + "dozen", "twenty" + "five",
 * "three hundred" + "twenty". word_value: the word's own value as a number word (0: none). */
static uint64_t joined_number(const char *s, size_t b, size_t e, uint64_t word_value, const number_state *st)
{
    if (!st->value || !adjacent(s, st, b)) return 0;
    unsigned f = multiplier(s + b, e - b);
    if (f && st->value < 1000000000u) return st->value * f;
    int unit = (e - b == 3 && !memcmp(s + b, "one", 3)) ? 1 : word_value >= 1 && word_value <= 9 ? (int)word_value : 0;
    if (st->tens && unit) return st->value + (uint64_t)unit;
    if (st->scaled && word_value && word_value < 100) return st->value + word_value;
    return 0;
}

/* The last word becomes the number v (as its digits hash). */
static void replace_last_number(words *w, uint64_t v)
{
    char d[24];
    int len = snprintf(d, sizeof d, "%llu", (unsigned long long)v);
    w->h.v[w->h.n - 1] = la_hash_bytes((const unsigned char *)d, (size_t)len);
}

/* The number words by their hash as words: a table the scan looks each word's hash up in (one
 * probe for most words) in place of comparing the word with every entry. Built once per process. */
enum { NUMBER_SLOTS = 512 };
typedef struct number_slot {
    uint64_t word;           /* la_hash_bytes of the word (0: empty slot) */
    uint64_t digits;         /* la_hash_bytes of its digits */
    uint64_t value;
    const char *text;
    size_t len;
} number_slot;
static number_slot k_number_slots[NUMBER_SLOTS];
/* bit i: slot i holds a number word; most words' home slot is empty, and this one cache line says so
 * without a load from the 20 KB of slots */
static uint64_t k_number_taken[NUMBER_SLOTS / 64];
static pthread_once_t number_once = PTHREAD_ONCE_INIT;

static size_t number_home(uint64_t h) { return (size_t)(h >> 55) & (NUMBER_SLOTS - 1); }

static void number_table_init(void)
{
    for (size_t k = 0; k < sizeof k_number_words / sizeof *k_number_words; k++) {
        const char *w = k_number_words[k][0], *d = k_number_words[k][1];
        uint64_t h = la_hash_bytes((const unsigned char *)w, strlen(w));
        size_t i = number_home(h);
        while (k_number_slots[i].word) i = (i + 1) & (NUMBER_SLOTS - 1);
        k_number_slots[i] = (number_slot){h, la_hash_bytes((const unsigned char *)d, strlen(d)), strtoull(d, NULL, 10), w, strlen(w)};
        k_number_taken[i / 64] |= 1ull << (i % 64);
    }
}

/* The number word s[0 .. n) with hash h (la_hash_bytes), or NULL. */
static const number_slot *number_word_hashed(const char *s, size_t n, uint64_t h)
{
    size_t home = number_home(h);
    if (n < 3 || n > 9 || !(k_number_taken[home / 64] >> (home % 64) & 1)) return NULL;
    for (size_t i = home; k_number_slots[i].word; i = (i + 1) & (NUMBER_SLOTS - 1))
        if (k_number_slots[i].word == h && k_number_slots[i].len == n && !memcmp(k_number_slots[i].text, s, n))
            return &k_number_slots[i];
    return NULL;
}

/* One word s[b .. e) of the text s[0 .. n) into w; digit: it holds an ASCII digit. w has room. Any
 * word: add_word below takes the common case inline and leaves the rest to this one. */
static __attribute__((noinline)) void add_any_word(const char *s, size_t n, size_t b, size_t e, int digit, words *w,
                                                   number_state *st)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len = e - b;
    if (digit && len > 2 && ordinal_suffix(s + b, len)) len -= 2;
    uint64_t h = la_scan_word_token(p, b, len, n);
    const number_slot *nw = digit ? NULL : number_word_hashed(s + b, len, h);
    uint64_t word_value = nw ? nw->value : 0;
    uint64_t joined = joined_number(s, b, e, word_value, st);
    if (joined) {
        replace_last_number(w, joined);
        int tens_word = word_value >= 20 && word_value <= 90 && word_value % 10 == 0;
        *st = (number_state){joined, tens_word && st->scaled, multiplier(s + b, e - b) && joined % 100 == 0, e};
        return;
    }
    w->h.v[w->h.n] = nw ? nw->digits : h;
    w->num[w->h.n] = (unsigned char)(digit || nw);
    w->h.n++;
    uint64_t value = digit ? digits_value(s, n, b, b + len) : word_value;
    *st = (number_state){value, !digit && value >= 20 && value <= 90 && value % 10 == 0, 0, e};
}

/* add_any_word's common case, inline: a word with no digit, after a word that is no number (nothing
 * joins it), whose hash no number word has, is its hash alone; st stays "no number". Most words are
 * this case, and it spares them the call and the number checks (grading's count tokenizes every
 * row). */
static inline void add_word(const char *s, size_t n, size_t b, size_t e, int digit, words *w, number_state *st)
{
    if (!digit && !st->value) {
        uint64_t h = la_scan_word_token((const unsigned char *)s, b, e - b, n);
        size_t home = number_home(h);
        if (!(k_number_taken[home / 64] >> (home % 64) & 1)) {
            w->h.v[w->h.n] = h;
            w->num[w->h.n] = 0;
            w->h.n++;
            return;
        }
    }
    add_any_word(s, n, b, e, digit, w, st);
}

/*
 * The words of s, hashed, with their number bits. A number is its digits whether written in digits
 * or in words: "twenty-five" and "25", "four decades" and "40", "3 dozen" and "36" are one word each,
 * with the same hash (the joined words are one word: "3 dozen eggs" is the words 36, eggs). Words
 * are found 64 bytes at a time from bit masks of the word bytes and the digits, as the near tier
 * finds them.
 */
static int split_words(const char *s, size_t n, words *w)
{
    pthread_once(&number_once, number_table_init);
    w->h.n = 0;
    /* a text of n bytes has at most (n + 1) / 2 words */
    size_t most = n / 2 + 1;
    if (!u64v_reserve(&w->h, most)) return 0;
    if (most > w->numcap) {
        unsigned char *q = realloc(w->num, w->h.cap);
        if (!q) return 0;
        w->num = q;
        w->numcap = w->h.cap;
    }
    number_state st = {0};
    const unsigned char *p = (const unsigned char *)s;
    uint64_t in = 0;          /* the last byte of the previous block is a word byte */
    size_t open = SIZE_MAX;   /* start of a word still open at the end of the previous block */
    int open_digit = 0;       /* that word holds a digit so far */
    for (size_t base = 0; base < n; base += 64) {
        uint64_t dg, m = la_scan_block_masks(p, n, base, &dg);
        uint64_t before = m << 1 | in; /* bit j: the byte before byte j is a word byte */
        uint64_t bs = m & ~before, en = ~m & before;
        in = m >> 63;
        if (open != SIZE_MAX) {
            if (!en) {            /* the open word spans this whole block */
                open_digit |= dg != 0;
                continue;
            }
            unsigned e = (unsigned)__builtin_ctzll(en);
            en &= en - 1;
            open_digit |= (dg & ((1ull << e) - 1)) != 0;
            add_word(s, n, open, base + e, open_digit, w, &st);
            open = SIZE_MAX;
        }
        while (en) {
            unsigned b = (unsigned)__builtin_ctzll(bs), e = (unsigned)__builtin_ctzll(en);
            bs &= bs - 1;
            en &= en - 1;
            /* bits b .. e - 1 (e > b, e <= 63) */
            uint64_t span = (~0ull >> (64 - (e - b))) << b;
            add_word(s, n, base + b, base + e, (dg & span) != 0, w, &st);
        }
        if (bs) {
            unsigned b = (unsigned)__builtin_ctzll(bs);
            open = base + b;
            open_digit = (dg >> b) != 0;
        }
    }
    if (open != SIZE_MAX) add_word(s, n, open, n, open_digit, w, &st); /* a word ending the text */
    return 1;
}

/* Keys of a word (its lowest bit says whether it is a number), of a word pair, and of the two words
 * around a number. */
static uint64_t uni_key(uint64_t h, int num) { return (la_mix64(h ^ K_UNI) & ~1ull) | (uint64_t)(num != 0); }
static uint64_t bi_key(uint64_t x, uint64_t y) { return la_mix64(la_rotl64(x, 17) ^ y ^ K_BI); }
static uint64_t ctx_key(uint64_t l, uint64_t r) { return la_mix64(la_rotl64(l, 29) ^ r ^ K_CTX); }

static int cmp_ctx(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static void sorted_unique(u64v *a)
{
    la_cpu_shingle_sort(a->v, a->n);
    a->n = la_cpu_shingle_unique(a->v, a->n);
}

/* The numbers of w with a word on either side: the contexts row_keys keeps. */
static size_t ctx_numbers(const words *w)
{
    size_t m = 0;
    for (size_t i = 1; i + 1 < w->h.n; i++) m += w->num[i] != 0;
    return m;
}

/* A row's distinct words and word pairs (sorted), and the numbers with the two words around them:
 * pairs (context key, number key), sorted by context. A text of one word has one word pair: the
 * word alone, as in the near tier. uni and bi have room for n + 1 keys (n words), ctx for
 * 2 x ctx_numbers(w) + 2. */
static void row_keys(const words *w, u64v *uni, u64v *bi, u64v *ctx)
{
    size_t n = w->h.n;
    uni->n = bi->n = 0;
    for (size_t i = 0; i < n; i++) uni->v[uni->n++] = uni_key(w->h.v[i], w->num[i]);
    if (n == 1) bi->v[bi->n++] = bi_key(w->h.v[0], 0);
    for (size_t i = 0; i + 1 < n; i++) bi->v[bi->n++] = bi_key(w->h.v[i], w->h.v[i + 1]);
    sorted_unique(uni);
    sorted_unique(bi);
    size_t m = 0;
    for (size_t i = 1; i + 1 < n; i++)
        if (w->num[i]) {
            ctx->v[2 * m] = ctx_key(w->h.v[i - 1], w->h.v[i + 1]);
            ctx->v[2 * m + 1] = uni_key(w->h.v[i], 1);
            m++;
        }
    qsort(ctx->v, m, 2 * sizeof *ctx->v, cmp_ctx);
    ctx->n = m;
}

/* First (context, number) pair of ctx (sorted by context) with this context: its index, or ctx->n. */
static size_t ctx_first(const u64v *ctx, uint64_t context)
{
    size_t lo = 0, hi = ctx->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ctx->v[2 * mid] < context) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int ctx_has(const u64v *ctx, uint64_t context, uint64_t number)
{
    for (size_t i = ctx_first(ctx, context); i < ctx->n && ctx->v[2 * i] == context; i++)
        if (ctx->v[2 * i + 1] == number) return 1;
    return 0;
}

/* How many times a row states number `number` between two words (ctx: its (context, number) pairs). */
static size_t ctx_count(const u64v *ctx, uint64_t number)
{
    size_t k = 0;
    for (size_t i = 0; i < ctx->n; i++) k += ctx->v[2 * i + 1] == number;
    return k;
}

/* Held-out number `number` between the words of `context`: does the other row state there, instead,
 * a number of its own? Not when it states the held-out row's number there too (a repeated frame),
 * nor when the number it states there is one the held-out row states as often elsewhere: a number
 * moved, or two of the row's numbers trading places in a reworded sentence. A template sibling
 * brings numbers of its own, or states one of the row's numbers more often than the row does ("3
 * books... takes 3" against "3 books... takes 2 ... twice"). */
static int restated(const u64v *a_ctx, const u64v *b_ctx, uint64_t context, uint64_t number)
{
    if (ctx_has(a_ctx, context, number)) return 0;
    for (size_t i = ctx_first(a_ctx, context); i < a_ctx->n && a_ctx->v[2 * i] == context; i++) {
        uint64_t other = a_ctx->v[2 * i + 1];
        if (ctx_has(b_ctx, context, other)) continue;
        size_t in_b = ctx_count(b_ctx, other);
        if (!in_b || ctx_count(a_ctx, other) > in_b) return 1;
    }
    return 0;
}

/* ---- numbers written in digits ----------------------------------------------------------------- */

static int push_number(u64v *out, const char *d, size_t len)
{
    if (!u64v_reserve(out, out->n + 1)) return 0;
    out->v[out->n++] = uni_key(la_hash_bytes((const unsigned char *)d, len), 1);
    return 1;
}

static int is_latin_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* The numbers a row writes in digits, as keys of numbers (uni_key of their digits, as a number word
 * has), found anywhere in the text, inside words too: a language written without spaces glues a
 * number to the words around it ("5个"), which the words then miss. A run of digits followed by
 * thousands groups (a comma or a point, then three digits) is one number: "2,000" and "2.000" are
 * 2000. A whole number of at most nine digits followed by a multiplier word is their product
 * ("2 dozen" is 24, "4 decades" 40).
 * all = 0, the numbers the row states: those numbers, less any glued to a Latin letter, which are
 * names ("3D", "ARM64", "libKF5"), not quantities: a translator may spell them out or add one.
 * all = 1, what the row can match another's numbers with: also the glued ones, each run of digits
 * alone ("2", "000") and the number before a multiplier ("2").
 * Sorted, distinct. Returns 0 when out of memory. */
static int digit_numbers(const char *s, size_t n, int all, u64v *out)
{
    out->n = 0;
    for (size_t i = 0; i < n;) {
        if (!is_digit(s[i])) {
            i++;
            continue;
        }
        char d[24];
        size_t len = 0, start = i;
        int fits = 1;
        for (;;) {
            size_t b = i;
            while (i < n && is_digit(s[i])) i++;
            if (all && !push_number(out, s + b, i - b)) return 0;
            if (len + (i - b) <= sizeof d) memcpy(d + len, s + b, i - b);
            else fits = 0;
            len += i - b;
            /* a thousands group: a separator, three digits, then no digit */
            if (i + 3 < n && (s[i] == ',' || s[i] == '.') && is_digit(s[i + 1]) && is_digit(s[i + 2]) &&
                is_digit(s[i + 3]) && (i + 4 == n || !is_digit(s[i + 4])))
                i++;
            else
                break;
        }
        if (!fits) continue; /* a digit string longer than any number: its runs only */
        int glued = (start > 0 && is_latin_letter(s[start - 1])) || (i < n && is_latin_letter(s[i]));
        if (glued && !all) continue;
        size_t w = i;
        while (w < n && s[w] == ' ') w++;
        size_t e = w;
        while (e < n && s[e] >= 'a' && s[e] <= 'z') e++;
        unsigned f = w > i && len <= 9 ? multiplier(s + w, e - w) : 0;
        if ((!f || all) && !push_number(out, d, len)) return 0;
        if (f) {
            uint64_t v = 0;
            for (size_t k = 0; k < len; k++) v = v * 10 + (uint64_t)(d[k] - '0');
            char m[24];
            int ml = snprintf(m, sizeof m, "%llu", (unsigned long long)(v * f));
            if (!push_number(out, m, (size_t)ml)) return 0;
        }
    }
    sorted_unique(out);
    return 1;
}

static int has_key(const u64v *a, uint64_t key)
{
    size_t lo = 0, hi = a->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a->v[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < a->n && a->v[lo] == key;
}

/* Does row A have the numbers row B states in digits (b_stated): each among A's digits (a_any) or
 * its numbers (a_uni: number words such as "twenty-five" count), one of them allowed missing from
 * four on? */
static int digits_kept(const u64v *a_any, const u64v *a_uni, const u64v *b_stated)
{
    size_t missing = 0;
    for (size_t k = 0; k < b_stated->n; k++)
        missing += !has_key(a_any, b_stated->v[k]) && !has_key(a_uni, b_stated->v[k]);
    return missing <= (b_stated->n >= 4 ? 1u : 0u);
}

/* ---- document frequencies ---------------------------------------------------------------------- */

/* Open addressing over the held-out rows' keys, each slot's counter beside its key (most probes
 * find their key, and then read one cache line). One counting thread adds to those counters. With
 * more, the first counts into the table and each other one into a copy of its own, whose counts
 * are summed into the table afterwards: common words are hit by every row, and a counter written by
 * one thread in a line the others read (or an atomic add on it) made each thread wait on the
 * others. A whole copy, not an array of counters beside a shared table: a probe then reads one
 * cache line, not two. */
typedef struct df_entry {
    uint64_t key;  /* 0: empty */
    uint32_t count;
    uint32_t last; /* 1 + the last row that counted the key in this table (0: none; rows are uint32
                      indices, as in la_pair) */
} df_entry;

typedef struct df_table {
    df_entry *e;
    uint64_t *filter;        /* bit set of the table's keys (their high filter_log2 bits): a row's
                                word pairs are mostly keys no held-out row has, and the filter, a
                                small fraction of the table's size, turns them away in the cache */
    int filter_log2;
    df_entry **own;          /* with two counting threads or more: own[w], the copy counting
                                thread w counts into (mask + 1 slots; own[0] is NULL: that thread
                                counts into e); NULL with one */
    int nthreads;
    size_t mask;
} df_table;

static uint64_t live_key(uint64_t k) { return k ? k : 1; }

/* Where a key's probe starts: keys are la_mix64 outputs already (a word's lowest bit says whether it
 * is a number), so bits above the lowest are as good as a hash of them. */
static size_t df_index(uint64_t k) { return (size_t)(k >> 8); }

/* How many keys ahead a pass over keys prefetches the slot it will probe (count_rows: COUNT_AHEAD). */
enum { PROBE_AHEAD = 16 };

/* The slot a probe of key k starts at. */
static size_t df_home(const df_table *t, uint64_t k) { return df_index(live_key(k)) & t->mask; }

/* The slot of key k in e (the table's slots, or a counting thread's copy of them), or the empty
 * slot that ends its probe when k is not in. One exit: whether a key that passed the filter is in
 * follows no pattern (one in eight is a false pass), and a branch on it was mispredicted. */
static size_t df_slot(const df_table *t, const df_entry *e, uint64_t k)
{
    size_t i = df_home(t, k);
    k = live_key(k);
    while (e[i].key != k && e[i].key) i = (i + 1) & t->mask;
    return i;
}

/* The slot of key k in e, or SIZE_MAX. */
static size_t df_find(const df_table *t, const df_entry *e, uint64_t k)
{
    size_t i = df_slot(t, e, k);
    return e[i].key ? i : SIZE_MAX;
}

/* Bits per key in the filter: about one false pass in eight. */
enum { FILTER_BITS_PER_KEY = 8, FILTER_MIN_LOG2 = 12 };

static size_t filter_bit(const df_table *t, uint64_t k) { return (size_t)(live_key(k) >> (64 - t->filter_log2)); }

static int filter_has(const df_table *t, uint64_t k)
{
    size_t b = filter_bit(t, k);
    return (int)(t->filter[b >> 6] >> (b & 63) & 1);
}


/* df_insert for threads that insert at once: a slot is claimed by compare and swap; the keys end
 * in other slots than one thread would put them in, and a key's slot is all a probe depends on.
 * The table must not fill up (df_build's parallel fill stops at three quarters). */
static int df_insert_shared(df_table *t, uint64_t k)
{
    k = live_key(k);
    for (size_t i = df_index(k) & t->mask;; i = (i + 1) & t->mask) {
        uint64_t have = __atomic_load_n(&t->e[i].key, __ATOMIC_RELAXED);
        if (have == k) return 0;
        if (!have) {
            if (__atomic_compare_exchange_n(&t->e[i].key, &have, k, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return 1;
            if (have == k) return 0;
        }
    }
}

/* Key k into a table with room; returns 1 when it was not there yet. */
static int df_insert(df_table *t, uint64_t k)
{
    k = live_key(k);
    size_t i = df_index(k) & t->mask;
    while (t->e[i].key && t->e[i].key != k) i = (i + 1) & t->mask;
    if (t->e[i].key) return 0;
    t->e[i].key = k;
    return 1;
}

/* The table twice the size, its keys inserted again. */
static la_status df_grow(df_table *t)
{
    size_t cap = 2 * (t->mask + 1);
    df_entry *e = la_zalloc_n(cap, sizeof *e), *old = t->e;
    if (!e) return la_error(LA_ENOMEM, "grades: out of memory for %zu word counters", cap);
    size_t old_cap = t->mask + 1;
    t->e = e;
    t->mask = cap - 1;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key) df_insert(t, old[i].key);
    free(old);
    return LA_OK;
}

/* How many distinct keys set the filter's bits: linear counting, -m ln(1 - set / m) for m bits, which
 * at 8 bits a key or more is within a fraction of a percent. */
static double filter_distinct(const df_table *t)
{
    size_t words = (size_t)1 << (t->filter_log2 - 6), set = 0;
    for (size_t i = 0; i < words; i++) set += (size_t)__builtin_popcountll(t->filter[i]);
    double m = (double)words * 64;
    return set >= (size_t)m ? m : -m * log1p(-(double)set / m);
}

/* ---- the stages -------------------------------------------------------------------------------- */

enum { ROLE_SEEN = 1, ROLE_HELD = 2 };

/* What grading keeps of one linked row: its sorted keys; for a held-out row also its words in
 * order and the weights of its keys, for a seen row the contexts of its numbers. The words, keys,
 * contexts and weights are in the arena of the worker that made them (scratch.sets). */
typedef struct row_set {
    words w;                 /* held-out role: the word sequence */
    u64v uni, bi, ctx;
    u64v dig_stated, dig_any; /* with the digits rule (digits_cosine): the numbers it writes in digits,
                                 as digit_numbers gives them (all = 0 and 1) */
    float *wu_shared, *wu_alone, *wb_shared, *wb_alone; /* held-out role: weights per key */
    size_t uni_words, uni_nums;                         /* held-out role: distinct words, numbers */
    uint32_t *sib;           /* held-out role: per word, how many of its linked rows contain it */
    size_t nsib;             /* held-out role: its content links */
} row_set;

typedef struct scratch {
    words w;
    u64v keys;               /* counting: the rows' keys that pass the filter, gathered to probe */
    uint32_t *rows;          /* counting: per gathered key, 1 + its row's index */
    size_t rowcap;
    la_arena sets;           /* the vectors of the sets and weights this worker built, at their
                                sizes and freed together: no allocation each, and their pages do
                                not depend on what the allocator was left holding by the stages
                                before (build_sets took 15 to 32 ms at 50k x 5k, 2.5k to 7.6k page
                                faults, by what had been freed before it) */
    char pad[64];            /* the next thread's scratch starts a cache line further: no line is
                                written by two threads */
} scratch;

typedef struct grade_ctx {
    const la_table *t;
    const la_row *r;
    la_grade_params p;
    la_pairs *pairs;
    df_table df;
    uint64_t **filter_own;   /* df_build with two threads or more: filter_own[w], the filter thread
                                w > 0 sets its bits in (filter_sets) */
    scratch *sc;
    unsigned char *role;     /* per table row */
    uint32_t *slot;          /* per table row: index into sets, or UINT32_MAX */
    uint32_t *linked;        /* the linked rows, by index */
    size_t *held_first;      /* per slot: first entry of held_links for a held-out row (nlinked + 1) */
    uint32_t *held_links;    /* content links grouped by held-out row, as indices into pairs */
    size_t nlinked;
    row_set *sets;
    _Atomic size_t rows_counted;
    _Atomic size_t df_used;  /* parallel df_build: the keys inserted, as each thread reports them */
    _Atomic int df_full;     /* parallel df_build: the table passed three quarters full */
    _Atomic size_t template_numbers;
    _Atomic size_t slot_upgrades;
    _Atomic size_t digits_related;
} grade_ctx;

static void words_free(words *w)
{
    free(w->h.v);
    free(w->num);
}

/* What a row's set holds outside the workers' arenas. */
static void row_set_free(row_set *x)
{
    free(x->dig_stated.v);
    free(x->dig_any.v);
    free(x->sib);
}

/* n elements of `size` bytes from a worker's arena, or NULL. */
static void *take(la_arena *a, size_t n, size_t size)
{
    void *p = NULL;
    return n <= SIZE_MAX / 8 / size && la_arena_take(a, n * size, 8, &p) == LA_OK ? p : NULL;
}

static la_status build_sets(void *vctx, int worker, size_t begin, size_t end)
{
    grade_ctx *c = vctx;
    scratch *s = &c->sc[worker];
    for (size_t k = begin; k < end; k++) {
        uint32_t i = c->linked[k];
        const la_row *r = &c->r[i];
        row_set *x = &c->sets[k];
        if (!r->norm || !r->norm_len) continue;
        int held = c->role[i] & ROLE_HELD;
        if (!split_words(r->norm, r->norm_len, &s->w))
            return la_error(LA_ENOMEM, "grades: out of memory reading the words of row %u", i);
        /* the row's vectors at their sizes in the worker's arena: its words (a held-out row's are
         * kept), then room for row_keys's keys */
        size_t n = s->w.h.n;
        const words *w = &s->w;
        if (held) {
            x->w.h.v = take(&s->sets, n, sizeof *x->w.h.v);
            x->w.num = take(&s->sets, n, 1);
            if (!x->w.h.v || !x->w.num) return la_error(LA_ENOMEM, "grades: out of memory reading the words of row %u", i);
            memcpy(x->w.h.v, s->w.h.v, n * sizeof *x->w.h.v);
            memcpy(x->w.num, s->w.num, n);
            x->w.h.n = x->w.h.cap = x->w.numcap = n;
            w = &x->w;
        }
        size_t nctx = 2 * ctx_numbers(w) + 2;
        x->uni = (u64v){take(&s->sets, n + 1, sizeof *x->uni.v), 0, n + 1};
        x->bi = (u64v){take(&s->sets, n + 1, sizeof *x->bi.v), 0, n + 1};
        x->ctx = (u64v){take(&s->sets, nctx, sizeof *x->ctx.v), 0, nctx};
        if (!x->uni.v || !x->bi.v || !x->ctx.v) return la_error(LA_ENOMEM, "grades: out of memory reading the words of row %u", i);
        row_keys(w, &x->uni, &x->bi, &x->ctx);
        /* the digits rule reads items only (grade_one) */
        if (c->p.digits_cosine > 0 && !c->p.semantic_lexical && x->uni.n <= (size_t)c->p.numbers_max_words &&
            (!digit_numbers(r->norm, r->norm_len, 0, &x->dig_stated) || !digit_numbers(r->norm, r->norm_len, 1, &x->dig_any)))
            return la_error(LA_ENOMEM, "grades: out of memory reading the numbers of row %u", i);
        for (size_t q = 0; q < x->uni.n; q++) x->uni_nums += x->uni.v[q] & 1u;
        x->uni_words = x->uni.n - x->uni_nums;
    }
    return LA_OK;
}

/* Keys count_rows gathers from its rows before it probes them: probes are prefetched COUNT_AHEAD
 * keys ahead across the rows' boundaries, so only the last keys of a batch go unprefetched, not the
 * last of every row. With the batch, twice PROBE_AHEAD ahead did better (grade_s 310 -> 299 ms at
 * 50k x 5k, one thread; four times, no better). */
enum { COUNT_BATCH = 4096, COUNT_AHEAD = 2 * PROBE_AHEAD };

/* Probe the table for the gathered keys s->keys[0 .. n) of rows s->rows[0 .. n) (1 + the row index)
 * and count each key a row has once. */
static void count_keys(const df_table *df, df_entry *e, const scratch *s, size_t n)
{
    const uint64_t *key = s->keys.v;
    const uint32_t *rows = s->rows;
    for (size_t k = 0; k < n; k++) {
        /* the probes do not depend on each other, and most of them go to a slot of a table larger
         * than the cache: start the cache miss of a probe COUNT_AHEAD keys ahead */
        if (k + COUNT_AHEAD < n) LA_PREFETCH(&e[df_home(df, key[k + COUNT_AHEAD])]);
        /* without a branch on whether the key is in, or on whether this row counted it already
         * (a word twice in a row): a key not in leaves its empty slot as it was */
        df_entry *x = &e[df_slot(df, e, key[k])];
        uint32_t row = rows[k], in = x->key != 0;
        x->count += in & (x->last != row);
        x->last = in ? row : x->last;
    }
}

/* The keys of words k .. n - 1 of w that pass the filter into key[nk ..]: each word, then the pair
 * it ends; last_in: the filter passed word k - 1. Kept by adding the filter's answer to the count,
 * without a branch on it. Returns the new nk. */
static size_t keys_from(const df_table *df, const words *w, size_t k, int last_in, uint64_t *key, size_t nk)
{
    for (; k < w->h.n; k++) {
        uint64_t u = uni_key(w->h.v[k], w->num[k]);
        uint64_t b = bi_key(w->h.v[k - 1], w->h.v[k]);
        int in = filter_has(df, u);
        key[nk] = u;
        nk += (size_t)in;
        key[nk] = b;
        nk += (size_t)(in & last_in & filter_has(df, b));
        last_in = in;
    }
    return nk;
}

/* Keys keys_avx512 may write past the last one it keeps. */
enum { KEYS_SLACK = 16 };

#include "mix_avx512.h"
#ifdef LA_MIX_AVX512
#define GRADE_AVX512 1

static int have_avx512, portable_keys; /* portable_keys: la_grade_portable_keys */

static void cpu_init(void)
{
    __builtin_cpu_init();
    have_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

/* filter_has of 8 keys: their bits' words gathered. */
__attribute__((target("avx512f,avx512dq"))) static inline __mmask8 filter_x8(const df_table *df, __m512i k)
{
    const __m512i one = _mm512_set1_epi64(1);
    k = _mm512_mask_mov_epi64(k, _mm512_cmpeq_epi64_mask(k, _mm512_setzero_si512()), one); /* live_key */
    __m512i bit = _mm512_srl_epi64(k, _mm_cvtsi32_si128(64 - df->filter_log2));
    __m512i word = _mm512_i64gather_epi64(_mm512_srli_epi64(bit, 6), (const void *)df->filter, 8);
    __m512i b = _mm512_srlv_epi64(word, _mm512_and_si512(bit, _mm512_set1_epi64(63)));
    return _mm512_test_epi64_mask(b, one);
}

/* keys_from for words *k .. in blocks of 8 (k >= 1): the same keys (uni_key and bi_key through
 * la_mix64_x8, the filter through filter_x8), each block's passing words and then its passing pairs
 * (the order of a row's keys does not matter to the count). Whole vectors are stored, compressed
 * in registers: up to 8 keys past the last one kept are written (KEYS_SLACK). Leaves *k and
 * *last_in at the first word it did not take, for keys_from. */
__attribute__((target("avx512f,avx512dq"))) static size_t keys_avx512(const df_table *df, const words *w, size_t *k,
                                                                    int *last_in, uint64_t *key, size_t nk)
{
    const __m512i k_uni = _mm512_set1_epi64((long long)K_UNI), k_bi = _mm512_set1_epi64((long long)K_BI);
    const __m512i one = _mm512_set1_epi64(1), not_one = _mm512_set1_epi64(~1ll);
    size_t i = *k, n = w->h.n;
    unsigned prev = (unsigned)*last_in;
    for (; i + 8 <= n; i += 8) {
        __m512i h = _mm512_loadu_si512((const void *)(w->h.v + i));
        __m512i hp = _mm512_loadu_si512((const void *)(w->h.v + i - 1));
        __m512i num = _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(w->num + i)));
        __m512i u = _mm512_and_si512(la_mix64_x8(_mm512_xor_si512(h, k_uni)), not_one);
        u = _mm512_mask_or_epi64(u, _mm512_test_epi64_mask(num, num), u, one);
        __m512i b = la_mix64_x8(_mm512_xor_si512(_mm512_xor_si512(_mm512_rol_epi64(hp, 17), h), k_bi));
        unsigned in = filter_x8(df, u);
        unsigned keep_b = in & (in << 1 | prev) & filter_x8(df, b);
        _mm512_storeu_si512((void *)(key + nk), _mm512_maskz_compress_epi64((__mmask8)in, u));
        nk += (size_t)__builtin_popcount(in);
        _mm512_storeu_si512((void *)(key + nk), _mm512_maskz_compress_epi64((__mmask8)keep_b, b));
        nk += (size_t)__builtin_popcount(keep_b);
        prev = in >> 7 & 1;
    }
    *k = i;
    *last_in = (int)prev;
    return nk;
}
#endif

int la_grade_portable_keys(int portable)
{
#ifdef GRADE_AVX512
    pthread_once(&cpu_once, cpu_init);
    portable_keys = portable;
    return have_avx512;
#else
    (void)portable;
    return 0;
#endif
}

/* Count one document for every key of the held-out table that row i contains. The keys that pass
 * the filter are gathered across rows and probed a batch at a time (count_keys); each counter keeps
 * the last row that counted it, so a key met twice in one row counts once, without sorting. A word
 * pair can be a held-out key only when both its words are held-out words: a word the filter turns
 * away spares its pairs the probe. */
static la_status count_rows(void *vctx, int worker, size_t begin, size_t end)
{
#ifdef GRADE_AVX512
    pthread_once(&cpu_once, cpu_init);
#endif
    grade_ctx *c = vctx;
    scratch *s = &c->sc[worker];
    const df_table *df = &c->df;
    df_entry *e = df->own && df->own[worker] ? df->own[worker] : df->e;
    size_t nk = 0;
    for (size_t i = begin; i < end; i++) {
        const la_row *r = &c->r[i];
        if (!r->norm || !r->norm_len) continue;
        if (!split_words(r->norm, r->norm_len, &s->w)) return la_error(LA_ENOMEM, "grades: out of memory reading row %zu", i);
        const words *w = &s->w;
        size_t n = w->h.n;
        if (nk + 2 * n > COUNT_BATCH && nk) {
            count_keys(df, e, s, nk);
            nk = 0;
        }
        /* room for nk + 2n keys (at most COUNT_BATCH, or 2n for a row longer than a batch), and for
         * KEYS_SLACK more that keys_avx512's whole-vector stores write past them */
        size_t need = (COUNT_BATCH > 2 * n ? COUNT_BATCH : 2 * n) + KEYS_SLACK;
        if (need > s->rowcap) {
            uint32_t *rows = la_malloc_n(need, sizeof *rows);
            if (!rows) return la_error(LA_ENOMEM, "grades: out of memory reading row %zu", i);
            free(s->rows);
            s->rows = rows;
            s->rowcap = need;
        }
        if (!u64v_reserve(&s->keys, need)) return la_error(LA_ENOMEM, "grades: out of memory reading row %zu", i);
        /* the keys that pass the filter: each word, then the pair it ends (a one-word row has the
         * pair of its word and 0, as row_keys gives it), 8 words at a time where the CPU has
         * AVX-512 */
        uint64_t *key = s->keys.v;
        uint32_t *rows = s->rows, row = (uint32_t)i + 1;
        size_t first = nk;
        if (n == 1) {
            uint64_t u = uni_key(w->h.v[0], w->num[0]), b = bi_key(w->h.v[0], 0);
            int in = filter_has(df, u);
            key[nk] = u;
            nk += (size_t)in;
            key[nk] = b;
            nk += (size_t)(in & filter_has(df, b));
        } else if (n > 1) {
            uint64_t u = uni_key(w->h.v[0], w->num[0]);
            int last_in = filter_has(df, u);
            key[nk] = u;
            nk += (size_t)last_in;
            size_t k = 1;
#ifdef GRADE_AVX512
            if (have_avx512 && !portable_keys) nk = keys_avx512(df, w, &k, &last_in, key, nk);
#endif
            nk = keys_from(df, w, k, last_in, key, nk);
        }
        for (size_t k = first; k < nk; k++) rows[k] = row;
        atomic_fetch_add_explicit(&c->rows_counted, 1, memory_order_relaxed);
    }
    if (nk) count_keys(df, e, s, nk);
    return LA_OK;
}

/* The counting threads' copies of the table (still without counts), in COPY_PIECES pieces a copy,
 * one piece an item: every thread copies (a copy an item left one thread idle while the other made
 * it, at two threads). */
enum { COPY_PIECES = 16 };

static la_status copy_own(void *vctx, int worker, size_t begin, size_t end)
{
    grade_ctx *c = vctx;
    (void)worker;
    size_t slots = c->df.mask + 1;
    for (size_t item = begin; item < end; item++) {
        size_t w = 1 + item / COPY_PIECES, piece = item % COPY_PIECES;
        size_t from = piece * slots / COPY_PIECES, to = (piece + 1) * slots / COPY_PIECES;
        if (to <= from) continue;
        la_populate(c->df.own[w] + from, (to - from) * sizeof *c->df.e);
        memcpy(c->df.own[w] + from, c->df.e + from, (to - from) * sizeof *c->df.e);
    }
    return LA_OK;
}

/* The copies' counts of slots [begin, end) into the table's counters. */
static la_status sum_counts(void *vctx, int worker, size_t begin, size_t end)
{
    grade_ctx *c = vctx;
    (void)worker;
    for (int w = 1; w < c->df.nthreads; w++) {
        const df_entry *from = c->df.own[w];
        for (size_t i = begin; i < end; i++) c->df.e[i].count += from[i].count;
    }
    return LA_OK;
}

/* Weight of a key of the held-out row that `others` rows besides the two linked ones contain. */
static float weight_of(const grade_ctx *c, double others)
{
    if (others < 0) others = 0;
    return (float)(1.0 / (1.0 + others / c->p.rarity_k));
}

static int fill_weights(const grade_ctx *c, la_arena *a, const u64v *keys, float **shared, float **alone)
{
    *shared = take(a, keys->n, sizeof **shared);
    *alone = take(a, keys->n, sizeof **alone);
    if (!*shared || !*alone) return 0;
    for (size_t k = 0; k < keys->n; k++) {
        if (k + PROBE_AHEAD < keys->n) LA_PREFETCH(&c->df.e[df_home(&c->df, keys->v[k + PROBE_AHEAD])]);
        size_t at = df_find(&c->df, c->df.e, keys->v[k]);
        double df = at == SIZE_MAX ? 1.0 : (double)c->df.e[at].count;
        (*shared)[k] = weight_of(c, df - 2.0);
        (*alone)[k] = weight_of(c, df - 1.0);
    }
    return 1;
}

static la_status weigh_sets(void *vctx, int worker, size_t begin, size_t end)
{
    grade_ctx *c = vctx;
    for (size_t k = begin; k < end; k++) {
        row_set *x = &c->sets[k];
        if (!(c->role[c->linked[k]] & ROLE_HELD)) continue;
        la_arena *a = &c->sc[worker].sets;
        if (!fill_weights(c, a, &x->uni, &x->wu_shared, &x->wu_alone) || !fill_weights(c, a, &x->bi, &x->wb_shared, &x->wb_alone))
            return la_error(LA_ENOMEM, "grades: out of memory weighing row %u", c->linked[k]);
    }
    return LA_OK;
}

/* ---- slot evidence ----------------------------------------------------------------------------- */

/* For each word of held-out row B, how many of B's linked rows contain it. Run per held-out row,
 * so counts need no atomics and do not depend on the order of the links. */
static la_status count_siblings(void *vctx, int worker, size_t begin, size_t end)
{
    grade_ctx *c = vctx;
    (void)worker;
    for (size_t k = begin; k < end; k++) {
        row_set *B = &c->sets[k];
        size_t first = c->held_first[k], last = c->held_first[k + 1];
        if (last - first <= (size_t)c->p.slot_min_siblings || !B->uni.n) continue;
        B->sib = la_calloc_n(B->uni.n, sizeof *B->sib);
        if (!B->sib) return la_error(LA_ENOMEM, "grades: out of memory counting the links of row %u", c->linked[k]);
        B->nsib = last - first;
        for (size_t e = first; e < last; e++) {
            const row_set *A = &c->sets[c->slot[c->pairs->v[c->held_links[e]].a]];
            size_t j = 0;
            for (size_t q = 0; q < B->uni.n; q++) {
                while (j < A->uni.n && A->uni.v[j] < B->uni.v[q]) j++;
                if (j < A->uni.n && A->uni.v[j] == B->uni.v[q]) B->sib[q]++;
            }
        }
    }
    return LA_OK;
}

/* How much more A looks like an edited copy of B than like one more of B's linked siblings: the
 * log-likelihood ratio, over B's words that fewer than half of B's other linked rows contain (its
 * slots, and what B does not share with its siblings), of "A is B with each word kept with chance
 * slot_keep" against "A is a sibling, which has each word as often as the others do", less the log
 * of the number of siblings (any one of them could have come this close by chance). NaN when B has
 * too few links to tell a frame from its slots. */
static double slot_evidence(const grade_ctx *c, const row_set *A, const row_set *B)
{
    if (!B->sib) return NAN;
    double n = (double)(B->nsib - 1), keep = c->p.slot_keep, llr = 0;
    size_t j = 0;
    for (size_t q = 0; q < B->uni.n; q++) {
        while (j < A->uni.n && A->uni.v[j] < B->uni.v[q]) j++;
        int has = j < A->uni.n && A->uni.v[j] == B->uni.v[q];
        double f = ((double)B->sib[q] - has + 1.0) / (n + 2.0);
        if (f >= 0.5) continue;
        llr += has ? log(keep / f) : log((1.0 - keep) / (1.0 - f));
    }
    return llr - log(n);
}

/* Weighted share of b's keys that a also has (both sorted): sum of shared weights over all. Also
 * counts, through *nshared_nums and *nshared_words, the shared keys by their number bit. */
static double weighted_share(const u64v *b, const float *ws, const float *wa, const u64v *a, size_t *nshared_nums,
                             size_t *nshared_words)
{
    double in = 0, all = 0;
    size_t j = 0;
    for (size_t k = 0; k < b->n; k++) {
        uint64_t key = b->v[k];
        while (j < a->n && a->v[j] < key) j++;
        int sh = j < a->n && a->v[j] == key;
        all += sh ? ws[k] : wa[k];
        if (sh) {
            in += ws[k];
            if (nshared_nums) {
                if (key & 1u) (*nshared_nums)++;
                else (*nshared_words)++;
            }
        }
    }
    return all > 0 ? in / all : 0;
}

/* P(X <= x) for X ~ Binomial(n, p). */
static double binom_cdf(unsigned x, unsigned n, double p)
{
    double term = pow(1.0 - p, (double)n), sum = 0;
    for (unsigned i = 0; i <= x && i <= n; i++) {
        sum += term;
        term *= (double)(n - i) / (double)(i + 1) * p / (1.0 - p);
    }
    return sum > 1.0 ? 1.0 : sum;
}

static uint8_t cap255(size_t v) { return (uint8_t)(v > 255 ? 255 : v); }

/* The features and grade of one link. */
static void grade_one(grade_ctx *c, la_pair *q)
{
    const row_set *A = &c->sets[c->slot[q->a]], *B = &c->sets[c->slot[q->b]];
    int grade = LA_GRADE_RELATED, templ = 0, digits_held = 0;
    if (A->uni.n && B->uni.n) {
        size_t ns = 0, kept = 0;
        double wc = weighted_share(&B->bi, B->wb_shared, B->wb_alone, &A->bi, NULL, NULL);
        double ww = weighted_share(&B->uni, B->wu_shared, B->wu_alone, &A->uni, &ns, &kept);
        size_t nb = B->uni_nums, nwords = B->uni_words;
        /* held-out numbers that a states differently between the same two words */
        size_t changed = 0;
        const words *w = &B->w;
        for (size_t i = 1; i + 1 < w->h.n; i++)
            if (w->num[i])
                changed += (size_t)restated(&A->ctx, &B->ctx, ctx_key(w->h.v[i - 1], w->h.v[i + 1]), uni_key(w->h.v[i], 1));
        q->wcontainment = (float)wc;
        q->wwords = (float)ww;
        q->nums_held = cap255(nb);
        q->nums_shared = cap255(ns);
        q->nums_changed = cap255(changed);
        double kept_share = nwords ? (double)kept / (double)nwords : 1.0;
        double ps = kept_share < 0.5 ? 0.5 : kept_share > 0.98 ? 0.98 : kept_share;
        /* numbers are slots of an item (a question, a problem, a prompt); in a longer document a
         * changed number is an edit, such as a revision's date or section number */
        int item = B->uni.n <= (size_t)c->p.numbers_max_words;
        if (item && nb >= 2 && 2 * ns < nb && binom_cdf((unsigned)ns, (unsigned)nb, ps) < c->p.numbers_alpha) templ = 1;
        if (item && changed >= 1 && (double)changed >= c->p.changed_share * (double)nb) templ = 1;
        /* the words clauses catch heavily edited copies whose word pairs broke (words swapped or
         * reordered); they need every number */
        int words_kept = ns == nb && (ww >= c->p.near_words_all || (ww >= c->p.near_words && wc >= c->p.near_words_pairs));
        if (wc >= c->p.near_share || words_kept) grade = LA_GRADE_NEAR;
        if (wc >= c->p.copy_share) grade = LA_GRADE_COPY;
    }
    if ((q->kinds & LA_KIND_SEMANTIC) && !c->p.semantic_lexical && !isnan(q->cosine)) {
        /* a rewording or translation keeps the item's numbers: below numbers_cosine it must keep all
         * of them (one may be missing from four on) to count as the item */
        size_t nb = q->nums_held, ns = q->nums_shared, slack = nb >= 4 ? 1 : 0;
        int kept = nb == 0 || ns + slack >= nb || q->cosine >= c->p.numbers_cosine;
        /* one or two numbers say little: then the cosine has to carry more */
        if (nb && nb <= 2 && q->cosine < c->p.few_numbers_cosine && q->cosine < c->p.numbers_cosine) kept = 0;
        /* from numbers_cosine up to digits_cosine (a model whose links all score above
         * numbers_cosine): the two rows state the same numbers in digits, which a translation
         * keeps and to which a template sibling brings numbers of its own. Items only, as for
         * rule 2: a long row's numbers are its dates, versions and sections, and a link to one of
         * its windows shares only that window's. */
        int items = B->uni.n <= (size_t)c->p.numbers_max_words && A->uni.n <= (size_t)c->p.numbers_max_words;
        if (kept && items && q->cosine >= c->p.numbers_cosine && q->cosine < c->p.digits_cosine &&
            (!digits_kept(&A->dig_any, &A->uni, &B->dig_stated) || !digits_kept(&B->dig_any, &B->uni, &A->dig_stated))) {
            kept = 0;
            digits_held = 1;
        }
        int cg = !kept ? LA_GRADE_RELATED : q->cosine >= c->p.copy_cosine ? LA_GRADE_COPY : LA_GRADE_NEAR;
        if (cg > grade) grade = cg;
    }
    if (templ && grade > LA_GRADE_RELATED) {
        grade = LA_GRADE_RELATED;
        atomic_fetch_add_explicit(&c->template_numbers, 1, memory_order_relaxed);
    }
    /* a template instance whose slots A keeps is an edited copy, whatever its numbers say */
    double se = slot_evidence(c, A, B);
    q->slot_evidence = (float)se;
    if (!isnan(se) && se >= c->p.slot_evidence && grade < LA_GRADE_NEAR) {
        grade = LA_GRADE_NEAR;
        atomic_fetch_add_explicit(&c->slot_upgrades, 1, memory_order_relaxed);
    }
    if (q->kinds & LA_KIND_EXACT) grade = LA_GRADE_COPY;
    q->grade = (uint8_t)grade;
    /* counted where it decided the grade: the wording, the numbers and the slots left it related */
    if (digits_held && !templ && grade == LA_GRADE_RELATED)
        atomic_fetch_add_explicit(&c->digits_related, 1, memory_order_relaxed);
}

static la_status grade_links(void *vctx, int worker, size_t begin, size_t end)
{
    grade_ctx *c = vctx;
    (void)worker;
    for (size_t k = begin; k < end; k++)
        if (c->pairs->v[k].kinds & CONTENT_KINDS) grade_one(c, &c->pairs->v[k]);
    return LA_OK;
}

static la_status check_params(const la_grade_params *p)
{
    if (!(p->rarity_k > 0)) return la_error(LA_EINVAL, "grades: rarity k %g: expected a positive number", p->rarity_k);
    if (!(p->near_share >= 0 && p->near_share <= p->copy_share && p->copy_share <= 1.0))
        return la_error(LA_EINVAL, "grades: expected 0 <= near share (%g) <= copy share (%g) <= 1", p->near_share, p->copy_share);
    if (!(p->slot_keep > 0 && p->slot_keep < 1) || p->slot_min_siblings < 1)
        return la_error(LA_EINVAL, "grades: slot keep %g: expected a value in (0, 1), and at least one sibling", p->slot_keep);
    if (!(p->numbers_alpha >= 0 && p->numbers_alpha < 1))
        return la_error(LA_EINVAL, "grades: numbers alpha %g: expected a value in [0, 1)", p->numbers_alpha);
    return LA_OK;
}

/* The held-out rows' keys into the filter (df_build), on every counting thread. */
static la_status filter_sets(void *vctx, int worker, size_t begin, size_t end)
{
    grade_ctx *c = vctx;
    /* each thread sets the bits in a filter of its own, ORed into the table's afterwards: threads
     * setting bits of one filter (atomically) took each other's cache lines on every other key */
    uint64_t *filter = la_bits_of(c->df.filter, c->filter_own, worker);
    for (size_t k = begin; k < end; k++) {
        if (!(c->role[c->linked[k]] & ROLE_HELD)) continue;
        const u64v *kind[2] = {&c->sets[k].uni, &c->sets[k].bi};
        for (int j = 0; j < 2; j++)
            for (size_t q = 0; q < kind[j]->n; q++) la_bit_set(filter, filter_bit(&c->df, kind[j]->v[q]));
    }
    return LA_OK;
}

/* Slots [begin, end) of the table faulted in, on the worker threads (df_build). */
static la_status populate_slots(void *vctx, int worker, size_t begin, size_t end)
{
    grade_ctx *c = vctx;
    (void)worker;
    la_populate(c->df.e + begin, (end - begin) * sizeof *c->df.e);
    return LA_OK;
}

/* Inserts a thread makes before it adds them to df_used and looks at the bound. */
enum { INSERT_REPORT = 1024 };

/* The held-out rows' keys into the table, on the worker threads (df_build), until it is three
 * quarters full (then df_full, and df_build fills it again on one thread, growing it). */
static la_status insert_sets(void *vctx, int worker, size_t begin, size_t end)
{
    grade_ctx *c = vctx;
    df_table *t = &c->df;
    (void)worker;
    size_t mine = 0, bound = 3 * (t->mask + 1) / 4;
    for (size_t k = begin; k < end && !atomic_load_explicit(&c->df_full, memory_order_relaxed); k++) {
        if (!(c->role[c->linked[k]] & ROLE_HELD)) continue;
        const u64v *kind[2] = {&c->sets[k].uni, &c->sets[k].bi};
        for (int j = 0; j < 2; j++)
            for (size_t q = 0; q < kind[j]->n; q++) {
                /* a set's keys go to slots far apart in a table larger than the cache */
                if (q + PROBE_AHEAD < kind[j]->n) LA_PREFETCH_WRITE(&t->e[df_home(t, kind[j]->v[q + PROBE_AHEAD])]);
                mine += (size_t)df_insert_shared(t, kind[j]->v[q]);
                if (mine == INSERT_REPORT) {
                    if (atomic_fetch_add_explicit(&c->df_used, mine, memory_order_relaxed) + mine > bound) {
                        atomic_store_explicit(&c->df_full, 1, memory_order_relaxed);
                        return LA_OK;
                    }
                    mine = 0;
                }
            }
    }
    atomic_fetch_add_explicit(&c->df_used, mine, memory_order_relaxed);
    return LA_OK;
}

/* The table of the held-out keys (the linked held-out rows' words and word pairs), at most half full:
 * each seen row probes it for every word it has, and a table of about twice the distinct keys stays
 * in the cache where one sized by the keys with their repeats (2.4 times as many at 50k x 5k) does
 * not. The filter's bits, set first, say how many distinct keys there are; should they say too few,
 * the table doubles when it is three quarters full. With two threads or more and a table of at
 * least PARALLEL_FILL_SLOTS slots, the filter, the table's pages and its keys are filled on every
 * thread (a key's slot then depends on which thread came first, and nothing depends on a key's
 * slot); should the table reach three quarters, it is emptied and filled on one thread as above.
 * A thread adds to df_used every INSERT_REPORT keys, so the threads stop with fewer than
 * (threads + 1) x INSERT_REPORT keys past three quarters: the last quarter must hold more. */
enum { PARALLEL_FILL_SLOTS = 1 << 18 };

static la_status df_build(grade_ctx *c, size_t nkeys, int nt)
{
    df_table *t = &c->df;
    t->filter_log2 = FILTER_MIN_LOG2;
    while (t->filter_log2 < 40 && ((size_t)1 << t->filter_log2) < nkeys * FILTER_BITS_PER_KEY) t->filter_log2++;
    size_t words = (size_t)1 << (t->filter_log2 - 6);
    if (!(t->filter = la_zalloc_n(words, sizeof *t->filter)))
        return la_error(LA_ENOMEM, "grades: out of memory for the filter of %zu words", nkeys);
    int failed;
    c->filter_own = la_bits_copies(nt, words, &failed);
    if (failed) return la_error(LA_ENOMEM, "grades: out of memory for the filter of %zu words", nkeys);
    la_status st = la_parallel_for(nt, c->nlinked, 64, filter_sets, c);
    la_bits_merge(t->filter, c->filter_own, nt, words, st == LA_OK);
    c->filter_own = NULL;
    LA_TRY(st);
    double distinct = filter_distinct(t);
    size_t cap = 64;
    while ((double)cap < 2 * distinct) {
        if (cap > SIZE_MAX / 4 / sizeof(df_entry)) return la_error(LA_ENOMEM, "grades: too many words to count");
        cap *= 2;
    }
    t->mask = cap - 1;
    int parallel = nt > 1 && cap >= PARALLEL_FILL_SLOTS && cap / 4 > (size_t)(nt + 1) * INSERT_REPORT;
    if (!(t->e = parallel ? la_calloc_n(cap, sizeof *t->e) : la_zalloc_n(cap, sizeof *t->e)))
        return la_error(LA_ENOMEM, "grades: out of memory for %zu word counters", cap);
    if (parallel) {
        LA_TRY(la_parallel_for(nt, cap, 1u << 14, populate_slots, c));
        LA_TRY(la_parallel_for(nt, c->nlinked, 16, insert_sets, c));
        if (!atomic_load(&c->df_full)) return LA_OK;
        memset(t->e, 0, cap * sizeof *t->e);
    }
    size_t used = 0;
    for (size_t k = 0; k < c->nlinked; k++) {
        if (!(c->role[c->linked[k]] & ROLE_HELD)) continue;
        const u64v *kind[2] = {&c->sets[k].uni, &c->sets[k].bi};
        for (int j = 0; j < 2; j++)
            for (size_t q = 0; q < kind[j]->n; q++) {
                if (q + PROBE_AHEAD < kind[j]->n) LA_PREFETCH_WRITE(&t->e[df_home(t, kind[j]->v[q + PROBE_AHEAD])]);
                if (4 * (used + 1) > 3 * (t->mask + 1)) LA_TRY(df_grow(t));
                used += (size_t)df_insert(t, kind[j]->v[q]);
            }
    }
    return LA_OK;
}

/* Roles and slots of the linked rows, and the table of the held-out rows' keys. */
static la_status prepare(grade_ctx *c, int nt)
{
    size_t n = la_table_nrows(c->t);
    c->role = la_calloc_n(n, 1);
    c->slot = la_malloc_n(n, sizeof *c->slot);
    c->sc = calloc((size_t)nt, sizeof *c->sc);
    if (!c->role || !c->slot || !c->sc) return la_error(LA_ENOMEM, "grades: out of memory for %zu rows", n);
    for (size_t k = 0; k < c->pairs->n; k++) {
        const la_pair *q = &c->pairs->v[k];
        if (!(q->kinds & CONTENT_KINDS)) continue;
        c->role[q->a] |= ROLE_SEEN;
        c->role[q->b] |= ROLE_HELD;
    }
    for (size_t i = 0; i < n; i++) c->nlinked += c->role[i] != 0;
    c->linked = la_malloc_n(c->nlinked, sizeof *c->linked);
    c->sets = la_calloc_n(c->nlinked, sizeof *c->sets);
    if (!c->linked || !c->sets) return la_error(LA_ENOMEM, "grades: out of memory for %zu linked rows", c->nlinked);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        c->slot[i] = c->role[i] ? (uint32_t)m : UINT32_MAX;
        if (c->role[i]) c->linked[m++] = (uint32_t)i;
    }
    LA_TRY(la_parallel_for(nt, c->nlinked, 16, build_sets, c));
    /* the content links grouped by held-out row, in pair order */
    c->held_first = la_calloc_n(c->nlinked + 1, sizeof *c->held_first);
    c->held_links = la_malloc_n(c->pairs->n, sizeof *c->held_links);
    if (!c->held_first || !c->held_links) return la_error(LA_ENOMEM, "grades: out of memory for %zu links", c->pairs->n);
    for (size_t k = 0; k < c->pairs->n; k++)
        if (c->pairs->v[k].kinds & CONTENT_KINDS) c->held_first[c->slot[c->pairs->v[k].b]]++;
    for (size_t k = 1; k <= c->nlinked; k++) c->held_first[k] += c->held_first[k - 1];
    /* each row's count became the end of its range; filling from the back leaves its start there */
    for (size_t k = c->pairs->n; k-- > 0;)
        if (c->pairs->v[k].kinds & CONTENT_KINDS) c->held_links[--c->held_first[c->slot[c->pairs->v[k].b]]] = (uint32_t)k;
    size_t nkeys = 0;
    for (size_t k = 0; k < c->nlinked; k++)
        if (c->role[c->linked[k]] & ROLE_HELD) nkeys += c->sets[k].uni.n + c->sets[k].bi.n;
    c->df.nthreads = nt;
    LA_TRY(df_build(c, nkeys, nt));
    if (nt > 1) {
        size_t slots = c->df.mask + 1;
        if (!(c->df.own = la_calloc_n((size_t)nt, sizeof *c->df.own)))
            return la_error(LA_ENOMEM, "grades: out of memory for %zu word counters", slots);
        for (int w = 1; w < nt; w++)
            if (!(c->df.own[w] = la_malloc_n(slots, sizeof **c->df.own))) /* filled by copy_own */
                return la_error(LA_ENOMEM, "grades: out of memory for %zu word counters", slots);
    }
    return LA_OK;
}

la_status la_grade_pairs(const la_table *t, const la_grade_params *p, la_pairs *pairs, la_grade_stats *stats)
{
    la_grade_params def;
    if (!p) {
        la_grade_params_default(&def);
        p = &def;
    }
    LA_TRY(check_params(p));
    double t0 = la_now();
    grade_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.r = la_table_rows_const(t);
    c.p = *p;
    c.pairs = pairs;
    int nt = la_parallel_threads(p->threads);
    la_grade_stats st;
    memset(&st, 0, sizeof st);

    /* 1. the linked rows' keys; 2. document frequencies over every row; 3. weights and sibling
     * counts; 4. the links */
    la_status s = prepare(&c, nt);
    if (s == LA_OK && c.nlinked && c.df.own) s = la_parallel_for(nt, (size_t)(nt - 1) * COPY_PIECES, 1, copy_own, &c);
    if (s == LA_OK && c.nlinked) s = la_parallel_for(nt, la_table_nrows(t), 512, count_rows, &c);
    if (s == LA_OK && c.nlinked && c.df.own) s = la_parallel_for(nt, c.df.mask + 1, 1u << 14, sum_counts, &c);
    if (s == LA_OK && c.nlinked) s = la_parallel_for(nt, c.nlinked, 16, weigh_sets, &c);
    if (s == LA_OK && c.nlinked) s = la_parallel_for(nt, c.nlinked, 16, count_siblings, &c);
    if (s == LA_OK && c.nlinked) s = la_parallel_for(nt, pairs->n, 64, grade_links, &c);
    if (s == LA_OK) {
        for (size_t k = 0; k < pairs->n; k++) {
            const la_pair *q = &pairs->v[k];
            if (!(q->kinds & CONTENT_KINDS)) continue;
            st.graded++;
            st.by_grade[q->grade & 3]++;
        }
        st.template_numbers = atomic_load(&c.template_numbers);
        st.slot_upgrades = atomic_load(&c.slot_upgrades);
        st.digits_related = atomic_load(&c.digits_related);
        st.rows_counted = atomic_load(&c.rows_counted);
        st.seconds = la_now() - t0;
        if (stats) *stats = st;
    }
    if (c.sc)
        for (int i = 0; i < nt; i++) {
            words_free(&c.sc[i].w);
            free(c.sc[i].keys.v);
            free(c.sc[i].rows);
            la_arena_free(&c.sc[i].sets);
        }
    if (c.sets)
        for (size_t k = 0; k < c.nlinked; k++) row_set_free(&c.sets[k]);
    free(c.sets);
    free(c.linked);
    free(c.held_first);
    free(c.held_links);
    free(c.slot);
    free(c.role);
    free(c.sc);
    if (c.df.own)
        for (int i = 0; i < c.df.nthreads; i++) free(c.df.own[i]);
    free(c.df.own);
    free(c.df.e);
    free(c.df.filter);
    return s;
}
