/*
 * parallel.h - a parallel loop over [0, total) in chunks, for the index stages that have no device
 * twin: workers take chunks in turn and write per-item results to fixed slots, so what a stage
 * computes does not depend on the thread count. Not for: work that must run in order.
 */
#ifndef LA_PARALLEL_H
#define LA_PARALLEL_H

#include <stdatomic.h>
#include <stddef.h>

#include "leakaudit.h"

/* fn(ctx, worker, begin, end) handles items [begin, end); worker is 0..nthreads-1 and indexes the
 * caller's per-worker scratch. A worker returns LA_OK or a failure, which stops the loop. */
typedef la_status (*la_parallel_fn)(void *ctx, int worker, size_t begin, size_t end);

/* Run fn over [0, total) in chunks of `chunk` items on up to nthreads threads (the caller's thread
 * among them). Returns the first failure, LA_EINTERNAL when no thread could start (never: the
 * caller's thread always runs), or LA_OK. */
la_status la_parallel_for(int nthreads, size_t total, size_t chunk, la_parallel_fn fn, void *ctx);

/* la_parallel_for with chunks that shrink as the loop goes: each takes 1/(2 x threads) of the items
 * not yet taken, at most `most` and at least `least` of them (with one thread, chunks of `least`).
 * Fewer chunks while much is left (a chunk's fixed cost paid less often), small ones at the end,
 * where they even the threads out; `most` bounds what a chunk's scratch grows to. */
la_status la_parallel_for_guided(int nthreads, size_t total, size_t least, size_t most, la_parallel_fn fn, void *ctx);

/* Wait until *done reaches target, from an item of a loop whose later items need its earlier ones
 * finished: the loop hands its items out in order, so those are under way on other threads by the
 * time a later one is handed out. It spins, yielding now and then should one of those threads be
 * preempted. The earlier items must not fail (a failed loop hands out no more items, but those
 * already taken run to their end). */
void la_parallel_wait(const atomic_size_t *done, size_t target);

/* A chunk size for `total` items of uneven cost on nthreads threads: at most `most`, small enough
 * that every thread takes several chunks (the last chunk taken, not the slowest thread, then sets
 * when the loop ends), at least 1. */
size_t la_parallel_grain(int nthreads, size_t total, size_t most);

/* Threads to use for a request of n (0: the online CPUs), at least 1 and at most 256. */
int la_parallel_threads(int n);

#endif /* LA_PARALLEL_H */
