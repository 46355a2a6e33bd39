/* parallel.c - the chunked parallel loop (see parallel.h). */
#include "parallel.h"
#include "la_cpus.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

enum { MAX_THREADS = 256 };

typedef struct pool {
    la_parallel_fn fn;
    void *ctx;
    size_t total, chunk;
    atomic_size_t next;
    atomic_int failed;
    la_status first;         /* the first failure, and its message (from the worker that set the flag) */
    char message[1024];
    atomic_flag failure_set;
} pool;

typedef struct worker_arg {
    pool *p;
    int id;
} worker_arg;

static void *run_worker(void *arg)
{
    worker_arg *w = arg;
    pool *p = w->p;
    while (!atomic_load(&p->failed)) {
        size_t b = atomic_fetch_add(&p->next, p->chunk);
        if (b >= p->total) break;
        size_t e = p->total - b > p->chunk ? b + p->chunk : p->total;
        la_status s = p->fn(p->ctx, w->id, b, e);
        if (s != LA_OK) {
            /* the message is in this thread's error slot: hand it to the caller's */
            if (!atomic_flag_test_and_set(&p->failure_set)) {
                p->first = s;
                snprintf(p->message, sizeof p->message, "%s", la_last_error());
            }
            atomic_store(&p->failed, 1);
        }
    }
    return NULL;
}

int la_parallel_threads(int n)
{
    if (n <= 0) n = la_cpu_count();
    return n > MAX_THREADS ? MAX_THREADS : n;
}

/* Chunks per thread la_parallel_grain aims at. */
enum { GRAIN_CHUNKS_PER_THREAD = 16 };

size_t la_parallel_grain(int nthreads, size_t total, size_t most)
{
    size_t nt = (size_t)la_parallel_threads(nthreads);
    if (nt <= 1) return most ? most : 1;
    size_t g = total / (nt * GRAIN_CHUNKS_PER_THREAD);
    if (g > most) g = most;
    return g ? g : 1;
}

la_status la_parallel_for(int nthreads, size_t total, size_t chunk, la_parallel_fn fn, void *ctx)
{
    static pool zero;
    pool p = zero;
    p.fn = fn;
    p.ctx = ctx;
    p.total = total;
    p.chunk = chunk ? chunk : 1;
    p.first = LA_OK;
    atomic_flag_clear(&p.failure_set);
    size_t chunks = (total + p.chunk - 1) / p.chunk;
    int nt = la_parallel_threads(nthreads);
    if ((size_t)nt > chunks) nt = chunks ? (int)chunks : 1;
    pthread_t tid[MAX_THREADS];
    worker_arg args[MAX_THREADS];
    int started = 0;
    for (int i = 1; i < nt; i++) {
        args[i] = (worker_arg){&p, i};
        if (pthread_create(&tid[i], NULL, run_worker, &args[i]) != 0) break;
        started = i;
    }
    args[0] = (worker_arg){&p, 0};
    run_worker(&args[0]);
    for (int i = 1; i <= started; i++) pthread_join(tid[i], NULL);
    if (atomic_load(&p.failed)) return *p.message ? la_error(p.first, "%s", p.message) : p.first;
    return LA_OK;
}
