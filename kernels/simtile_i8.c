/*
 * simtile_i8.c - int8 quantization and the tile products of the int8 path (see simtile_i8.h).
 *
 * Two micro-kernels over the same packed seen side, chosen once per call by the CPU:
 * - AVX-512 VNNI: 8 held-out rows by 2 panels (32 seen rows) over the whole depth, the two panels
 *   against every row of the block: per group of 4 bytes, 2 panel loads, 8 broadcasts and 16
 *   vpdpbusd (unsigned S bytes times signed Q bytes, summed into 16 int32 lanes). Zero bytes
 *   (stored as 128) pad a partial panel, and the kernel takes 128 sum q back from every entry.
 * - AVX2 (no VNNI: AMD Zen 2 and 3, Intel before Ice Lake): LA_I8_MR rows by one panel, panel by
 *   panel against every row of the block. vpmaddubsw multiplies the same S bytes by Q bytes in
 *   pairs summed into 16 bits, then vpmaddwd by 1 widens them into the same 32-bit lanes. The Q
 *   side is quantized to |q| <= 63 for this kernel, so a pair sums to at most 2 x 255 x 63 = 32130
 *   and never saturates (127 would); the bound of simtile_i8.h takes the coarser scale as it is.
 *   (Keeping 127 with vpsignb on the S bytes was measured too: a third more instructions per
 *   product, and no faster than sgemm on Zen 3.)
 * Zero rows pad a partial Q block. Both give the exact integer products.
 */
#include "simtile_i8.h"
#include "la_cpus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows a thread quantizes at a time (a multiple of LA_I8_NR: whole panels). */
#define QUANTIZE_ROWS 256

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LA_I8_X86 1
#endif

int la_simtile_i8_kernel(size_t d)
{
#ifdef LA_I8_X86
    if (d == 0 || d > 65536 || getenv("LEAKAUDIT_NO_INT8")) return LA_I8_NONE;
    __builtin_cpu_init();
    const char *want = getenv("LEAKAUDIT_INT8");
    int avx2_only = want && strcmp(want, "avx2") == 0;
    if (!avx2_only && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vnni"))
        return LA_I8_VNNI;
    return __builtin_cpu_supports("avx2") ? LA_I8_AVX2 : LA_I8_NONE;
#else
    (void)d;
    return LA_I8_NONE;
#endif
}

int la_simtile_i8_available(size_t d)
{
    return la_simtile_i8_kernel(d) != LA_I8_NONE;
}

const char *la_simtile_i8_kernel_name(int kernel)
{
    switch (kernel) {
    case LA_I8_VNNI: return "int8 AVX-512 VNNI";
    case LA_I8_AVX2: return "int8 AVX2";
    default: return "sgemm";
    }
}

void la_i8_side_free(la_i8_side *s)
{
    if (!s) return;
    free(s->data);
    free(s->inv_scale);
    free(s->half_l1);
    free(s->norm);
    free(s->err);
    free(s->sum);
    memset(s, 0, sizeof *s);
}

/* Row x's scale a = qmax / max |x_k| and its quantized values (0 for a zero row). */
static float quantize_row(const float *x, size_t d, int qmax, int8_t *q)
{
    float mx = 0.0f;
    for (size_t k = 0; k < d; k++) {
        float ax = fabsf(x[k]);
        mx = ax > mx ? ax : mx;
    }
    if (!(mx > 0.0f)) {
        memset(q, 0, d);
        return 0.0f;
    }
    float a = (float)qmax / mx;
    for (size_t k = 0; k < d; k++) {
        /* to the nearest integer, halves away from zero (any rounding to nearest keeps |e| <= 0.5) */
        float v = x[k] * a;
        int r = (int)(v + (v >= 0.0f ? 0.5f : -0.5f));
        q[k] = (int8_t)(r > qmax ? qmax : r < -qmax ? -qmax : r);
    }
    return a;
}

/* A float at least v (v >= 0): the norms of the bound are rounded up, never down. */
static float up(double v)
{
    float f = (float)v;
    return (double)f < v ? nextafterf(f, INFINITY) : f;
}

/* Row i's norm and err (simtile_i8.h) from the row x, its quantized values q and r = 1 / a as
 * stored. */
static void norms_of(la_i8_side *o, size_t i, const float *x, const int8_t *q, size_t d)
{
    const double r = o->inv_scale[i];
    double nn = 0.0, ee = 0.0;
    for (size_t k = 0; k < d; k++) {
        double v = (double)q[k] * r, e = (double)x[k] - v;
        nn += v * v;
        ee += e * e;
    }
    o->norm[i] = up(sqrt(nn));
    o->err[i] = up(sqrt(ee));
}

static int alloc_side(la_i8_side *o, size_t n, size_t d, size_t rows, int with_sum)
{
    memset(o, 0, sizeof *o);
    o->n = n;
    o->d = d;
    o->dp = (d + 3) & ~(size_t)3;
    o->data = calloc(rows ? rows : 1, o->dp);
    o->inv_scale = malloc((n ? n : 1) * sizeof *o->inv_scale);
    o->half_l1 = malloc((n ? n : 1) * sizeof *o->half_l1);
    o->norm = malloc((n ? n : 1) * sizeof *o->norm);
    o->err = malloc((n ? n : 1) * sizeof *o->err);
    o->sum = with_sum ? malloc((n ? n : 1) * sizeof *o->sum) : NULL;
    if (!o->data || !o->inv_scale || !o->half_l1 || !o->norm || !o->err || (with_sum && !o->sum)) {
        la_i8_side_free(o);
        return -1;
    }
    return 0;
}

#ifdef LA_HAVE_OPENMP
/* OpenMP threads for a quantization loop over n rows (one when there are few). */
static int quantize_threads(int threads, size_t n)
{
    return n < 4 * QUANTIZE_ROWS ? 1 : la_omp_threads(threads);
}
#endif

int la_i8_quantize_q(const float *Q, size_t n, size_t d, int threads, la_i8_side *out)
{
    if (alloc_side(out, n, d, n, 1)) return -1;
    out->kernel = la_simtile_i8_kernel(d);
    /* AVX2 multiplies S bytes (up to 255) by Q bytes in pairs summed into 16 bits: |q| <= 63 keeps
     * a pair's sum at most 2 x 255 x 63 = 32130, below the saturation of vpmaddubsw */
    const int qmax = out->kernel == LA_I8_AVX2 ? 63 : 127;
#ifdef LA_HAVE_OPENMP
    const int nt = quantize_threads(threads, n);
#pragma omp parallel for num_threads(nt) schedule(static, QUANTIZE_ROWS)
#else
    (void)threads;
#endif
    for (size_t i = 0; i < n; i++) {
        int8_t *q = (int8_t *)out->data + i * out->dp;
        float a = quantize_row(Q + i * d, d, qmax, q);
        int32_t sum = 0, l1 = 0;
        for (size_t k = 0; k < d; k++) sum += q[k], l1 += q[k] < 0 ? -q[k] : q[k];
        out->inv_scale[i] = a > 0.0f ? 1.0f / a : 0.0f;
        out->half_l1[i] = 0.5f * (float)l1 + 0.25f * (float)d;
        out->sum[i] = sum;
        norms_of(out, i, Q + i * d, q, d);
    }
    return 0;
}

/* Panel p of the seen side: its bytes set to 128 (0, for padding), then its rows quantized and
 * scattered into it; q is scratch for one row. */
static void quantize_panel(const float *S, size_t n, size_t d, size_t p, int8_t *q, la_i8_side *out)
{
    const size_t dp = out->dp;
    uint8_t *panel = out->data + p * LA_I8_NR * dp;
    memset(panel, 128, LA_I8_NR * dp);
    for (size_t j = p * LA_I8_NR; j < n && j < (p + 1) * LA_I8_NR; j++) {
        float a = quantize_row(S + j * d, d, 127, q);
        int32_t l1 = 0;
        size_t lane = j % LA_I8_NR;
        for (size_t k = 0; k < d; k++) {
            panel[(k / 4) * (4 * LA_I8_NR) + lane * 4 + k % 4] = (uint8_t)(q[k] + 128);
            l1 += q[k] < 0 ? -q[k] : q[k];
        }
        out->inv_scale[j] = a > 0.0f ? 1.0f / a : 0.0f;
        out->half_l1[j] = 0.5f * (float)l1;
        norms_of(out, j, S + j * d, q, d);
    }
}

int la_i8_quantize_s(const float *S, size_t n, size_t d, int threads, la_i8_side *out)
{
    size_t panels = (n + LA_I8_NR - 1) / LA_I8_NR;
    if (alloc_side(out, n, d, panels * LA_I8_NR, 0)) return -1;
    int failed = 0;
#ifdef LA_HAVE_OPENMP
    const int nt = quantize_threads(threads, n);
#pragma omp parallel num_threads(nt)
#else
    (void)threads;
#endif
    {
        int8_t *q = malloc(d ? d : 1); /* one row, before it is scattered into its panel */
        if (!q) {
#ifdef LA_HAVE_OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef LA_HAVE_OPENMP
#pragma omp for schedule(static, QUANTIZE_ROWS / LA_I8_NR)
#endif
        for (size_t p = 0; p < panels; p++)
            if (q) quantize_panel(S, n, d, p, q, out);
        free(q);
    }
    if (failed) {
        la_i8_side_free(out);
        return -1;
    }
    return 0;
}

/* The portable product, for a CPU with neither kernel (a caller that quantized anyway). */
static void tile_ref(const la_i8_side *Q, size_t q0, size_t mq, const la_i8_side *S, size_t s0, size_t ms, int32_t *C,
                     size_t ldc)
{
    for (size_t i = 0; i < mq; i++)
        for (size_t j = 0; j < ms; j++) {
            const int8_t *q = (const int8_t *)Q->data + (q0 + i) * Q->dp;
            const uint8_t *panel = S->data + ((s0 + j) / LA_I8_NR) * LA_I8_NR * S->dp;
            int32_t acc = 0;
            for (size_t k = 0; k < Q->dp; k++)
                acc += q[k] * ((int32_t)panel[(k / 4) * (4 * LA_I8_NR) + ((s0 + j) % LA_I8_NR) * 4 + k % 4] - 128);
            C[i * ldc + j] = acc;
        }
}

#ifdef LA_I8_X86
/* Rows of zeros for a partial block of Q rows (d <= 65536). */
static const int8_t zero_row[65536];

/* Q rows per VNNI micro-kernel: 8 rows by 2 panels are 16 accumulators. */
enum { VNNI_MR = 8 };

/* One Q row's 4 bytes of group g broadcast, times both panel registers, into the row's two
 * accumulators. */
#define LA_I8_VNNI_ROW(qr, a0, a1)                                  \
    do {                                                            \
        int32_t w_;                                                 \
        memcpy(&w_, (qr) + 4 * g, 4);                               \
        __m512i b_ = _mm512_set1_epi32(w_);                         \
        a0 = _mm512_dpbusd_epi32(a0, s0, b_);                       \
        a1 = _mm512_dpbusd_epi32(a1, s1, b_);                       \
    } while (0)

/* VNNI_MR Q rows by 2 panels (32 seen rows) over the whole depth; the accumulators are named so
 * that they stay in registers (an array of them was shuffled between registers and the stack). */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void
kernel_8x32(const int8_t *const q[VNNI_MR], const uint8_t *p, size_t panel_bytes, size_t groups, __m512i acc[VNNI_MR][2])
{
    __m512i a00 = _mm512_setzero_si512(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00,
            a31 = a00, a40 = a00, a41 = a00, a50 = a00, a51 = a00, a60 = a00, a61 = a00, a70 = a00, a71 = a00;
    const int8_t *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3], *q4 = q[4], *q5 = q[5], *q6 = q[6], *q7 = q[7];
    const uint8_t *p1 = p + panel_bytes;
    for (size_t g = 0; g < groups; g++) {
        __m512i s0 = _mm512_loadu_si512((const void *)(p + g * 64));
        __m512i s1 = _mm512_loadu_si512((const void *)(p1 + g * 64));
        LA_I8_VNNI_ROW(q0, a00, a01);
        LA_I8_VNNI_ROW(q1, a10, a11);
        LA_I8_VNNI_ROW(q2, a20, a21);
        LA_I8_VNNI_ROW(q3, a30, a31);
        LA_I8_VNNI_ROW(q4, a40, a41);
        LA_I8_VNNI_ROW(q5, a50, a51);
        LA_I8_VNNI_ROW(q6, a60, a61);
        LA_I8_VNNI_ROW(q7, a70, a71);
    }
    acc[0][0] = a00, acc[0][1] = a01, acc[1][0] = a10, acc[1][1] = a11;
    acc[2][0] = a20, acc[2][1] = a21, acc[3][0] = a30, acc[3][1] = a31;
    acc[4][0] = a40, acc[4][1] = a41, acc[5][0] = a50, acc[5][1] = a51;
    acc[6][0] = a60, acc[6][1] = a61, acc[7][0] = a70, acc[7][1] = a71;
}

/* VNNI_MR Q rows by one panel (16 seen rows): the last panel of an odd count. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void
kernel_8x16(const int8_t *const q[VNNI_MR], const uint8_t *p, size_t groups, __m512i acc[VNNI_MR])
{
    for (int r = 0; r < VNNI_MR; r++) acc[r] = _mm512_setzero_si512();
    for (size_t g = 0; g < groups; g++) {
        __m512i s0 = _mm512_loadu_si512((const void *)(p + g * 64));
        for (int r = 0; r < VNNI_MR; r++) {
            int32_t w;
            memcpy(&w, q[r] + 4 * g, 4);
            acc[r] = _mm512_dpbusd_epi32(acc[r], s0, _mm512_set1_epi32(w));
        }
    }
}

/* Two panels at a time (32 KB at d = 1024, held by the first-level cache) against every Q row of the
 * block, which the second level holds: the Q rows stream 32 bytes per 1,024 products. (Q rows outer,
 * every panel of the tile inner, streamed the 2 MB seen block from the third level for every 4 rows:
 * a third of the speed.) */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void
tile_vnni(const la_i8_side *Q, size_t q0, size_t mq, const la_i8_side *S, size_t s0, size_t ms, int32_t *C, size_t ldc)
{
    const size_t dp = Q->dp, groups = dp / 4, panel_bytes = LA_I8_NR * dp;
    const uint8_t *base = S->data + (s0 / LA_I8_NR) * panel_bytes;
    size_t npanels = (ms + LA_I8_NR - 1) / LA_I8_NR;
    for (size_t pn = 0; pn < npanels; pn += 2) {
        int two = pn + 1 < npanels;
        for (size_t i = 0; i < mq; i += VNNI_MR) {
            const int8_t *q[VNNI_MR];
            int32_t corr[VNNI_MR];
            size_t rows = mq - i < VNNI_MR ? mq - i : VNNI_MR;
            for (size_t r = 0; r < VNNI_MR; r++) {
                q[r] = r < rows ? (const int8_t *)Q->data + (q0 + i + r) * dp : zero_row;
                corr[r] = r < rows ? 128 * Q->sum[q0 + i + r] : 0;
            }
            int32_t *c = C + i * ldc + pn * LA_I8_NR;
            if (two) {
                __m512i acc[VNNI_MR][2];
                kernel_8x32(q, base + pn * panel_bytes, panel_bytes, groups, acc);
                for (size_t r = 0; r < rows; r++) {
                    __m512i k = _mm512_set1_epi32(corr[r]);
                    _mm512_storeu_si512((void *)(c + r * ldc), _mm512_sub_epi32(acc[r][0], k));
                    _mm512_storeu_si512((void *)(c + r * ldc + LA_I8_NR), _mm512_sub_epi32(acc[r][1], k));
                }
            } else {
                __m512i acc[VNNI_MR];
                kernel_8x16(q, base + pn * panel_bytes, groups, acc);
                for (size_t r = 0; r < rows; r++)
                    _mm512_storeu_si512((void *)(c + r * ldc), _mm512_sub_epi32(acc[r], _mm512_set1_epi32(corr[r])));
            }
        }
    }
}

/* One Q byte group (4 bytes broadcast in b, |q| <= 63) times the two registers of a panel group
 * (s0, s1: s + 128), added into the row's two accumulators: what one vpdpbusd does, in two steps. */
#define LA_I8_AVX2_ROW(b, acc0, acc1)                                                          \
    do {                                                                                       \
        acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(_mm256_maddubs_epi16(s0, b), ones));    \
        acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(_mm256_maddubs_epi16(s1, b), ones));    \
    } while (0)

/* LA_I8_MR (4) Q rows by one panel (16 seen rows, two registers of 8) over the whole depth; the
 * accumulators are named so that they stay in registers. */
__attribute__((target("avx2"))) static void
kernel_avx2_4x16(const int8_t *const q[LA_I8_MR], const uint8_t *p, size_t groups, __m256i acc[LA_I8_MR][2])
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00,
            a31 = a00;
    const int8_t *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];
    for (size_t g = 0; g < groups; g++) {
        __m256i s0 = _mm256_loadu_si256((const __m256i *)(p + g * 64));
        __m256i s1 = _mm256_loadu_si256((const __m256i *)(p + g * 64 + 32));
        int32_t w0, w1, w2, w3;
        memcpy(&w0, q0 + 4 * g, 4);
        memcpy(&w1, q1 + 4 * g, 4);
        memcpy(&w2, q2 + 4 * g, 4);
        memcpy(&w3, q3 + 4 * g, 4);
        __m256i b0 = _mm256_set1_epi32(w0), b1 = _mm256_set1_epi32(w1), b2 = _mm256_set1_epi32(w2),
                b3 = _mm256_set1_epi32(w3);
        LA_I8_AVX2_ROW(b0, a00, a01);
        LA_I8_AVX2_ROW(b1, a10, a11);
        LA_I8_AVX2_ROW(b2, a20, a21);
        LA_I8_AVX2_ROW(b3, a30, a31);
    }
    acc[0][0] = a00, acc[0][1] = a01, acc[1][0] = a10, acc[1][1] = a11;
    acc[2][0] = a20, acc[2][1] = a21, acc[3][0] = a30, acc[3][1] = a31;
}

/* Panel by panel (16 KB at d = 1024, kept in the first-level cache) against every Q row of the
 * block, which the second level holds: the rows stream 16 bytes per 256 products, not the panels. */
__attribute__((target("avx2"))) static void
tile_avx2(const la_i8_side *Q, size_t q0, size_t mq, const la_i8_side *S, size_t s0, size_t ms, int32_t *C, size_t ldc)
{
    const size_t dp = Q->dp, groups = dp / 4, panel_bytes = LA_I8_NR * dp;
    const uint8_t *base = S->data + (s0 / LA_I8_NR) * panel_bytes;
    size_t npanels = (ms + LA_I8_NR - 1) / LA_I8_NR;
    for (size_t pn = 0; pn < npanels; pn++)
        for (size_t i = 0; i < mq; i += LA_I8_MR) {
            const int8_t *q[LA_I8_MR];
            size_t rows = mq - i < LA_I8_MR ? mq - i : LA_I8_MR;
            for (size_t r = 0; r < LA_I8_MR; r++)
                q[r] = r < rows ? (const int8_t *)Q->data + (q0 + i + r) * dp : zero_row;
            __m256i acc[LA_I8_MR][2];
            kernel_avx2_4x16(q, base + pn * panel_bytes, groups, acc);
            for (size_t r = 0; r < rows; r++) {
                __m256i corr = _mm256_set1_epi32(128 * Q->sum[q0 + i + r]);
                int32_t *c = C + (i + r) * ldc + pn * LA_I8_NR;
                _mm256_storeu_si256((__m256i *)c, _mm256_sub_epi32(acc[r][0], corr));
                _mm256_storeu_si256((__m256i *)(c + 8), _mm256_sub_epi32(acc[r][1], corr));
            }
        }
}
#endif

void la_i8_tile(const la_i8_side *Q, size_t q0, size_t mq, const la_i8_side *S, size_t s0, size_t ms, int32_t *C,
                size_t ldc)
{
#ifdef LA_I8_X86
    if (Q->kernel == LA_I8_VNNI) {
        tile_vnni(Q, q0, mq, S, s0, ms, C, ldc);
        return;
    }
    if (Q->kernel == LA_I8_AVX2) {
        tile_avx2(Q, q0, mq, S, s0, ms, C, ldc);
        return;
    }
#endif
    tile_ref(Q, q0, mq, S, s0, ms, C, ldc);
}
