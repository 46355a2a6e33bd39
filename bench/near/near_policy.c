/*
 * near_policy.c - the near tier on real revisions: site-policy documents, each policy a family of
 * dated versions. The older 70% of each family's versions go to dev, the newer 30% to test, and the
 * family ids are hidden from the tool. Reports the recall of same-family pairs (and of test rows
 * with at least one same-family link) and every link between different families.
 *
 *   near_policy FILE.jsonl [near options]
 *
 * Text normalization here is the bench's own minimal one (ASCII lowercase, whitespace runs to one
 * space), so the figure does not depend on the host normalizer.
 */
#include "bench_util.h"

#include <ctype.h>
#include <json-c/json.h>

typedef struct doc {
    char *family, *text;
    int version;
} doc;

static int cmp_doc(const void *a, const void *b)
{
    const doc *x = a, *y = b;
    int c = strcmp(x->family, y->family);
    return c ? c : x->version - y->version;
}

static char *normalize(const char *s)
{
    size_t n = strlen(s), w = 0;
    char *o = malloc(n + 1);
    int space = 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isspace(c)) {
            if (!space) o[w++] = ' ';
            space = 1;
        } else {
            o[w++] = (char)tolower(c);
            space = 0;
        }
    }
    while (w > 0 && o[w - 1] == ' ') w--;
    o[w] = '\0';
    return o;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: near_policy FILE.jsonl [near options]\n");
        return 2;
    }
    la_near_params p;
    la_near_params_default(&p);
    for (int i = 2; i < argc; i++)
        if (!bench_near_opt(argc, argv, &i, &p)) {
            fprintf(stderr, "near_policy: unknown option %s\n", argv[i]);
            return 2;
        }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "near_policy: cannot open %s\n", argv[1]);
        return 2;
    }
    doc *d = NULL;
    size_t nd = 0, cap = 0, bytes = 0;
    char *line = NULL;
    size_t lcap = 0;
    while (getline(&line, &lcap, f) > 0) {
        json_object *o = json_tokener_parse(line), *fam, *txt, *ver;
        if (!o) continue;
        if (json_object_object_get_ex(o, "family", &fam) && json_object_object_get_ex(o, "text", &txt) &&
            json_object_object_get_ex(o, "version_idx", &ver)) {
            if (nd == cap) d = realloc(d, (cap = cap ? cap * 2 : 256) * sizeof *d);
            d[nd].family = strdup(json_object_get_string(fam));
            d[nd].text = normalize(json_object_get_string(txt));
            d[nd].version = json_object_get_int(ver);
            bytes += strlen(d[nd].text);
            nd++;
        }
        json_object_put(o);
    }
    free(line);
    fclose(f);
    qsort(d, nd, sizeof *d, cmp_doc);

    la_table *t;
    uint32_t pdev, ptest;
    if (la_table_new(&t) || la_table_part(t, "dev", &pdev) || la_table_part(t, "test", &ptest)) return 3;
    char **fam_of = malloc(nd * sizeof *fam_of);
    size_t ndev = 0, ntest = 0;
    for (size_t i = 0; i < nd;) {
        size_t j = i;
        while (j < nd && !strcmp(d[j].family, d[i].family)) j++;
        size_t n = j - i, ndv = n < 2 ? n : (size_t)(n * 0.7 + 0.5);
        if (n >= 2 && ndv == n) ndv = n - 1;
        for (size_t k = i; k < j; k++) {
            char id[64];
            int dev = k - i < ndv;
            snprintf(id, sizeof id, "%zu", la_table_nrows(t));
            fam_of[la_table_nrows(t)] = d[k].family;
            if (bench_add_row(t, id, dev ? pdev : ptest, d[k].text)) return 3;
            dev ? ndev++ : ntest++;
        }
        i = j;
    }
    const la_row *r = la_table_rows_const(t);
    size_t n = la_table_nrows(t);
    size_t same_pairs = 0, test_with_family = 0;
    for (size_t b = 0; b < n; b++) {
        if (r[b].part != ptest) continue;
        size_t k = 0;
        for (size_t a = 0; a < n; a++) k += r[a].part == pdev && !strcmp(fam_of[a], fam_of[b]);
        same_pairs += k;
        test_with_family += k > 0;
    }
    printf("policy versions: %zu rows (%zu dev, %zu test), %.1f MB, %zu same-family dev-test pairs\n", n, ndev, ntest,
           bytes / 1e6, same_pairs);
    bench_print_params(&p);
    la_pairs out = {0};
    la_near_stats st;
    double t0 = bench_now();
    la_status s = la_near_find(t, ptest, &p, &out, &st);
    double el = bench_now() - t0;
    if (s != LA_OK) {
        fprintf(stderr, "near_policy: %s: %s\n", la_strerror(s), la_last_error());
        return 3;
    }
    bench_print_stats(&st);
    size_t hit = 0, cross = 0, rows_found = 0;
    unsigned char *found = calloc(n, 1);
    for (size_t i = 0; i < out.n; i++) {
        const la_pair *q = &out.v[i];
        if (!strcmp(fam_of[q->a], fam_of[q->b])) {
            hit++;
            found[q->b] = 1;
        } else {
            cross++;
        }
    }
    /* Cross-family links grouped by family pair: how many, and the largest scores. */
    for (size_t i = 0; i < out.n; i++) {
        const la_pair *q = &out.v[i];
        if (!strcmp(fam_of[q->a], fam_of[q->b])) continue;
        size_t k = 0;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(fam_of[out.v[j].a], fam_of[q->a]) && !strcmp(fam_of[out.v[j].b], fam_of[q->b])) k++;
        if (k) continue;
        size_t cnt = 0;
        float mj = 0, mc = 0;
        for (size_t j = i; j < out.n; j++)
            if (!strcmp(fam_of[out.v[j].a], fam_of[q->a]) && !strcmp(fam_of[out.v[j].b], fam_of[q->b])) {
                cnt++;
                if (out.v[j].jaccard > mj) mj = out.v[j].jaccard;
                if (out.v[j].containment > mc) mc = out.v[j].containment;
            }
        printf("  cross-family: %s (dev) - %s (test): %zu links, max jaccard %.3f, max containment %.3f\n", fam_of[q->a],
               fam_of[q->b], cnt, mj, mc);
    }
    for (size_t i = 0; i < n; i++) rows_found += found[i];
    printf("time: %.2fs (%.1f MB/s)\n", el, bytes / 1e6 / el);
    printf("same-family pairs found: %zu of %zu = %.3f\n", hit, same_pairs, same_pairs ? (double)hit / same_pairs : 0.0);
    printf("test rows linked to their family: %zu of %zu = %.3f\n", rows_found, test_with_family,
           test_with_family ? (double)rows_found / test_with_family : 0.0);
    printf("links between different families: %zu (precision %.4f)\n", cross, out.n ? (double)hit / out.n : 1.0);
    free(found);
    la_pairs_free(&out);
    la_table_free(t);
    for (size_t i = 0; i < nd; i++) {
        free(d[i].family);
        free(d[i].text);
    }
    free(d);
    free(fam_of);
    return 0;
}
