/*
 * bench_gpu.c - the measurements of the GPU device check (bench/gpu.sh runs it; docs/gpu.md says
 * what each number means). Prints progress to stderr and one "RESULT key value" line per number to
 * stdout, which gpu.sh collects into the results file.
 *
 *   bench_gpu minhash [MB]        shingle + MinHash (word 2-shingles, 128 permutations, 16 x 8 band
 *                                 keys) of MB megabytes of synthetic text, GB/s of text: end to end
 *                                 (host text in, host signatures out) and kernels alone; a parity
 *                                 spot check against the CPU on the first documents
 *   bench_gpu sim [NQ NS]         la_cuda_simtile on NQ x NS synthetic unit vectors (d = 384) in fp16
 *                                 and TF32 at a few tile shapes, TFLOP/s against plain cublasGemmEx
 *                                 at the tile's shape and precision
 *   bench_gpu e2e [NQ NS BUDGET]  the 1M seen x 100k held-out join (default): a first call on 10k
 *                                 held-out rows, then the rest in one call when its projected time
 *                                 fits BUDGET seconds (default 240), else further 10k slices while
 *                                 they fit, and the total extrapolated from the rows measured
 *
 * Synthetic data only: nothing is read from disk. Memory: host NS x 384 floats (1.5 GB at 1M).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "leakaudit.h"
#include "near_cuda.h"
#include "near_kernels.h"
#include "simtile.h"
#include "simtile_core.h"
#include "simtile_cuda.h"

#ifdef LA_HAVE_OPENMP
#include <omp.h>
#endif

#define D 384

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void die(const char *what, la_status st) {
    fprintf(stderr, "bench_gpu: %s: %s: %s\n", what, la_strerror(st), la_last_error());
    printf("RESULT error \"%s: %s\"\n", what, la_last_error());
    exit(st == LA_ENODEV || st == LA_EUNSUPPORTED ? 77 : 1);
}

/* ---- MinHash ------------------------------------------------------------------------------- */

static int bench_minhash(size_t mb) {
    /* documents of 200..3000 bytes drawn from a 5000-word vocabulary */
    const size_t bytes = mb << 20;
    char *text = malloc(bytes + 4096);
    size_t cap = bytes / 200 + 2, nd = 0, len = 0;
    uint64_t *off = malloc(cap * sizeof *off);
    if (!text || !off) die("minhash: host memory", LA_ENOMEM);
    uint64_t r = 1;
    while (len < bytes && nd + 1 < cap) {
        off[nd++] = len;
        size_t target = 200 + mix(r++) % 2800;
        size_t end = len + target < bytes ? len + target : bytes;
        while (len < end) {
            uint64_t w = mix(r++) % 5000;
            int wl = 2 + (int)(w % 9);
            for (int i = 0; i < wl && len < bytes; i++) text[len++] = (char)('a' + (w * 7 + i * 13) % 26);
            if (len < bytes) text[len++] = (w % 17 == 0) ? '\n' : ' ';
        }
    }
    off[nd] = len;
    fprintf(stderr, "minhash: %zu documents, %.0f MB of text\n", nd, len / 1e6);
    const int k = 128, bands = 16, rows = 8;
    uint32_t *sig = malloc(nd * k * sizeof *sig);
    uint64_t *keys = malloc(nd * bands * sizeof *keys);
    if (!sig || !keys) die("minhash: host memory", LA_ENOMEM);
    la_cuda_near_stats warm = {0}, st = {0};
    la_status s = la_cuda_shingle_minhash(text, off, nd < 1000 ? nd : 1000, LA_SHINGLE_WORD, 2, k,
                                          bands, rows, NULL, sig, keys, NULL, &warm);
    if (s != LA_OK) die("minhash (warm-up)", s);
    int reps = 3;
    for (int i = 0; i < reps; i++) {
        s = la_cuda_shingle_minhash(text, off, nd, LA_SHINGLE_WORD, 2, k, bands, rows, NULL, sig,
                                    keys, NULL, &st);
        if (s != LA_OK) die("minhash", s);
    }
    double e2e = st.bytes / st.seconds / 1e9, kern = st.bytes / (st.kernel_ms * 1e-3) / 1e9;
    fprintf(stderr, "minhash: %.2f GB/s end to end, %.2f GB/s kernels (%zu chunks per pass)\n", e2e,
            kern, st.chunks / reps);

    /* parity spot check: the first 2000 documents against the CPU loops */
    size_t check = nd < 2000 ? nd : 2000, bad = 0;
    uint64_t *h = malloc(la_shingle_bound(4096) * sizeof *h);
    uint32_t ref[128];
    for (size_t i = 0; i < check; i++) {
        size_t n = la_cpu_shingle(text + off[i], off[i + 1] - off[i], LA_SHINGLE_WORD, 2, h,
                                  la_shingle_bound(4096));
        la_cpu_minhash(h, n, k, ref);
        bad += memcmp(ref, sig + i * k, sizeof ref) != 0;
    }
    /* CPU reference speed, one thread, on the same documents */
    double t0 = now_s();
    size_t cbytes = 0;
    for (size_t i = 0; i < nd && now_s() - t0 < 2.0; i++) {
        size_t n = la_cpu_shingle(text + off[i], off[i + 1] - off[i], LA_SHINGLE_WORD, 2, h,
                                  la_shingle_bound(4096));
        la_cpu_minhash(h, n, k, ref);
        cbytes += off[i + 1] - off[i];
    }
    double cpu = cbytes / (now_s() - t0) / 1e9;
    printf("RESULT minhash.text_mb %.0f\n", len / 1e6);
    printf("RESULT minhash.docs %zu\n", nd);
    printf("RESULT minhash.permutations %d\n", k);
    printf("RESULT minhash.gbps_end_to_end %.2f\n", e2e);
    printf("RESULT minhash.gbps_kernels %.2f\n", kern);
    printf("RESULT minhash.gbps_cpu_one_thread %.3f\n", cpu);
    printf("RESULT minhash.parity_docs_checked %zu\n", check);
    printf("RESULT minhash.parity_mismatches %zu\n", bad);
    free(h);
    free(text);
    free(off);
    free(sig);
    free(keys);
    return bad ? 1 : 0;
}

/* ---- similarity ---------------------------------------------------------------------------- */

/* Random unit vectors (uniform components, normalized); row i's stream is a pure function of
 * (seed, i), so the data do not depend on the thread count. */
static void fill_unit(float *X, size_t n, uint64_t seed) {
#ifdef LA_HAVE_OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (size_t i = 0; i < n; i++) {
        float *x = X + i * D;
        double ss = 0;
        for (int j = 0; j < D; j++) {
            x[j] = (float)((double)(mix(seed ^ (i * D + j) * 0x9e3779b97f4a7c15ull) >> 11) /
                               9007199254740992.0 - 0.5);
            ss += (double)x[j] * x[j];
        }
        float inv = (float)(1.0 / sqrt(ss));
        for (int j = 0; j < D; j++) x[j] *= inv;
    }
}

/* Plant a copy-like neighbour for every 1000th held-out row: S[s] = 0.9 q + noise. */
static void plant(const float *Q, size_t nq, float *S, size_t ns) {
    for (size_t q = 0, m = 0; q < nq; q += 1000, m++) {
        size_t s = (m * 7919) % ns;
        for (int j = 0; j < D; j++) S[s * D + j] = 0.95f * Q[q * D + j] + 0.3f * S[s * D + j];
        double ss = 0;
        for (int j = 0; j < D; j++) ss += (double)S[s * D + j] * S[s * D + j];
        for (int j = 0; j < D; j++) S[s * D + j] = (float)(S[s * D + j] / sqrt(ss));
    }
}

typedef struct simrun {
    double seconds, tflops;
    size_t pairs, cpu_rows, bq, bs;
} simrun;

static simrun sim_once(const float *Q, size_t nq, const float *S, size_t ns, int prec, size_t bq,
                       size_t bs) {
    la_simtile_params p;
    la_simtile_params_default(&p);
    p.threshold = 0.82f;
    p.topk = 1;
    la_cuda_simtile_opts o;
    la_cuda_simtile_opts_default(&o);
    o.precision = prec;
    o.block_q = bq;
    o.block_s = bs;
    uint32_t *ti = malloc(nq * sizeof *ti);
    float *tc = malloc(nq * sizeof *tc);
    la_simtile_top_init(ti, tc, nq, 1);
    la_simtile_hits hits = {0};
    la_cuda_simtile_stats cs = {0};
    double t0 = now_s();
    la_status s = la_cuda_simtile(Q, nq, S, ns, D, 0, &p, &o, &hits, ti, tc, NULL, &cs);
    double t = now_s() - t0;
    if (s != LA_OK) die("la_cuda_simtile", s);
    simrun r = {t, 2.0 * nq * ns * D / t / 1e12, hits.n, cs.cpu_rows, cs.block_q, cs.block_s};
    la_simtile_hits_free(&hits);
    free(ti);
    free(tc);
    return r;
}

static int bench_sim(size_t nq, size_t ns) {
    float *Q = malloc(nq * D * sizeof *Q), *S = malloc(ns * D * sizeof *S);
    if (!Q || !S) die("sim: host memory", LA_ENOMEM);
    fill_unit(Q, nq, 11);
    fill_unit(S, ns, 12);
    plant(Q, nq, S, ns);
    sim_once(Q, nq < 2048 ? nq : 2048, S, ns < 16384 ? ns : 16384, LA_GEMM_FP16, 0, 0); /* warm-up */
    static const size_t shapes[][2] = {{8192, 16384}, {4096, 32768}, {16384, 16384}};
    static const char *pname[] = {"fp16", "tf32"};
    static const int precs[] = {LA_GEMM_FP16, LA_GEMM_TF32};
    for (int pi = 0; pi < 2; pi++) {
        double best = 0;
        size_t bq = 0, bs = 0;
        for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++) {
            if (pi == 1 && si > 0) break; /* TF32: the default shape only */
            simrun r = sim_once(Q, nq, S, ns, precs[pi], shapes[si][0], shapes[si][1]);
            fprintf(stderr, "sim %s tiles %zux%zu: %.2f s, %.1f TFLOP/s, %zu pairs\n", pname[pi],
                    r.bq, r.bs, r.seconds, r.tflops, r.pairs);
            printf("RESULT sim.%s.tile_%zux%zu.tflops %.1f\n", pname[pi], r.bq, r.bs, r.tflops);
            if (r.tflops > best) best = r.tflops, bq = r.bq, bs = r.bs;
        }
        double ref_same = 0, ref_f32 = 0;
        la_status s = la_cuda_gemm_reference(bs, bq, D, precs[pi], 0, 20, 0, &ref_same);
        if (s != LA_OK) die("cublasGemmEx reference", s);
        if (precs[pi] == LA_GEMM_FP16) {
            s = la_cuda_gemm_reference(bs, bq, D, precs[pi], 1, 20, 0, &ref_f32);
            if (s != LA_OK) die("cublasGemmEx reference (fp32 out)", s);
        }
        fprintf(stderr, "sim %s: best %.1f TFLOP/s at %zux%zu; plain cublasGemmEx there %.1f TFLOP/s "
                "(%.0f%%)\n", pname[pi], best, bq, bs, ref_same, 100 * best / ref_same);
        printf("RESULT sim.%s.shape %zux%zux%d\n", pname[pi], nq, ns, D);
        printf("RESULT sim.%s.best_tile %zux%zu\n", pname[pi], bq, bs);
        printf("RESULT sim.%s.tflops %.1f\n", pname[pi], best);
        printf("RESULT sim.%s.gemm_reference_tflops %.1f\n", pname[pi], ref_same);
        printf("RESULT sim.%s.ratio_vs_gemm %.3f\n", pname[pi], best / ref_same);
        if (ref_f32 > 0) {
            printf("RESULT sim.%s.gemm_reference_fp32_out_tflops %.1f\n", pname[pi], ref_f32);
            printf("RESULT sim.%s.ratio_vs_gemm_fp32_out %.3f\n", pname[pi], best / ref_f32);
        }
    }
    free(Q);
    free(S);
    return 0;
}

static int bench_e2e(size_t nq, size_t ns, double budget) {
    double t0 = now_s();
    float *Q = malloc(nq * D * sizeof *Q), *S = malloc(ns * D * sizeof *S);
    if (!Q || !S) die("e2e: host memory", LA_ENOMEM);
    fill_unit(Q, nq, 21);
    fill_unit(S, ns, 22);
    plant(Q, nq, S, ns);
    fprintf(stderr, "e2e: %zu x %zu x %d synthetic vectors made in %.1f s\n", nq, ns, D, now_s() - t0);
    const size_t slice = 10000;
    double spent = 0, last = 0;
    size_t done = 0, pairs = 0, cpu_rows = 0;
    while (done < nq) {
        size_t m = nq - done < slice ? nq - done : slice;
        /* After the first slice: the rest in one call (as the pipeline runs it) when its projected
         * time fits the budget, else slice by slice while they fit. */
        if (done) {
            double rest = last * (double)(nq - done) / (double)slice;
            if (spent + rest * 1.1 <= budget)
                m = nq - done;
            else if (spent + last * 1.1 > budget)
                break;
        }
        simrun r = sim_once(Q + done * D, m, S, ns, LA_GEMM_FP16, 0, 0);
        spent += r.seconds;
        last = r.seconds;
        done += m;
        pairs += r.pairs;
        cpu_rows += r.cpu_rows;
        fprintf(stderr, "e2e: %zu / %zu held-out rows, %.1f s so far (%.1f TFLOP/s this slice)\n", done,
                nq, spent, r.tflops);
    }
    double total = spent * (double)nq / (double)done;
    printf("RESULT e2e.shape %zux%zux%d\n", nq, ns, D);
    printf("RESULT e2e.heldout_rows_measured %zu\n", done);
    printf("RESULT e2e.seconds_measured %.1f\n", spent);
    printf("RESULT e2e.seconds_%s %.1f\n", done == nq ? "total" : "extrapolated", total);
    printf("RESULT e2e.tflops %.1f\n", 2.0 * done * ns * D / spent / 1e12);
    printf("RESULT e2e.pairs_in_measured_rows %zu\n", pairs);
    printf("RESULT e2e.rows_recomputed_on_cpu %zu\n", cpu_rows);
    free(Q);
    free(S);
    return 0;
}

int main(int argc, char **argv) {
    int n = 0;
    la_status s = la_cuda_device_count(&n);
    if (s != LA_OK || n == 0) {
        printf("RESULT %s.skipped \"%s\"\n", argc > 1 ? argv[1] : "bench", la_last_error());
        fprintf(stderr, "bench_gpu: no device: %s\n", la_last_error());
        return 77;
    }
    const char *what = argc > 1 ? argv[1] : "";
    if (!strcmp(what, "minhash")) return bench_minhash(argc > 2 ? strtoull(argv[2], NULL, 10) : 1024);
    if (!strcmp(what, "sim"))
        return bench_sim(argc > 2 ? strtoull(argv[2], NULL, 10) : 16384,
                         argc > 3 ? strtoull(argv[3], NULL, 10) : 262144);
    if (!strcmp(what, "e2e"))
        return bench_e2e(argc > 2 ? strtoull(argv[2], NULL, 10) : 100000,
                         argc > 3 ? strtoull(argv[3], NULL, 10) : 1000000,
                         argc > 4 ? atof(argv[4]) : 240.0);
    fprintf(stderr, "usage: bench_gpu minhash [MB] | sim [NQ NS] | e2e [NQ NS BUDGET_S]\n");
    return 2;
}
