/*
 * la_prefetch.h - a cache prefetch hint for loops whose reads go to random slots of large tables:
 * issued some iterations ahead, it lets their cache misses overlap. A hint only: it never changes
 * a result, and compilers without __builtin_prefetch get nothing. LA_PREFETCH_WRITE is for a slot
 * the loop will write.
 */
#ifndef LA_PREFETCH_H
#define LA_PREFETCH_H

#if defined(__GNUC__) || defined(__clang__)
#define LA_PREFETCH(p) __builtin_prefetch(p)
#define LA_PREFETCH_WRITE(p) __builtin_prefetch((p), 1)
#else
#define LA_PREFETCH(p) ((void)(p))
#define LA_PREFETCH_WRITE(p) ((void)(p))
#endif

#endif /* LA_PREFETCH_H */
