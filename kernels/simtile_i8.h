/*
 * simtile_i8.h - the CPU tiles' fast path on int8 dot products (AVX-512 VNNI, or AVX2 where the
 * CPU has no VNNI), with a bound on their error that decides what the exact fp32 re-score must look
 * at.
 *
 * Each vector is scaled so that its largest |component| is 127 (a held-out vector's is 63 for the
 * AVX2 kernel) and rounded: x = q / a + e with |e_k| <= 0.5 / a (a = 127 / max|x_k|, or 63 / ...),
 * the same for y = s / b + f. Then
 *   x . y - (q . s) / (a b) = (q / a) . f + e . (s / b) + e . f,
 *   |x . y - (q . s) / (a b)| <= (0.5 sum|q| + 0.5 sum|s| + 0.25 d) / (a b),
 * exactly, for any vectors. With r = 1 / a and t = 1 / b as stored, e = x - q r and f = y - s t,
 *   x . y - (q . s) r t = e . (s t) + (q r) . f + e . f,
 *   |x . y - (q . s) r t| <= |e| |s t| + |q r| |f| + |e| |f|     (Cauchy-Schwarz, Euclidean norms),
 * which is a quarter smaller on dense rows (their errors are spread, not each at its worst). The
 * scan takes the smaller of the two bounds per entry. The integer products q . s are exact (int32;
 * d <= 65536). A tile entry is a candidate when its approximation plus that bound reaches the row's
 * floor, so every pair the
 * fp32 path would look at is looked at, and the re-score (simtile_core.h) gives the same pairs and
 * top-k lists on either path. The bound is small for dense vectors (on lexical embeddings of the
 * generator's rows: max |x_k| about 0.18, sum |x_k| about 18.5, bound about 0.027).
 *
 * Host only, x86-64, the kernel checked at run time (la_simtile_i8_kernel): AVX-512 F/BW/VNNI, else
 * AVX2; other machines keep the sgemm path. LEAKAUDIT_NO_INT8 (any value) keeps the sgemm path, and
 * LEAKAUDIT_INT8=avx2 takes the AVX2 kernel on a VNNI machine (tests and benchmarks of both). Not a
 * public header.
 */
#ifndef LA_SIMTILE_I8_H
#define LA_SIMTILE_I8_H

#include <stddef.h>
#include <stdint.h>

/* Rows a panel of the packed seen side holds, and Q rows per step of the AVX2 micro-kernel (the
 * VNNI one takes 8). */
#define LA_I8_NR 16
#define LA_I8_MR 4

/* One side quantized: rows of dp bytes (d rounded up to 4). Q keeps plain signed rows; S is packed
 * in panels of LA_I8_NR rows, 4 bytes of each row per 64-byte group, stored as s + 128. */
typedef struct la_i8_side {
    size_t n, d, dp;
    uint8_t *data;        /* Q: n * dp int8 (as bytes); S: panels * LA_I8_NR * dp */
    float *inv_scale;     /* per row: 1 / a (0 for a zero row) */
    float *half_l1;       /* per row: 0.5 sum |q| (for Q: plus 0.25 d) */
    float *norm;          /* per row: |q r|, the dequantized row's Euclidean norm, rounded up */
    float *err;           /* per row: |x - q r|, its rounding error's norm, rounded up */
    int32_t *sum;         /* per Q row: sum q (the + 128 of the S bytes is taken back with it) */
    int kernel;           /* Q: the LA_I8_* kernel la_i8_tile runs, chosen when it was quantized */
} la_i8_side;

/* The int8 kernels. */
enum { LA_I8_NONE = 0, LA_I8_AVX2 = 1, LA_I8_VNNI = 2 };

/* The kernel this CPU runs for vectors of d components (LA_I8_NONE: the sgemm path), after the
 * environment variables above. */
int la_simtile_i8_kernel(size_t d);

/* 1 when this CPU runs the int8 path and the vectors' d allows it. */
int la_simtile_i8_available(size_t d);

/* "int8 AVX-512 VNNI", "int8 AVX2" or "sgemm": static strings, for reports and benchmarks. */
const char *la_simtile_i8_kernel_name(int kernel);

/* Quantize Q (rows n x d) or S on `threads` OpenMP threads (0: the OpenMP default; the same bytes
 * for any count); 0 on success, -1 when out of memory. Free with la_i8_side_free. */
int la_i8_quantize_q(const float *Q, size_t n, size_t d, int threads, la_i8_side *out);
int la_i8_quantize_s(const float *S, size_t n, size_t d, int threads, la_i8_side *out);
void la_i8_side_free(la_i8_side *s);

/* C[i * ldc + j] = q_(q0 + i) . s_(s0 + j) (exact integers) for i < mq, j < ms; s0 a multiple of
 * LA_I8_NR, ldc >= ms rounded up to LA_I8_NR. */
void la_i8_tile(const la_i8_side *Q, size_t q0, size_t mq, const la_i8_side *S, size_t s0, size_t ms, int32_t *C,
                size_t ldc);

#endif /* LA_SIMTILE_I8_H */
