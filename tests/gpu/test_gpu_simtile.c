/* test_gpu_simtile.c - la_cuda_simtile reports what la_cpu_simtile reports: the same pair set, the
 * same cosines (within 1e-5; in fact bit-equal, both re-score with la_simtile_dot) and the same top-k
 * lists, in fp16, TF32 and fp32, with default and small tiles (several batches through both streams,
 * ragged last tiles), across two calls with a seen offset, with pairs planted within 1e-6 of the
 * threshold, with 60 exact duplicates tying for one row's top-k (rows the device cannot settle go to
 * the CPU), and with more candidates than the device buffer first holds. Exits 77 without a device. */
#include <string.h>

#include "gpu_test.h"
#include "simtile.h"
#include "simtile_core.h"
#include "simtile_cuda.h"

typedef struct result {
    la_simtile_hits hits;
    uint32_t *ti;
    float *tc;
} result;

static void result_init(result *r, size_t nq, uint32_t k) {
    memset(r, 0, sizeof *r);
    r->ti = malloc((nq * k + 1) * sizeof *r->ti);
    r->tc = malloc((nq * k + 1) * sizeof *r->tc);
    la_simtile_top_init(r->ti, r->tc, nq, k);
}
static void result_free(result *r) {
    la_simtile_hits_free(&r->hits);
    free(r->ti);
    free(r->tc);
}

/* Random unit vectors; planted pairs around thr; `dups` copies of one vector near held-out row 0. */
static void make(float *Q, size_t nq, float *S, size_t ns, size_t d, float thr, size_t dups) {
    for (size_t i = 0; i < nq * d; i++) Q[i] = (float)nrand();
    for (size_t i = 0; i < ns * d; i++) S[i] = (float)nrand();
    for (size_t i = 0; i < nq; i++) unit(Q + i * d, d);
    for (size_t i = 0; i < ns; i++) unit(S + i * d, d);
    const double offs[] = {1e-6, 3e-7, 1e-7, 0, -1e-7, -3e-7, -1e-6, 0.05, -0.05, 2e-6};
    for (size_t m = 0; m < nq && 2 * m + 1 < ns; m++) {
        const float *q = Q + m * d;
        float *s = S + (2 * m + 1) * d;
        double c = thr + offs[m % 10], dot = 0;
        if (c > 1) c = 1;
        if (c < -1) c = -1;
        for (size_t j = 0; j < d; j++) dot += (double)s[j] * q[j];
        for (size_t j = 0; j < d; j++) s[j] = (float)(s[j] - dot * q[j]);
        unit(s, d);
        for (size_t j = 0; j < d; j++) s[j] = (float)(c * q[j] + sqrt(1 - c * c) * s[j]);
    }
    if (dups && ns > 2 * nq + 7 * dups) {
        float *v = S + 2 * nq * d;
        for (size_t j = 0; j < d; j++) v[j] = (float)(0.9 * Q[j] + 0.3 * nrand() / sqrt((double)d));
        unit(v, d);
        for (size_t c = 1; c < dups; c++) memcpy(S + (2 * nq + c * 7) * d, v, d * sizeof *v);
    }
}

static void compare(const char *what, const result *a, const result *b, size_t nq, uint32_t k,
                    float thr) {
    CHECK(a->hits.n == b->hits.n, "%s: %zu pairs on the CPU, %zu on the GPU", what, a->hits.n, b->hits.n);
    size_t n = a->hits.n < b->hits.n ? a->hits.n : b->hits.n, diff = 0, notbit = 0, near = 0;
    for (size_t i = 0; i < n; i++) {
        const la_simtile_hit *x = &a->hits.v[i], *y = &b->hits.v[i];
        if (x->q != y->q || x->s != y->s || fabsf(x->cosine - y->cosine) > 1e-5f) diff++;
        if (x->cosine != y->cosine) notbit++;
        if (fabsf(x->cosine - thr) < 2e-6f) near++;
    }
    CHECK(diff == 0, "%s: %zu pairs differ", what, diff);
    CHECK(notbit == 0, "%s: %zu cosines not bit-equal", what, notbit);
    size_t tdiff = 0;
    for (size_t i = 0; i < nq * k; i++)
        if (a->ti[i] != b->ti[i] || !(fabsf(a->tc[i] - b->tc[i]) <= 1e-5f || (isinf(a->tc[i]) && isinf(b->tc[i]))))
            tdiff++;
    CHECK(tdiff == 0, "%s: %zu top-k entries differ", what, tdiff);
    printf("%-44s %7zu pairs (%zu within 2e-6 of the threshold), top-%u lists identical: %s\n", what,
           a->hits.n, near, k, diff || tdiff ? "NO" : "yes");
}

static void run_case(const char *name, size_t nq, size_t ns, size_t d, float thr, uint32_t k,
                     size_t dups, int expect_retry) {
    float *Q = malloc(nq * d * sizeof *Q), *S = malloc(ns * d * sizeof *S);
    make(Q, nq, S, ns, d, thr, dups);
    la_simtile_params p;
    la_simtile_params_default(&p);
    p.threshold = thr;
    p.topk = k;
    result cpu;
    result_init(&cpu, nq, k);
    CHECK_OK(la_cpu_simtile(Q, nq, S, ns, d, 0, &p, &cpu.hits, cpu.ti, cpu.tc, NULL));
    if (k) CHECK(cpu.ti[0] != LA_SIMTILE_NONE, "%s: row 0 has neighbours", name);

    const char *pname[] = {"fp16", "tf32", "fp32"};
    for (int prec = 0; prec < 3; prec++)
        for (int shape = 0; shape < 3; shape++) {
            la_cuda_simtile_opts o;
            la_cuda_simtile_opts_default(&o);
            o.precision = prec;
            if (shape >= 1) {
                o.block_q = 128;
                o.block_s = 1000; /* not a multiple of 8: padded tile rows */
            }
            result gpu;
            result_init(&gpu, nq, k);
            la_cuda_simtile_stats cs = {0};
            if (shape == 2) {
                /* two calls, the second with a seen offset; the lists carry over */
                size_t cut = ns / 3;
                CHECK_OK(la_cuda_simtile(Q, nq, S, cut, d, 0, &p, &o, &gpu.hits, gpu.ti, gpu.tc, NULL, &cs));
                CHECK_OK(la_cuda_simtile(Q, nq, S + cut * d, ns - cut, d, (uint32_t)cut, &p, &o,
                                         &gpu.hits, gpu.ti, gpu.tc, NULL, &cs));
                /* the same two calls on the CPU */
                uint32_t *ti2 = malloc((nq * k + 1) * sizeof *ti2);
                float *tc2 = malloc((nq * k + 1) * sizeof *tc2);
                la_simtile_top_init(ti2, tc2, nq, k);
                la_simtile_hits h1 = {0};
                CHECK_OK(la_cpu_simtile(Q, nq, S, cut, d, 0, &p, &h1, ti2, tc2, NULL));
                CHECK_OK(la_cpu_simtile(Q, nq, S + cut * d, ns - cut, d, (uint32_t)cut, &p, &h1, ti2,
                                        tc2, NULL));
                result two = {h1, ti2, tc2};
                char what[96];
                snprintf(what, sizeof what, "%s %s two calls", name, pname[prec]);
                compare(what, &two, &gpu, nq, k, thr);
                result_free(&two);
            } else {
                CHECK_OK(la_cuda_simtile(Q, nq, S, ns, d, 0, &p, &o, &gpu.hits, gpu.ti, gpu.tc, NULL, &cs));
                char what[96];
                snprintf(what, sizeof what, "%s %s tiles %zux%zu", name, pname[prec], cs.block_q, cs.block_s);
                compare(what, &cpu, &gpu, nq, k, thr);
            }
            if (dups && k) CHECK(cs.cpu_rows >= 1, "%s: the tied row should go to the CPU", name);
            if (expect_retry) CHECK(cs.pair_retries >= 1, "%s: expected a candidate buffer retry", name);
            printf("    candidates: %zu pairs, %zu top-k; rows recomputed on the CPU: %zu; retries: %zu\n",
                   cs.pair_candidates, cs.topk_candidates, cs.cpu_rows, cs.pair_retries);
            result_free(&gpu);
        }
    result_free(&cpu);
    free(Q);
    free(S);
}

int main(void) {
    require_device();
    run_case("d384 k5 dups", 600, 12000, 384, 0.80f, 5, 60, 0);
    run_case("d100 k0", 77, 3001, 100, 0.50f, 0, 0, 0);
    run_case("d32 k1 overflow", 300, 5000, 32, -0.9f, 1, 0, 1);

    /* On failure the outputs are untouched; fp16 refuses components past its range. */
    float Q[8] = {1e6f, 0, 0, 0, 0, 0, 0, 0}, S[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    la_simtile_params p;
    la_simtile_params_default(&p);
    result r;
    result_init(&r, 1, 1);
    CHECK(la_cuda_simtile(Q, 1, S, 1, 8, 0, &p, NULL, &r.hits, r.ti, r.tc, NULL, NULL) == LA_EINVAL,
          "fp16 overflow is LA_EINVAL");
    CHECK(r.hits.n == 0 && r.ti[0] == LA_SIMTILE_NONE, "outputs untouched on failure");
    p.topk = LA_CUDA_SIMTILE_MAX_TOPK + 1;
    CHECK(la_cuda_simtile(Q, 1, S, 1, 8, 0, &p, NULL, &r.hits, r.ti, r.tc, NULL, NULL) == LA_EUNSUPPORTED,
          "topk past the device limit");
    result_free(&r);
    return finish("test_gpu_simtile");
}
