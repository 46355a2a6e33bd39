/* test_gpu_semantic.c - the semantic tier through an exec on the CUDA backend with the CPU as its
 * fallback (what --backend auto builds): on a machine with a device the tiles run
 * there (stats.backend "gpu") and report exactly the CPU's pairs and nearest neighbours; without one
 * (or without CUDA in the build) the call still succeeds on the CPU, with the same results, and says
 * why in stats.fallback. Runs everywhere: this is the fallback's test on machines with no GPU. */
#include <string.h>

#include "gpu_test.h"
#include "semantic.h"

static la_table *make(size_t n, size_t d, float thr, float **emb_out, uint32_t *heldout) {
    la_table *t;
    CHECK_OK(la_table_new(&t));
    uint32_t dev, test;
    CHECK_OK(la_table_part(t, "dev", &dev));
    CHECK_OK(la_table_part(t, "test", &test));
    float *emb = malloc(n * d * sizeof *emb);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "r%zu", i);
        la_row r = {0};
        CHECK_OK(la_table_strdup(t, id, strlen(id), &r.id));
        r.part = i % 4 == 0 ? test : dev;
        r.date = LA_NO_DATE;
        r.score = NAN;
        CHECK_OK(la_table_append(t, &r, NULL));
        for (size_t j = 0; j < d; j++) emb[i * d + j] = (float)nrand();
        unit(emb + i * d, d);
    }
    for (size_t i = 0; i + 1 < n; i += 4) { /* a near copy next to every held-out row */
        float *q = emb + i * d, *s = emb + (i + 1) * d;
        for (size_t j = 0; j < d; j++) s[j] = (float)(q[j] + (i % 8 ? 0.02 : 0.2) * nrand());
        unit(s, d);
    }
    *emb_out = emb;
    *heldout = test;
    return t;
}

static void find(const la_table *t, uint32_t h, const float *emb, size_t d, int gpu, la_pairs *out,
                 la_semantic_nearest *nn, la_semantic_stats *st) {
    la_semantic_params p;
    la_semantic_params_default(&p);
    CHECK(p.exec == NULL, "the default is the CPU reference");
    p.threshold = 0.9;
    p.topk = 3;
    p.method = LA_SEMANTIC_TILES;
    la_exec x;
    la_exec_init(&x, &la_backend_cuda, &la_backend_cpu, 0);
    if (gpu) p.exec = &x;
    memset(st, 0, sizeof *st);
    CHECK_OK(la_semantic_find(t, h, emb, d, &p, out, nn, st));
}

int main(void) {
    const size_t n = 4000, d = 64;
    float *emb;
    uint32_t h;
    la_table *t = make(n, d, 0.9f, &emb, &h);
    la_pairs a = {0}, b = {0};
    la_semantic_nearest na, nb;
    la_semantic_stats sa, sb;
    find(t, h, emb, d, 0, &a, &na, &sa);
    find(t, h, emb, d, 1, &b, &nb, &sb);
    CHECK(strcmp(sa.backend, "cpu") == 0, "CPU run says cpu");
    int dev = 0;
    int have = la_cuda_device_count(&dev) == LA_OK && dev > 0;
    if (have) {
        CHECK(strcmp(sb.backend, "gpu") == 0, "with a device the tiles run there (fallback: %s)", sb.fallback);
        CHECK(sb.fallback[0] == 0, "no fallback: %s", sb.fallback);
    } else {
        CHECK(strcmp(sb.backend, "cpu") == 0, "without a device the tiles run on the CPU");
        CHECK(sb.fallback[0] != 0, "the fallback says why");
        printf("fallback reason: %s\n", sb.fallback);
    }
    CHECK(a.n == b.n && a.n > 0, "pairs: %zu on the CPU, %zu through the CUDA exec", a.n, b.n);
    for (size_t i = 0; i < a.n && i < b.n; i++)
        CHECK(a.v[i].a == b.v[i].a && a.v[i].b == b.v[i].b && a.v[i].cosine == b.v[i].cosine,
              "pair %zu differs", i);
    CHECK(na.n == nb.n && na.k == nb.k, "nearest shapes");
    for (size_t i = 0; i < na.n * na.k; i++)
        CHECK(na.seen[i] == nb.seen[i] && (na.cosine[i] == nb.cosine[i] || (isnan(na.cosine[i]) && isnan(nb.cosine[i]))),
              "nearest %zu differs", i);
    printf("%zu pairs, backend %s\n", b.n, sb.backend);
    la_semantic_nearest_free(&na);
    la_semantic_nearest_free(&nb);
    la_pairs_free(&a);
    la_pairs_free(&b);
    la_table_free(t);
    free(emb);
    return finish("test_gpu_semantic");
}
