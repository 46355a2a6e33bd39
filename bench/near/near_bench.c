/*
 * near_bench.c - ground-truth benchmark of the near-copy tier on the seeded generator (gen.h).
 *
 *   near_bench [--dev N] [--test M] [--seed S] [--write DIR [--write-only]] [--sigs] [near options]
 *
 * Prints recall per edit rate (short questions and long documents apart) and for the containment
 * cases, precision over every reported pair, and throughput (rows/s and MB/s of text) of the whole
 * la_near_find call. --sigs also times MinHash signatures alone on one thread (the figures compared
 * with the Python peers, bench/peers): from raw text (shingling included), from prepared 64-bit
 * shingle hashes, and from the peers' prepared shingle strings; best of 5 each. --write DIR writes the
 * corpus and its truth as JSONL; --write-only then stops, for scripts that want only the files.
 */
#include "bench_util.h"
#include "gen.h"

static size_t set_of(const char *s, const la_near_params *p, uint64_t **buf)
{
    size_t len = strlen(s);
    *buf = malloc(la_shingle_bound(len) * sizeof **buf);
    size_t n = la_cpu_shingle(s, len, p->shingle_kind, p->shingle_size, *buf, la_shingle_bound(len));
    la_cpu_shingle_sort(*buf, n);
    return la_cpu_shingle_unique(*buf, n);
}

static const char *cmp_str_base; /* the strings cmp_str compares (single-threaded bench) */

static int cmp_str(const void *x, const void *y)
{
    const size_t *a = x, *b = y;
    const char *z = cmp_str_base;
    size_t la = a[1] - a[0], lb = b[1] - b[0];
    int c = memcmp(z + a[0], z + b[0], la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

static int is_word_byte(unsigned char c)
{
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The peers' shingle strings (bench/peers/peers.py): per row the distinct word n-grams, words joined by
 * one space (a row of fewer than n words gives one string of all of them), in one buffer; string q is
 * (*sbuf)[(*soff)[q] .. (*soff)[q+1]), row i owns strings rowoff[i] .. rowoff[i+1]. */
static int bench_shingle_strings(const la_row *r, size_t n, int ng, char **sbuf, size_t **soff, size_t *rowoff,
                                 size_t *nstr, size_t *nbytes)
{
    size_t bcap = 1 << 20, scap = 1 << 16, nb = 0, ns = 0;
    char *b = malloc(bcap);
    size_t *o = malloc(scap * sizeof *o);
    size_t wcap = 1024, *ws = malloc(wcap * sizeof *ws), *we = malloc(wcap * sizeof *we);
    size_t pcap = 1024, *pairs = malloc(pcap * 2 * sizeof *pairs);
    char *rb = NULL;
    size_t rbcap = 0;
    for (size_t i = 0; i < n; i++) {
        rowoff[i] = ns;
        const unsigned char *p = (const unsigned char *)r[i].norm;
        size_t len = r[i].norm ? r[i].norm_len : 0, nw = 0;
        for (size_t j = 0; j < len;) {
            while (j < len && !is_word_byte(p[j])) j++;
            if (j >= len) break;
            if (nw == wcap) {
                wcap *= 2;
                ws = realloc(ws, wcap * sizeof *ws);
                we = realloc(we, wcap * sizeof *we);
            }
            ws[nw] = j;
            while (j < len && is_word_byte(p[j])) j++;
            we[nw++] = j;
        }
        if (nw == 0) continue;
        size_t ngr = nw < (size_t)ng ? 1 : nw - (size_t)ng + 1, take = nw < (size_t)ng ? nw : (size_t)ng;
        /* Strings of this row into rb, as (start, end) pairs, then sorted and deduplicated. */
        size_t need = 0;
        for (size_t g = 0; g < ngr; g++) need += we[g + take - 1] - ws[g] + 1;
        if (need > rbcap) {
            rbcap = need * 2;
            rb = realloc(rb, rbcap);
        }
        if (ngr > pcap) {
            pcap = ngr * 2;
            pairs = realloc(pairs, pcap * 2 * sizeof *pairs);
        }
        size_t rl = 0;
        for (size_t g = 0; g < ngr; g++) {
            pairs[2 * g] = rl;
            for (size_t w = g; w < g + take; w++) {
                if (w > g) rb[rl++] = ' ';
                memcpy(rb + rl, p + ws[w], we[w] - ws[w]);
                rl += we[w] - ws[w];
            }
            pairs[2 * g + 1] = rl;
        }
        cmp_str_base = rb;
        qsort(pairs, ngr, 2 * sizeof *pairs, cmp_str);
        for (size_t g = 0; g < ngr; g++) {
            size_t a = pairs[2 * g], e = pairs[2 * g + 1];
            if (g > 0 && cmp_str(pairs + 2 * g, pairs + 2 * (g - 1)) == 0) continue;
            if (nb + (e - a) > bcap) {
                while (nb + (e - a) > bcap) bcap *= 2;
                b = realloc(b, bcap);
            }
            if (ns + 2 > scap) {
                scap *= 2;
                o = realloc(o, scap * sizeof *o);
            }
            o[ns++] = nb;
            memcpy(b + nb, rb + a, e - a);
            nb += e - a;
        }
    }
    rowoff[n] = ns;
    o[ns] = nb;
    free(ws);
    free(we);
    free(pairs);
    free(rb);
    *sbuf = b;
    *soff = o;
    *nstr = ns;
    *nbytes = nb;
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* True Jaccard and containment of the planted pairs under these shingles: 5th percentile and median
 * per case, the numbers the thresholds are chosen from. */
static void print_truth_stats(const gen_corpus *c, const la_near_params *p)
{
    printf("%-28s %8s %8s %8s %8s\n", "planted pairs", "J p5", "J p50", "C p5", "C p50");
    for (int k = 0; k <= GEN_NRATES * 2; k++) {
        double *jv = malloc(c->ntruth * sizeof *jv), *cv = malloc(c->ntruth * sizeof *cv);
        size_t n = 0;
        for (size_t i = 0; i < c->ntruth; i++) {
            const gen_truth *t = &c->truth[i];
            int match = k == GEN_NRATES * 2 ? t->kind == GEN_CONTAIN
                                            : t->kind == GEN_EDIT && t->rate == gen_rates[k / 2] && t->long_doc == k % 2;
            if (!match) continue;
            uint64_t *a, *b;
            size_t na = set_of(c->dev[t->dev], p, &a), nb = set_of(c->test[t->test], p, &b);
            size_t in = la_cpu_shingle_overlap(a, na, b, nb);
            jv[n] = (double)in / (double)(na + nb - in);
            cv[n] = (double)in / (double)(na < nb ? na : nb);
            n++;
            free(a);
            free(b);
        }
        if (n) {
            qsort(jv, n, sizeof *jv, cmp_d);
            qsort(cv, n, sizeof *cv, cmp_d);
            char name[64];
            if (k == GEN_NRATES * 2)
                snprintf(name, sizeof name, "containment");
            else
                snprintf(name, sizeof name, "edit %2d%% %s", gen_rates[k / 2], k % 2 ? "long docs" : "short questions");
            printf("%-28s %8.3f %8.3f %8.3f %8.3f\n", name, jv[n / 20], jv[n / 2], cv[n / 20], cv[n / 2]);
        }
        free(jv);
        free(cv);
    }
}

int main(int argc, char **argv)
{
    size_t ndev = 10000, ntest = 1000;
    uint64_t seed = 42;
    const char *write_dir = NULL;
    int sigs = 0, truth_stats = 0, write_only = 0;
    la_near_params p;
    la_near_params_default(&p);
    for (int i = 1; i < argc; i++) {
        if (bench_near_opt(argc, argv, &i, &p)) continue;
        if (!strcmp(argv[i], "--dev") && i + 1 < argc) ndev = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--test") && i + 1 < argc) ntest = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--write") && i + 1 < argc) write_dir = argv[++i];
        else if (!strcmp(argv[i], "--write-only")) write_only = 1;
        else if (!strcmp(argv[i], "--sigs")) sigs = 1;
        else if (!strcmp(argv[i], "--truth-stats")) truth_stats = 1;
        else {
            fprintf(stderr, "near_bench: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    gen_corpus c;
    double g0 = bench_now();
    if (gen_make(seed, ndev, ntest, &c) != 0) return 3;
    printf("corpus: %zu dev x %zu test rows, %.1f MB of text, %zu planted pairs, seed %llu (generated in %.1fs)\n",
           ndev, ntest, c.bytes / 1e6, c.ntruth, (unsigned long long)seed, bench_now() - g0);
    if (write_dir && gen_write(&c, write_dir) != 0) {
        fprintf(stderr, "near_bench: cannot write to %s\n", write_dir);
        return 2;
    }
    if (write_only) return write_dir ? 0 : 2;

    la_table *t;
    uint32_t pdev, ptest;
    if (la_table_new(&t) || la_table_part(t, "dev", &pdev) || la_table_part(t, "test", &ptest)) return 3;
    char id[32];
    for (size_t i = 0; i < ndev; i++) {
        snprintf(id, sizeof id, "d%zu", i);
        if (bench_add_row(t, id, pdev, c.dev[i])) return 3;
    }
    for (size_t i = 0; i < ntest; i++) {
        snprintf(id, sizeof id, "t%zu", i);
        if (bench_add_row(t, id, ptest, c.test[i])) return 3;
    }

    if (sigs) {
        /* Single-threaded signature rates, the figures compared with the Python peers. Every variant
         * is printed; the check values show that they compute the same signatures. */
        const la_row *r = la_table_rows_const(t);
        size_t n = la_table_nrows(t), cap = 0, total = 0;
        uint64_t *buf = NULL;
        uint32_t *sig = malloc((size_t)p.num_perm * sizeof *sig);
        for (size_t i = 0; i < n; i++)
            if (la_shingle_bound(r[i].norm_len) > cap) cap = la_shingle_bound(r[i].norm_len);
        buf = malloc(cap * sizeof *buf);
        uint64_t check = 0;
        double best = 1e30, el;
        /* 1. text -> shingle hashes (la_cpu_shingle) -> signature (la_cpu_minhash). */
        for (int rep = 0; rep < 5; rep++) {
            check = 0, total = 0;
            double s0 = bench_now();
            for (size_t i = 0; i < n; i++) {
                /* Duplicates do not change a signature: no sort needed here. */
                size_t k = la_cpu_shingle(r[i].norm, r[i].norm_len, p.shingle_kind, p.shingle_size, buf, cap);
                total += k;
                la_cpu_minhash(buf, k, p.num_perm, sig);
                check ^= sig[0] ^ sig[p.num_perm - 1];
            }
            el = bench_now() - s0;
            if (el < best) best = el;
        }
        printf("signatures (1 thread, text -> shingle hashes -> MinHash K=%d): %zu rows, %zu shingles in %.4fs = %.0f rows/s, "
               "%.1f M shingles/s (check %llx; best of 5)\n",
               p.num_perm, n, total, best, n / best, total / best / 1e6, (unsigned long long)check);
        /* 2. from prepared 64-bit shingle hashes, as the peers get prepared shingle strings. */
        uint64_t *flat = malloc((total ? total : 1) * sizeof *flat);
        size_t *off = malloc((n + 1) * sizeof *off);
        off[0] = 0;
        for (size_t i = 0; i < n; i++)
            off[i + 1] = off[i] + la_cpu_shingle(r[i].norm, r[i].norm_len, p.shingle_kind, p.shingle_size, flat + off[i],
                                                 total - off[i]);
        best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            check = 0;
            double s0 = bench_now();
            for (size_t i = 0; i < n; i++) {
                la_cpu_minhash(flat + off[i], off[i + 1] - off[i], p.num_perm, sig);
                check ^= sig[0] ^ sig[p.num_perm - 1];
            }
            el = bench_now() - s0;
            if (el < best) best = el;
        }
        printf("signatures (1 thread, prepared shingle hashes -> MinHash K=%d): %.4fs = %.0f rows/s (check %llx; best of 5)\n",
               p.num_perm, best, n / best, (unsigned long long)check);
        free(flat);
        free(off);
        /* 3. from prepared shingle strings exactly as the peers get them (the distinct word n-grams of
         * each row joined by one space, see bench/peers/peers.py): each string hashed with
         * la_cpu_hash_bytes, then MinHash. These signatures differ from 1-2 (our shingle hash folds
         * word hashes; here whole strings are hashed), the work is the peers'. */
        if (p.shingle_kind == LA_SHINGLE_WORD) {
            size_t nstr = 0, nbytes = 0;
            char *sbuf = NULL;
            size_t *soff = NULL, *rowoff = malloc((n + 1) * sizeof *rowoff);
            if (bench_shingle_strings(r, n, p.shingle_size, &sbuf, &soff, rowoff, &nstr, &nbytes) == 0) {
                uint64_t *hb = malloc((nstr ? nstr : 1) * sizeof *hb);
                best = 1e30;
                for (int rep = 0; rep < 5; rep++) {
                    check = 0;
                    double s0 = bench_now();
                    for (size_t i = 0; i < n; i++) {
                        size_t a = rowoff[i], b = rowoff[i + 1];
                        for (size_t q = a; q < b; q++) hb[q - a] = la_cpu_hash_bytes(sbuf + soff[q], soff[q + 1] - soff[q]);
                        la_cpu_minhash(hb, b - a, p.num_perm, sig);
                        check ^= sig[0] ^ sig[p.num_perm - 1];
                    }
                    el = bench_now() - s0;
                    if (el < best) best = el;
                }
                printf("signatures (1 thread, prepared shingle strings -> hash -> MinHash K=%d): %zu strings, %.4fs = %.0f rows/s "
                       "(check %llx; best of 5)\n",
                       p.num_perm, nstr, best, n / best, (unsigned long long)check);
                free(hb);
            }
            free(sbuf);
            free(soff);
            free(rowoff);
        }
        free(buf);
        free(sig);
    }

    if (truth_stats) print_truth_stats(&c, &p);
    bench_print_params(&p);
    la_pairs out = {0};
    la_near_stats st;
    double t0 = bench_now();
    la_status s = la_near_find(t, ptest, &p, &out, &st);
    double el = bench_now() - t0;
    if (s != LA_OK) {
        fprintf(stderr, "near_bench: %s: %s\n", la_strerror(s), la_last_error());
        return 3;
    }
    bench_print_stats(&st);
    printf("throughput: %.2fs for %zu rows = %.0f rows/s, %.1f MB/s\n", el, ndev + ntest, (ndev + ntest) / el,
           c.bytes / 1e6 / el);

    /* Truth lookup: test row -> planted dev row (each test row has at most one). */
    long *want = malloc(ntest * sizeof *want);
    for (size_t i = 0; i < ntest; i++) want[i] = -1;
    for (size_t i = 0; i < c.ntruth; i++) want[c.truth[i].test] = (long)c.truth[i].dev;
    unsigned char *found = calloc(ntest, 1);
    size_t tp = 0, fp = 0;
    for (size_t i = 0; i < out.n; i++) {
        size_t a = out.v[i].a, b = out.v[i].b - ndev; /* dev rows first, then test rows */
        if (want[b] == (long)a) {
            tp++;
            found[b] = 1;
        } else {
            fp++;
            if (fp <= 5)
                printf("  unplanted link d%zu - t%zu: jaccard %.3f containment %.3f minhash %.3f simhash %d\n", a, b,
                       out.v[i].jaccard, out.v[i].containment, out.v[i].minhash, out.v[i].simhash_dist);
        }
    }
    printf("%-28s %8s %8s %8s\n", "case", "planted", "found", "recall");
    for (int k = 0; k < GEN_NRATES; k++)
        for (int lg = 0; lg < 2; lg++) {
            size_t np = 0, nf = 0;
            for (size_t i = 0; i < c.ntruth; i++)
                if (c.truth[i].kind == GEN_EDIT && c.truth[i].rate == gen_rates[k] && c.truth[i].long_doc == lg) {
                    np++;
                    nf += found[c.truth[i].test];
                }
            char name[64];
            snprintf(name, sizeof name, "edit %2d%% %s", gen_rates[k], lg ? "long docs" : "short questions");
            printf("%-28s %8zu %8zu %8.3f\n", name, np, nf, np ? (double)nf / np : 0.0);
        }
    size_t np = 0, nf = 0;
    for (size_t i = 0; i < c.ntruth; i++)
        if (c.truth[i].kind == GEN_CONTAIN) {
            np++;
            nf += found[c.truth[i].test];
        }
    printf("%-28s %8zu %8zu %8.3f\n", "containment (3-10x longer)", np, nf, np ? (double)nf / np : 0.0);
    printf("precision: %zu of %zu reported pairs planted = %.4f\n", tp, out.n, out.n ? (double)tp / out.n : 1.0);
    free(want);
    free(found);
    la_pairs_free(&out);
    la_table_free(t);
    gen_free(&c);
    return 0;
}
