/*
 * la_hd.h - the marker for per-element math shared by the CPU loops (*.c) and the CUDA kernels (*.cu).
 * Functions in kernels/ *_core.h are `static inline` and marked LA_HD, so nvcc compiles them for the
 * host and the device from one source and both backends produce bit-identical integers.
 */
#ifndef LA_HD_H
#define LA_HD_H

#if defined(__CUDACC__)
#define LA_HD __host__ __device__
#else
#define LA_HD
#endif

#endif /* LA_HD_H */
