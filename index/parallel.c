/* parallel.c - the chunked parallel loop (see parallel.h). */
#include "parallel.h"
#include "la_cpus.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

enum { MAX_THREADS = 256 };

typedef struct pool {
    la_parallel_fn fn;
    void *ctx;
    size_t total, chunk;
    size_t share;            /* guided: a chunk takes 1/share of the items left, from `chunk` to `most`; 0: fixed */
    size_t most;
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

/* The next chunk [*b, *e); 0 when none is left. */
static int take(pool *p, size_t *b, size_t *e)
{
    if (!p->share) {
        *b = atomic_fetch_add(&p->next, p->chunk);
        if (*b >= p->total) return 0;
        *e = p->total - *b > p->chunk ? *b + p->chunk : p->total;
        return 1;
    }
    size_t at = atomic_load_explicit(&p->next, memory_order_relaxed);
    for (;;) {
        if (at >= p->total) return 0;
        size_t left = p->total - at, n = left / p->share;
        if (n > p->most) n = p->most;
        if (n < p->chunk) n = p->chunk;
        if (n > left) n = left;
        if (atomic_compare_exchange_weak_explicit(&p->next, &at, at + n, memory_order_relaxed, memory_order_relaxed)) {
            *b = at;
            *e = at + n;
            return 1;
        }
    }
}

static void *run_worker(void *arg)
{
    worker_arg *w = arg;
    pool *p = w->p;
    size_t b, e;
    while (!atomic_load(&p->failed) && take(p, &b, &e)) {
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

/*
 * The team: worker threads started once and kept, each waiting for the next loop, so that a loop
 * costs a wake-up instead of a thread's creation and join (about 50 us a loop on a 2-CPU virtual
 * machine, and an audit runs some 150 loops). A waiting worker spins a little before it sleeps,
 * when the team fits the CPUs: most loops follow the one before within microseconds, and a
 * sleeping CPU of a virtual machine takes long to wake. One loop runs on the team at a time; a loop
 * started while it is busy (a loop inside a loop's item, or on another thread) starts threads of
 * its own, as every loop did before. A forked child starts with no team.
 */
typedef struct team {
    pthread_mutex_t busy;    /* held by the caller whose loop runs on the team */
    pthread_mutex_t m;       /* with the conditions: sleeping and waking */
    pthread_cond_t start, done;
    int nworkers;            /* workers started, ids 1 .. nworkers */
    atomic_int spin;         /* the team fits the CPUs: waits spin before they sleep */
    atomic_uint gen;         /* the loop's number: a worker runs each new one */
    pool *job;
    int job_nt;              /* workers 1 .. job_nt - 1 take part */
    atomic_int active;       /* workers still on the loop */
    unsigned born[MAX_THREADS]; /* each worker's loop number when it was started */
} team;

static team g_team = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                      PTHREAD_COND_INITIALIZER, 0, 0, 0, NULL, 0, 0, {0}};

/* Iterations of a wait's spin: about 100 us. */
enum { SPIN = 2000 };

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void la_parallel_wait(const atomic_size_t *done, size_t target)
{
    for (unsigned spin = 1; atomic_load_explicit(done, memory_order_acquire) < target; spin++) {
        relax();
        if (spin % 1024 == 0) sched_yield();
    }
}

static void *team_worker(void *arg)
{
    team *t = &g_team;
    /* its id, and the loop number when it was started: it takes every loop after that one, even
     * one begun before it first looked */
    int id = (int)(intptr_t)arg;
    unsigned seen = t->born[id];
    for (;;) {
        unsigned g = seen;
        int spin = atomic_load_explicit(&t->spin, memory_order_relaxed);
        for (int i = 0; spin && i < SPIN && g == seen; i++) {
            relax();
            g = atomic_load_explicit(&t->gen, memory_order_acquire);
        }
        if (g == seen) {
            pthread_mutex_lock(&t->m);
            while ((g = atomic_load_explicit(&t->gen, memory_order_acquire)) == seen) pthread_cond_wait(&t->start, &t->m);
            pthread_mutex_unlock(&t->m);
        }
        seen = g;
        if (id < t->job_nt) {
            worker_arg w = {t->job, id};
            run_worker(&w);
        }
        if (atomic_fetch_sub_explicit(&t->active, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&t->m);
            pthread_cond_signal(&t->done);
            pthread_mutex_unlock(&t->m);
        }
    }
    return NULL;
}

static void team_after_fork(void)
{
    team fresh = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                  PTHREAD_COND_INITIALIZER, 0, 0, 0, NULL, 0, 0, {0}};
    g_team = fresh;
}

static pthread_once_t team_once = PTHREAD_ONCE_INIT;
static void team_init(void) { pthread_atfork(NULL, NULL, team_after_fork); }

/* p on the team with nt threads, the caller's among them (t->busy held): workers started up to
 * nt - 1 as needed; returns 0 when none could start (the caller then runs p alone). */
static int team_run(team *t, pool *p, int nt)
{
    while (t->nworkers < nt - 1) {
        pthread_t th;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        t->born[t->nworkers + 1] = atomic_load_explicit(&t->gen, memory_order_relaxed);
        int ok = pthread_create(&th, &a, team_worker, (void *)(intptr_t)(t->nworkers + 1)) == 0;
        pthread_attr_destroy(&a);
        if (!ok) break;
        t->nworkers++;
    }
    if (!t->nworkers) return 0;
    if (nt > t->nworkers + 1) nt = t->nworkers + 1;
    int spin = t->nworkers + 1 <= la_cpu_count();
    atomic_store_explicit(&t->spin, spin, memory_order_relaxed);
    t->job = p;
    t->job_nt = nt;
    atomic_store_explicit(&t->active, t->nworkers, memory_order_relaxed);
    pthread_mutex_lock(&t->m);
    atomic_fetch_add_explicit(&t->gen, 1, memory_order_release);
    pthread_cond_broadcast(&t->start);
    pthread_mutex_unlock(&t->m);
    worker_arg self = {p, 0};
    run_worker(&self);
    for (int i = 0; spin && i < SPIN && atomic_load_explicit(&t->active, memory_order_acquire); i++) relax();
    if (atomic_load_explicit(&t->active, memory_order_acquire)) {
        pthread_mutex_lock(&t->m);
        while (atomic_load_explicit(&t->active, memory_order_acquire)) pthread_cond_wait(&t->done, &t->m);
        pthread_mutex_unlock(&t->m);
    }
    return 1;
}

static la_status loop(int nthreads, size_t total, size_t chunk, size_t most, int guided, la_parallel_fn fn, void *ctx)
{
    static pool zero;
    pool p = zero;
    p.fn = fn;
    p.ctx = ctx;
    p.total = total;
    p.chunk = chunk ? chunk : 1;
    p.share = guided && la_parallel_threads(nthreads) > 1 ? 2 * (size_t)la_parallel_threads(nthreads) : 0;
    p.most = most;
    p.first = LA_OK;
    atomic_flag_clear(&p.failure_set);
    size_t chunks = (total + p.chunk - 1) / p.chunk;
    int nt = la_parallel_threads(nthreads);
    if ((size_t)nt > chunks) nt = chunks ? (int)chunks : 1;
    int ran = 0;
    if (nt > 1) {
        pthread_once(&team_once, team_init);
        if (pthread_mutex_trylock(&g_team.busy) == 0) {
            ran = team_run(&g_team, &p, nt);
            pthread_mutex_unlock(&g_team.busy);
        }
    }
    if (!ran) {
        /* one thread, or the team busy with another loop: threads of its own */
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
    }
    if (atomic_load(&p.failed)) return *p.message ? la_error(p.first, "%s", p.message) : p.first;
    return LA_OK;
}

la_status la_parallel_for(int nthreads, size_t total, size_t chunk, la_parallel_fn fn, void *ctx)
{
    return loop(nthreads, total, chunk, 0, 0, fn, ctx);
}

la_status la_parallel_for_guided(int nthreads, size_t total, size_t least, size_t most, la_parallel_fn fn, void *ctx)
{
    return loop(nthreads, total, least, most, 1, fn, ctx);
}
