/* test_grade.c - grades of content links on small tables: a frame shared by many rows weighs
 * little (the same pair is near alone and related among many siblings of its frame), numbers that
 * differ mark template instances (in items, not in long documents), an edited copy keeps the slots
 * its template siblings lack, number words match digits, exact links are copies, family links
 * stay ungraded, the grades do not depend on the thread count (nor on a row's length), and a semantic link keeps the numbers
 * written in digits (translations do, reworded siblings do not). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grade.h"
#include "table_fixture.h"

/* Link p graded alone with gp; st (may be NULL) gets the stats. */
static la_pair graded_with(fixture *f, la_pair p, const la_grade_params *gp, la_grade_stats *st)
{
    la_pairs ps = {0};
    assert_int_equal(la_pairs_push(&ps, &p), LA_OK);
    assert_int_equal(la_grade_pairs(f->t, gp, &ps, st), LA_OK);
    la_pair out = ps.v[0];
    la_pairs_free(&ps);
    return out;
}

static la_pair graded(fixture *f, uint32_t a, uint32_t b, uint32_t kinds, int threads)
{
    la_grade_params gp;
    la_grade_params_default(&gp);
    gp.threads = threads;
    return graded_with(f, la_pair_make(a, b, kinds), &gp, NULL);
}

static const char *k_seen = "the blue kettle of the old mill whistles loudly when the miller brews strong tea at dawn";
static const char *k_held = "the blue kettle of the old mill whistles softly when the miller brews green tea at dusk";

/* Alone, the two rows share distinctive wording: near. */
static void test_rare_shared_wording_is_near(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    uint32_t a = (uint32_t)add(&f, f.dev, "a", k_seen), b = (uint32_t)add(&f, f.test, "b", k_held);
    la_pair p = graded(&f, a, b, LA_KIND_NEAR, 1);
    assert_int_equal(p.grade, LA_GRADE_NEAR);
    assert_true(p.wcontainment > 0.45f && p.wcontainment < 0.9f);
    la_table_free(f.t);
}

/* The same two rows among 60 others of the same frame: what they share is the frame, which
 * weighs little, so the link is only related. */
static void test_frame_shared_by_many_is_related(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    uint32_t a = (uint32_t)add(&f, f.dev, "a", k_seen), b = (uint32_t)add(&f, f.test, "b", k_held);
    static const char *adverb[] = {"gently", "sharply", "sweetly", "faintly", "wildly", "brightly"};
    static const char *drink[] = {"cocoa", "coffee", "broth", "cider", "milk", "punch", "soup", "juice", "wine", "mead"};
    char buf[256], id[16];
    for (int i = 0; i < 60; i++) {
        snprintf(buf, sizeof buf, "the blue kettle of the old mill whistles %s when the miller brews %s %s at noon%d",
                 adverb[i % 6], drink[i % 10], drink[(i / 10) % 10], i);
        snprintf(id, sizeof id, "s%d", i);
        add(&f, i % 2 ? f.dev : f.test, id, buf);
    }
    la_pair p = graded(&f, a, b, LA_KIND_NEAR, 1);
    assert_int_equal(p.grade, LA_GRADE_RELATED);
    assert_true(p.wcontainment < 0.45f);
    la_table_free(f.t);
}

/* A word's weight counts the rows that hold it, not how often they repeat it: eight other rows
 * that say "blue kettle" once each, twenty times each or 2,500 times each (a row of more keys than
 * the counting gathers at once) leave the same weighted containment, at one counting thread and at
 * three. */
static void test_a_row_counts_once_per_word(void **state)
{
    (void)state;
    static const int repeats[3] = {1, 20, 2500};
    float wc[3][2];
    size_t cap = 16 + 12 * 2500;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (int reps = 0; reps < 3; reps++)
        for (int t = 0; t < 2; t++) {
            fixture f;
            setup(&f);
            uint32_t a = (uint32_t)add(&f, f.dev, "a", k_seen), b = (uint32_t)add(&f, f.test, "b", k_held);
            char id[16];
            for (int i = 0; i < 8; i++) {
                int w = snprintf(buf, cap, "lamp%d", i);
                for (int k = 0; k < repeats[reps]; k++) w += snprintf(buf + w, cap - (size_t)w, " blue kettle");
                snprintf(id, sizeof id, "s%d", i);
                add(&f, i % 2 ? f.dev : f.test, id, buf);
            }
            wc[reps][t] = graded(&f, a, b, LA_KIND_NEAR, t ? 3 : 1).wcontainment;
            la_table_free(f.t);
        }
    free(buf);
    for (int reps = 1; reps < 3; reps++)
        for (int t = 0; t < 2; t++) assert_true(wc[0][t] == wc[reps][t]);
    /* and those words weigh less than with the pair alone */
    fixture f;
    setup(&f);
    uint32_t a = (uint32_t)add(&f, f.dev, "a", k_seen), b = (uint32_t)add(&f, f.test, "b", k_held);
    assert_true(graded(&f, a, b, LA_KIND_NEAR, 1).wcontainment > wc[0][0]);
    la_table_free(f.t);
}

/* Numbers are the slots of templated items: the same words with other numbers is another instance. */
static void test_other_numbers_are_related(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    uint32_t a = (uint32_t)add(&f, f.dev, "a", "a train travels 270 miles in 3 hours at the same rate how many additional hours would it take to travel an additional 180 miles");
    uint32_t b = (uint32_t)add(&f, f.test, "b", "a plane travels 1200 miles in 3 hours at the same rate how many additional hours would it take to travel an additional 2000 miles");
    la_pair p = graded(&f, a, b, LA_KIND_NEAR, 1);
    assert_int_equal(p.grade, LA_GRADE_RELATED);
    assert_int_equal(p.nums_held, 3);
    assert_int_equal(p.nums_shared, 1);
    assert_int_equal(p.nums_changed, 2);
    /* the same question with its numbers kept and a word changed is a near copy */
    uint32_t c = (uint32_t)add(&f, f.dev, "c", "a plane flies 1200 miles in 3 hours at the same rate how many additional hours would it take to travel an additional 2000 miles");
    p = graded(&f, c, b, LA_KIND_NEAR, 1);
    assert_true(p.grade >= LA_GRADE_NEAR);
    assert_int_equal(p.nums_shared, 3);
    la_table_free(f.t);
}

/* A reworded question whose numbers trade places ("10 minutes to read 3 pages" against "reads 3 pages
 * in 10 minutes") restates none of them; a sibling that puts another of the row's numbers in a
 * slot, stating it more often than the row does, restates one. */
static void test_numbers_trading_places_are_not_restated(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    uint32_t b = (uint32_t)add(&f, f.test, "b", "it takes james 10 minutes to read 3 pages of his book before he goes to bed he reads 18 pages of his book and then decides to go to sleep how long does james spend reading in minutes");
    uint32_t a = (uint32_t)add(&f, f.dev, "a", "james reads 3 pages of his book in 10 minutes before bedtime he goes through 18 pages of the book before deciding to sleep what is the duration in minutes that james dedicates to reading answer 60");
    la_pair p = graded(&f, a, b, LA_KIND_NEAR, 1);
    assert_int_equal(p.nums_held, 3);
    assert_int_equal(p.nums_shared, 3);
    assert_int_equal(p.nums_changed, 0);
    uint32_t jar = (uint32_t)add(&f, f.test, "jar", "there are 3 books in a jar zack takes 3 of them and victor takes twice as many as zack how many books are left in the jar");
    uint32_t sib = (uint32_t)add(&f, f.dev, "sib", "there are 3 books in a sam jar alan takes 2 of them and bianca takes twice as many as alan how many books are left in the jar");
    p = graded(&f, sib, jar, LA_KIND_NEAR, 1);
    assert_int_equal(p.nums_held, 2);
    assert_int_equal(p.nums_shared, 2);
    assert_int_equal(p.nums_changed, 1);
    assert_int_equal(p.grade, LA_GRADE_RELATED);
    la_table_free(f.t);
}

/* Every word and number of the item kept, in another order (neighbouring words swapped, so no word
 * pair survives): a near copy. The same with one number gone is not. */
static void test_reordered_words_are_near(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    uint32_t b = (uint32_t)add(&f, f.test, "b", "lena bakes 14 lemon tarts for the harbour fair and sells them at 3 dollars each by noon");
    uint32_t a = (uint32_t)add(&f, f.dev, "a", "bakes lena lemon 14 for tarts harbour the and fair them sells 3 at each dollars noon by");
    uint32_t c = (uint32_t)add(&f, f.dev, "c", "bakes lena lemon 14 for tarts harbour the and fair them sells at each dollars noon by");
    la_pair p = graded(&f, a, b, LA_KIND_SEMANTIC, 1);
    assert_true(p.wcontainment < 0.25f);
    assert_true(p.wwords > 0.9f);
    assert_int_equal(p.nums_shared, 2);
    assert_int_equal(p.grade, LA_GRADE_NEAR);
    p = graded(&f, c, b, LA_KIND_SEMANTIC, 1);
    assert_int_equal(p.nums_shared, 1);
    assert_int_equal(p.grade, LA_GRADE_RELATED);
    la_table_free(f.t);
}

/* "three" matches "3"; digits inside words ("b12") are numbers too. */
static void test_number_words_match_digits(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    uint32_t a = (uint32_t)add(&f, f.dev, "a", "sam packs 3 boxes of twelve pens and mails them to room b12 before lunch on friday");
    uint32_t b = (uint32_t)add(&f, f.test, "b", "sam packs three boxes of 12 pens and mails them to room b12 before lunch on friday");
    la_pair p = graded(&f, a, b, LA_KIND_NEAR, 1);
    assert_int_equal(p.nums_held, 3);
    assert_int_equal(p.nums_shared, 3);
    assert_true(p.grade >= LA_GRADE_NEAR);
    la_table_free(f.t);
}

/* A number is its value however it is written: "four decades" is 40, "3 dozen" 36, "twenty-five"
 * 25, "two hundred fifty" 250, "a trio" 3. Not joined: a piece of a decimal ("1.5 dozen") and words
 * with another word between them ("2 hundred and fifty"); and "3 rolls" is not 36. */
static void test_numbers_in_words_are_their_values(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    uint32_t b = (uint32_t)add(&f, f.test, "b", "after 40 years the baker sells 36 rolls to 25 guests and 250 cookies to 3 neighbours each week");
    uint32_t a = (uint32_t)add(&f, f.dev, "a", "after four decades the baker sells 3 dozen rolls to twenty-five guests and two hundred fifty cookies to a trio of neighbours each week");
    la_pair p = graded(&f, a, b, LA_KIND_SEMANTIC, 1);
    assert_int_equal(p.nums_held, 5);
    assert_int_equal(p.nums_shared, 5);
    assert_int_equal(p.nums_changed, 0);
    uint32_t c = (uint32_t)add(&f, f.dev, "c", "after 1.5 dozen years the baker sells 3 rolls to twenty five guests and 2 hundred and fifty cookies to 3 neighbours each week");
    p = graded(&f, c, b, LA_KIND_SEMANTIC, 1);
    /* 25 (twenty five) and 3 (neighbours) survive; 40, 36 and 250 ("2 hundred and fifty") do not */
    assert_int_equal(p.nums_shared, 2);
    la_table_free(f.t);
}

/* Exact links are copies whatever the scores; family links are not graded. */
static void test_exact_copy_family_ungraded(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    uint32_t a = (uint32_t)add(&f, f.dev, "a", "one two three"), b = (uint32_t)add(&f, f.test, "b", "one two three");
    assert_int_equal(graded(&f, a, b, LA_KIND_EXACT, 1).grade, LA_GRADE_COPY);
    assert_int_equal(graded(&f, a, b, LA_KIND_FAMILY, 1).grade, LA_GRADE_NONE);
    la_table_free(f.t);
}

/* The links of base graded with the default parameters at `threads`, into a copy of them (run). */
static void grade_copy(fixture *f, const la_pairs *base, la_pairs *run, int threads)
{
    run->n = run->cap = base->n;
    run->v = malloc(base->n * sizeof *base->v);
    assert_non_null(run->v);
    memcpy(run->v, base->v, base->n * sizeof *base->v);
    la_grade_params gp;
    la_grade_params_default(&gp);
    gp.threads = threads;
    assert_int_equal(la_grade_pairs(f->t, &gp, run, NULL), LA_OK);
}

/* The links of base graded with the default parameters at 1, 2 and 8 threads, into runs[0..3). */
static void grade_at_1_2_8_threads(fixture *f, const la_pairs *base, la_pairs runs[3])
{
    int threads[3] = {1, 2, 8};
    for (int k = 0; k < 3; k++) grade_copy(f, base, &runs[k], threads[k]);
}

/* Many links over many rows: identical fields for 1, 2 and 8 threads. */
static void test_threads_do_not_change_grades(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    char buf[256], id[16];
    for (int i = 0; i < 400; i++) {
        snprintf(buf, sizeof buf, "row %d says the %s of item %d costs %d coins and weighs %d grams", i % 37,
                 i % 3 ? "price" : "cost", i % 50, (i * 7) % 90, (i * 13) % 70);
        snprintf(id, sizeof id, "r%d", i);
        add(&f, i % 4 ? f.dev : f.test, id, buf);
    }
    la_pairs base = {0};
    for (uint32_t b = 0; b < 400; b += 4)
        for (uint32_t a = 1; a < 400; a += 9) {
            la_pair p = la_pair_make(a, b, LA_KIND_NEAR);
            assert_int_equal(la_pairs_push(&base, &p), LA_OK);
        }
    la_pairs runs[3];
    grade_at_1_2_8_threads(&f, &base, runs);
    size_t differ = 0, related = 0;
    for (size_t i = 0; i < base.n; i++) {
        related += runs[0].v[i].grade == LA_GRADE_RELATED;
        for (int k = 1; k < 3; k++)
            differ += runs[k].v[i].grade != runs[0].v[i].grade || runs[k].v[i].wcontainment != runs[0].v[i].wcontainment;
    }
    assert_int_equal(differ, 0);
    assert_true(related > 0 && related < base.n);
    for (int k = 0; k < 3; k++) la_pairs_free(&runs[k]);
    la_pairs_free(&base);
    la_table_free(f.t);
}

/* Rows of 1 to 70 words (whole blocks of 8 and every remainder), with numbers in digits and in
 * words and repeated word pairs, linked at random: the AVX-512 loop that gathers the keys of the
 * document counts gives every link the weights and grade of the portable loop. */
static void test_vector_keys_match_portable_keys(void **state)
{
    (void)state;
    if (!la_grade_portable_keys(0)) skip(); /* no AVX-512 here: one loop only */
    static const char *vocab[] = {"the", "cost", "of", "three", "apples", "is", "12", "coins", "twenty", "five",
                                  "and", "a", "dozen", "pears", "weigh", "4th", "grams", "price", "blue", "kettle"};
    fixture f;
    setup(&f);
    char buf[1024], id[16];
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 600; i++) {
        int words = 1 + i % 70;
        size_t at = 0;
        for (int k = 0; k < words; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const char *w = vocab[(x >> 20) % (sizeof vocab / sizeof *vocab)];
            /* some rows repeat a pair, some carry a word of their own */
            if (i % 5 == 0 && k % 2) w = "kettle";
            at += (size_t)snprintf(buf + at, sizeof buf - at, k ? " %s" : "%s", w);
            if (i % 7 == 0 && k == words / 2) at += (size_t)snprintf(buf + at, sizeof buf - at, " w%d", i);
        }
        snprintf(id, sizeof id, "r%d", i);
        add(&f, i % 3 ? f.dev : f.test, id, buf);
    }
    la_pairs base = {0};
    for (uint32_t b = 0; b < 600; b += 3)
        for (uint32_t a = 1 + b % 5; a < 600; a += 17) {
            if (a % 3 == 0) continue;
            la_pair p = la_pair_make(a, b, LA_KIND_NEAR);
            assert_int_equal(la_pairs_push(&base, &p), LA_OK);
        }
    la_pairs runs[2];
    for (int k = 0; k < 2; k++) {
        la_grade_portable_keys(k);
        grade_copy(&f, &base, &runs[k], 1);
    }
    la_grade_portable_keys(0);
    size_t differ = 0, weighted = 0;
    for (size_t i = 0; i < base.n; i++) {
        const la_pair *v = &runs[0].v[i], *p = &runs[1].v[i];
        weighted += v->wcontainment > 0 && v->wcontainment < 1;
        differ += v->grade != p->grade || v->wcontainment != p->wcontainment || v->wwords != p->wwords;
    }
    assert_int_equal(differ, 0);
    assert_true(weighted > base.n / 2);
    for (int k = 0; k < 2; k++) la_pairs_free(&runs[k]);
    la_pairs_free(&base);
    la_table_free(f.t);
}

/* 300 held-out rows, each with words of its own that 4 seen rows besides its link also hold: each
 * such word's weight comes from its count, which is only right when the word passed the filter of
 * the held-out keys. That filter is set on every thread (a copy each, ORed): a word whose bit one
 * thread set and the merge lost would count 0 and weigh as the rarest. The weights, and so the
 * links' weighted containment, are the same at 1, 2 and 8 threads. */
static void test_threads_count_every_held_out_key(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    enum { N = 300 };
    char buf[512], id[16];
    for (int i = 0; i < N; i++) {
        snprintf(buf, sizeof buf, "own%da own%db own%dc the shared tail of every held out row", i, i, i);
        snprintf(id, sizeof id, "t%d", i);
        add(&f, f.test, id, buf);
    }
    for (int j = 0; j < N; j++) {
        size_t at = 0;
        for (int k = 0; k < 5; k++) {
            int i = (j + 7 * k) % N;
            at += (size_t)snprintf(buf + at, sizeof buf - at, "%sown%da own%db", k ? " and " : "", i, i);
        }
        snprintf(buf + at, sizeof buf - at, " own%dc", j);
        snprintf(id, sizeof id, "s%d", j);
        add(&f, f.dev, id, buf);
    }
    la_pairs base = {0};
    for (uint32_t i = 0; i < N; i++) {
        la_pair p = la_pair_make(N + i, i, LA_KIND_NEAR);
        assert_int_equal(la_pairs_push(&base, &p), LA_OK);
    }
    la_pairs runs[3];
    grade_at_1_2_8_threads(&f, &base, runs);
    size_t differ = 0, shaded = 0;
    for (size_t i = 0; i < base.n; i++) {
        shaded += runs[0].v[i].wcontainment < 0.99f;
        for (int k = 1; k < 3; k++) differ += runs[k].v[i].wcontainment != runs[0].v[i].wcontainment;
    }
    assert_int_equal(differ, 0);
    assert_true(shaded > N / 2); /* the shared words weigh less: their counts were read */
    for (int k = 0; k < 3; k++) la_pairs_free(&runs[k]);
    la_pairs_free(&base);
    la_table_free(f.t);
}

/* n in letters (a word with no digit in it) at p; returns its length. */
static size_t letters(char *p, int n)
{
    size_t k = 0;
    do {
        p[k++] = (char)('a' + n % 26);
        n /= 26;
    } while (n);
    p[k] = '\0';
    return k;
}

/* Word i, j of the large table's rows, from the letters of the kind, i and j, at p; its length. */
static size_t large_word(char *p, char kind, int i, int j)
{
    size_t at = 0;
    p[at++] = kind;
    at += letters(p + at, i);
    p[at++] = 'q';
    at += letters(p + at, j);
    return at;
}

/* Held-out rows with words of their own and words and word pairs shared with one row in 40, enough
 * of them (about 190k distinct words and word pairs) that with two threads or more the table of
 * held-out keys is filled on every thread: each link's grade and weighted shares of word pairs and
 * words are the same at 1, 2 and 8 threads, and the links are not all of one grade. */
static void test_threads_fill_a_large_table_alike(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    enum { ROWS = 2500, WORDS = 60 };
    char *buf = malloc(WORDS * 24), id[16];
    assert_non_null(buf);
    la_pairs base = {0};
    for (int i = 0; i < ROWS; i++) {
        /* held-out row i: words of its own; its seen partner keeps every word, nine in ten, or the first third */
        size_t at = 0;
        for (int j = 0; j < WORDS; j++) {
            if (j) buf[at++] = ' ';
            at += j % 4 < 2 ? large_word(buf + at, 'g', i % 40, j) : large_word(buf + at, 'h', i, j); /* half shared by 1 row in 40 */
        }
        snprintf(id, sizeof id, "t%d", i);
        uint32_t b = (uint32_t)add(&f, f.test, id, buf);
        at = 0;
        for (int j = 0; j < WORDS; j++) {
            int other = i % 3 == 1 ? j % 10 == 5 : i % 3 == 2 ? j >= WORDS / 3 : 0;
            if (j) buf[at++] = ' ';
            at += other ? large_word(buf + at, 's', i, j) : j % 4 < 2 ? large_word(buf + at, 'g', i % 40, j) : large_word(buf + at, 'h', i, j);
        }
        snprintf(id, sizeof id, "d%d", i);
        uint32_t a = (uint32_t)add(&f, f.dev, id, buf);
        la_pair p = la_pair_make(a, b, LA_KIND_NEAR);
        assert_int_equal(la_pairs_push(&base, &p), LA_OK);
    }
    free(buf);
    la_pairs runs[3];
    grade_at_1_2_8_threads(&f, &base, runs);
    size_t differ = 0, by_grade[4] = {0};
    for (size_t i = 0; i < base.n; i++) {
        by_grade[runs[0].v[i].grade & 3]++;
        for (int k = 1; k < 3; k++)
            differ += runs[k].v[i].grade != runs[0].v[i].grade || runs[k].v[i].wcontainment != runs[0].v[i].wcontainment ||
                      runs[k].v[i].wwords != runs[0].v[i].wwords;
    }
    assert_int_equal(differ, 0);
    assert_true(by_grade[LA_GRADE_COPY] + by_grade[LA_GRADE_NEAR] > 0);
    assert_true(by_grade[LA_GRADE_COPY] + by_grade[LA_GRADE_NEAR] < base.n);
    for (int k = 0; k < 3; k++) la_pairs_free(&runs[k]);
    la_pairs_free(&base);
    la_table_free(f.t);
}

/* A held-out row of 150,000 words between short ones: its words and keys take blocks of their own
 * in a worker's memory for the sets (more than SETS_BLOCK bytes each), and the short rows after it
 * keep filling the block before: every link graded copy, alike at 1, 2 and 8 threads. */
static void test_a_long_row_among_short_ones(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    enum { LONG = 150000 };
    char *big = malloc((size_t)LONG * 8);
    assert_non_null(big);
    size_t at = 0;
    for (int j = 0; j < LONG; j++) {
        if (j) big[at++] = ' ';
        at += letters(big + at, j);
    }
    const char *texts[] = {k_seen, big, k_held, "a short row of its own, after the long one"};
    la_pairs base = {0};
    char id[16];
    for (int k = 0; k < 4; k++) {
        snprintf(id, sizeof id, "s%d", k);
        uint32_t a = (uint32_t)add(&f, f.dev, id, texts[k]);
        snprintf(id, sizeof id, "h%d", k);
        uint32_t b = (uint32_t)add(&f, f.test, id, texts[k]);
        la_pair p = la_pair_make(a, b, LA_KIND_NEAR);
        assert_int_equal(la_pairs_push(&base, &p), LA_OK);
    }
    free(big);
    la_pairs runs[3];
    grade_at_1_2_8_threads(&f, &base, runs);
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < base.n; i++) {
            assert_int_equal(runs[k].v[i].grade, LA_GRADE_COPY);
            assert_true(runs[k].v[i].wcontainment > 0.999f);
        }
        la_pairs_free(&runs[k]);
    }
    la_pairs_free(&base);
    la_table_free(f.t);
}

/* A held-out instance of a frame linked to eight siblings (other names, items and numbers) and to
 * an edited copy that lost one number and a few frame words: the siblings stay related, the copy
 * keeps the name, the item and two numbers that no sibling has, and its slot evidence makes it near,
 * though its numbers alone mark it a template instance. */
static void test_slot_evidence_finds_edited_copy(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    static const char *name[] = {"omar", "lena", "yuki", "pablo", "ines", "ravi", "mira", "tomas"};
    static const char *item[] = {"pebbles", "donuts", "candles", "scarves", "kites", "lamps", "mugs", "soaps"};
    uint32_t b = (uint32_t)add(&f, f.test, "b", "bianca sells marbles at the market for 447 each on monday bianca sells 31 marbles and on tuesday 76 more how much money does bianca earn in total");
    uint32_t copy = (uint32_t)add(&f, f.dev, "copy", "bianca sells marbles at market for 9 each on monday bianca sells 31 marbles and tuesday 76 more how much does bianca earn in total");
    la_pairs ps = {0};
    char buf[256], id[16];
    for (int i = 0; i < 8; i++) {
        snprintf(buf, sizeof buf, "%s sells %s at the market for %d each on monday %s sells %d %s and on tuesday %d more how much money does %s earn in total",
                 name[i], item[i], 100 + 13 * i, name[i], 40 + i, item[i], 200 + 7 * i, name[i]);
        snprintf(id, sizeof id, "s%d", i);
        la_pair q = la_pair_make((uint32_t)add(&f, f.dev, id, buf), b, LA_KIND_SEMANTIC);
        assert_int_equal(la_pairs_push(&ps, &q), LA_OK);
    }
    la_pair q = la_pair_make(copy, b, LA_KIND_NEAR);
    assert_int_equal(la_pairs_push(&ps, &q), LA_OK);
    la_grade_params gp;
    la_grade_params_default(&gp);
    la_grade_stats st;
    assert_int_equal(la_grade_pairs(f.t, &gp, &ps, &st), LA_OK);
    for (size_t k = 0; k < ps.n; k++) {
        const la_pair *x = &ps.v[k];
        assert_false(isnan(x->slot_evidence));
        if (x->a == copy) {
            assert_int_equal(x->grade, LA_GRADE_NEAR);
            assert_true(x->nums_changed >= 1);
            assert_true(x->slot_evidence >= gp.slot_evidence);
        } else {
            assert_int_equal(x->grade, LA_GRADE_RELATED);
            assert_true(x->slot_evidence < 0);
        }
    }
    assert_int_equal(st.slot_upgrades, 1);
    /* with too few siblings there is no frame to tell slots from, and no slot evidence */
    gp.slot_min_siblings = 9;
    assert_int_equal(la_grade_pairs(f.t, &gp, &ps, &st), LA_OK);
    for (size_t k = 0; k < ps.n; k++) assert_true(isnan(ps.v[k].slot_evidence));
    assert_int_equal(st.slot_upgrades, 0);
    la_pairs_free(&ps);
    la_table_free(f.t);
}

/* A revision of a long document renumbers its sections and updates its date: in a document the
 * numbers are not slots, so the restated numbers do not make it a template instance. The same
 * change in a short item does. */
static void test_numbers_rule_is_for_items(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    char old_doc[8192] = "", new_doc[8192] = "", w[64];
    for (int s = 0; s < 40; s++) {
        snprintf(w, sizeof w, "section %d clause%d governs term%d and duty%d of party%d ", s + 1, s, s, s, s);
        strcat(old_doc, w);
        /* renumbered to numbers of its own (a shift by one would be numbers trading places) */
        snprintf(w, sizeof w, "section %d clause%d governs term%d and duty%d of party%d ", s + 101, s, s, s, s);
        strcat(new_doc, w);
    }
    strcat(old_doc, "effective 2019 onwards");
    strcat(new_doc, "effective 2022 onwards");
    uint32_t a = (uint32_t)add(&f, f.dev, "old", old_doc), b = (uint32_t)add(&f, f.test, "new", new_doc);
    la_pair p = graded(&f, a, b, LA_KIND_NEAR, 1);
    assert_true(p.nums_changed >= 8);
    assert_int_equal(p.grade, LA_GRADE_NEAR);
    /* the item-sized rule would hold it: the limit is what decides */
    la_grade_params gp;
    la_grade_params_default(&gp);
    gp.numbers_max_words = 100000;
    assert_int_equal(graded_with(&f, la_pair_make(a, b, LA_KIND_NEAR), &gp, NULL).grade, LA_GRADE_RELATED);
    la_table_free(f.t);
}

/* A semantic link from model vectors at `cosine`, graded with the digits rule up to digits_cosine
 * (0: off). */
static la_pair graded_cosine_stats(fixture *f, uint32_t a, uint32_t b, float cosine, double digits_cosine, la_grade_stats *st)
{
    la_pair p = la_pair_make(a, b, LA_KIND_SEMANTIC);
    p.cosine = cosine;
    la_grade_params gp;
    la_grade_params_default(&gp);
    gp.semantic_lexical = 0;
    gp.digits_cosine = digits_cosine;
    return graded_with(f, p, &gp, st);
}

static la_pair graded_cosine(fixture *f, uint32_t a, uint32_t b, float cosine, double digits_cosine)
{
    return graded_cosine_stats(f, a, b, cosine, digits_cosine, NULL);
}

/* Rule 4's digits: above numbers_cosine, up to digits_cosine, the two rows of a semantic link must
 * state the same numbers in digits. A translation does, glued to its words or with another
 * thousands separator; a reworded sibling with numbers of its own, which the other rules let
 * through (few shared words, no number in the same context), does not. */
static void test_digits_rule_keeps_translations_not_siblings(void **state)
{
    (void)state;
    fixture f;
    setup(&f);
    uint32_t b = (uint32_t)add(&f, f.test, "b", "she bought 12 apples for 300 coins at the market");
    uint32_t zh = (uint32_t)add(&f, f.dev, "zh", "她在市场上花了300枚硬币买了12个苹果");
    uint32_t sib = (uint32_t)add(&f, f.dev, "sib", "at the bazaar a girl paid 450 coins to get 15 apples");
    assert_int_equal(graded_cosine(&f, zh, b, 0.93f, 0.95).grade, LA_GRADE_NEAR);
    la_grade_stats st;
    la_pair p = graded_cosine_stats(&f, sib, b, 0.93f, 0.95, &st);
    assert_int_equal(p.grade, LA_GRADE_RELATED);
    assert_int_equal(st.digits_related, 1); /* the digits rule's doing, not rule 2's */
    assert_int_equal(st.template_numbers, 0);
    /* the rule off, or the cosine at digits_cosine or above: near on the cosine */
    assert_int_equal(graded_cosine(&f, sib, b, 0.93f, 0).grade, LA_GRADE_NEAR);
    assert_int_equal(graded_cosine(&f, sib, b, 0.96f, 0.95).grade, LA_GRADE_NEAR);

    /* thousands groups and multipliers: "2,000" is "2.000" and "2000"; "2 dozen" is 24, which
     * "twenty-four" states too, and which "2" alone does not */
    uint32_t b2 = (uint32_t)add(&f, f.test, "b2", "a crate holds 2 dozen eggs and costs 2,000 won");
    uint32_t de = (uint32_t)add(&f, f.dev, "de", "eine kiste mit 24 eiern kostet 2.000 won");
    uint32_t en = (uint32_t)add(&f, f.dev, "en", "a box of twenty-four eggs sells for 2000 won");
    uint32_t two = (uint32_t)add(&f, f.dev, "two", "a crate holds 2 eggs and costs 2,000 won");
    assert_int_equal(graded_cosine(&f, de, b2, 0.93f, 0.95).grade, LA_GRADE_NEAR);
    assert_int_equal(graded_cosine(&f, en, b2, 0.93f, 0.95).grade, LA_GRADE_NEAR);
    assert_int_equal(graded_cosine(&f, two, b2, 0.93f, 0.95).grade, LA_GRADE_RELATED);

    /* both ways: a sibling that keeps the row's numbers and brings one of its own is no copy */
    uint32_t more = (uint32_t)add(&f, f.dev, "more", "at the bazaar a girl paid 300 coins to get 12 apples and 7 pears");
    assert_int_equal(graded_cosine(&f, more, b, 0.93f, 0).grade, LA_GRADE_NEAR);
    assert_int_equal(graded_cosine(&f, more, b, 0.93f, 0.95).grade, LA_GRADE_RELATED);
    /* digits glued to Latin letters are names, not quantities: a translation may spell "3d" out */
    uint32_t b3 = (uint32_t)add(&f, f.test, "b3", "a 3d chess game with 2 boards");
    uint32_t ja = (uint32_t)add(&f, f.dev, "ja", "三次元チェスゲーム、盤は2つ");
    assert_int_equal(graded_cosine(&f, ja, b3, 0.93f, 0.95).grade, LA_GRADE_NEAR);
    /* items only: a long passage (a link to one of its windows) states numbers of its own */
    char passage[4096] = "", w[64];
    for (int i = 0; i < 160; i++) {
        snprintf(w, sizeof w, "word%d in year %d ", i, 1900 + i);
        strcat(passage, w);
    }
    strcat(passage, "她在市场上花了300枚硬币买了12个苹果");
    uint32_t longer = (uint32_t)add(&f, f.dev, "long", passage);
    assert_int_equal(graded_cosine(&f, longer, b, 0.93f, 0.95).grade, LA_GRADE_NEAR);
    la_table_free(f.t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rare_shared_wording_is_near),     cmocka_unit_test(test_frame_shared_by_many_is_related),
        cmocka_unit_test(test_other_numbers_are_related),       cmocka_unit_test(test_reordered_words_are_near),
        cmocka_unit_test(test_number_words_match_digits),         cmocka_unit_test(test_a_row_counts_once_per_word),
        cmocka_unit_test(test_numbers_trading_places_are_not_restated),
        cmocka_unit_test(test_numbers_in_words_are_their_values),
        cmocka_unit_test(test_exact_copy_family_ungraded),      cmocka_unit_test(test_threads_do_not_change_grades),
        cmocka_unit_test(test_threads_fill_a_large_table_alike),
        cmocka_unit_test(test_a_long_row_among_short_ones),
        cmocka_unit_test(test_vector_keys_match_portable_keys),
        cmocka_unit_test(test_threads_count_every_held_out_key),
        cmocka_unit_test(test_slot_evidence_finds_edited_copy), cmocka_unit_test(test_numbers_rule_is_for_items),
        cmocka_unit_test(test_digits_rule_keeps_translations_not_siblings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
