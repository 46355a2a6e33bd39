/*
 * cpus.c - CPUs usable by this process (see la_cpus.h).
 */
#define _GNU_SOURCE
#include "la_cpus.h"

#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef LA_HAVE_OPENMP
#include <omp.h>
#endif

/* Whole CPUs that quota microseconds per period allow, rounded up; 0 for none or nonsense. */
static int whole_cpus(double quota, double period)
{
    if (!(quota > 0) || !(period > 0)) return 0;
    double c = ceil(quota / period);
    return c > INT_MAX ? 0 : (int)c;
}

/* The quota in one cgroup folder: v2 "cpu.max" ("max 100000" or "150000 100000"), else v1. */
static int quota_in(const char *dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/cpu.max", dir);
    FILE *f = fopen(path, "r");
    if (f) {
        char q[32] = "";
        double period = 0;
        int n = fscanf(f, "%31s %lf", q, &period);
        fclose(f);
        return n == 2 && strcmp(q, "max") ? whole_cpus(strtod(q, NULL), period) : 0;
    }
    double quota = 0, period = 0;
    snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
    if (!(f = fopen(path, "r"))) return 0;
    int ok = fscanf(f, "%lf", &quota) == 1;
    fclose(f);
    snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
    if (!ok || !(f = fopen(path, "r"))) return 0;
    ok = fscanf(f, "%lf", &period) == 1;
    fclose(f);
    return ok ? whole_cpus(quota, period) : 0; /* v1 says "no quota" with -1 */
}

/* Smallest positive value read() gives from root/rel up to root itself (rel is "" or begins with
 * '/'); 0 when none. */
static double min_along(const char *root, const char *rel, double (*read)(const char *dir))
{
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s%s", root, rel) >= sizeof dir) return 0;
    size_t keep = strlen(root);
    double best = 0;
    for (;;) {
        double q = read(dir);
        if (q > 0 && (best == 0 || q < best)) best = q;
        char *slash = strrchr(dir + keep, '/');
        if (!slash) break;
        *slash = '\0'; /* the last cut leaves root itself, a container's own cgroup namespace */
    }
    return best;
}

/* The smallest limit read() finds along the process's cgroup paths: cgroup v2's one hierarchy, or
 * v1's hierarchy of `controller`. 0 when none. */
static double cgroup_min(const char *sysfs_cgroup, const char *proc_cgroup, const char *controller,
                         double (*read)(const char *dir))
{
    FILE *f = fopen(proc_cgroup, "r");
    if (!f) return 0;
    char line[PATH_MAX + 128], want[64];
    snprintf(want, sizeof want, ",%s,", controller);
    double best = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "hierarchy:controllers:path"; v2 is "0::/path", v1's line lists the controller */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/') continue;
        *c2 = '\0';
        const char *controllers = c1 + 1, *rel = c2 + 1;
        char root[PATH_MAX];
        double q = 0;
        if (!*controllers) {
            snprintf(root, sizeof root, "%s", sysfs_cgroup);
            q = min_along(root, strcmp(rel, "/") ? rel : "", read);
        } else {
            char list[256];
            snprintf(list, sizeof list, ",%s,", controllers);
            if (!strstr(list, want)) continue;
            /* mounted as cpu,cpuacct (with a cpu link) on most distributions */
            snprintf(root, sizeof root, "%s/%s", sysfs_cgroup, controllers);
            if (access(root, F_OK) != 0) snprintf(root, sizeof root, "%s/%s", sysfs_cgroup, controller);
            q = min_along(root, strcmp(rel, "/") ? rel : "", read);
        }
        if (q > 0 && (best == 0 || q < best)) best = q;
    }
    fclose(f);
    return best;
}

static double quota_read(const char *dir) { return quota_in(dir); }

int la_cpu_quota(const char *sysfs_cgroup, const char *proc_cgroup)
{
    return (int)cgroup_min(sysfs_cgroup, proc_cgroup, "cpu", quota_read);
}

/* The memory limit in one cgroup folder: v2 "memory.max" (a byte count or "max"), else v1's
 * memory.limit_in_bytes (a huge number when unlimited, which the physical memory then undercuts). */
static double memory_in(const char *dir)
{
    static const char *files[] = {"memory.max", "memory.limit_in_bytes"};
    for (size_t k = 0; k < 2; k++) {
        char path[PATH_MAX + 32], v[64] = "";
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        int n = fscanf(f, "%63s", v);
        fclose(f);
        if (n != 1 || !strcmp(v, "max")) return 0;
        double b = strtod(v, NULL);
        return b > 0 ? b : 0;
    }
    return 0;
}

size_t la_memory_cgroup(const char *sysfs_cgroup, const char *proc_cgroup)
{
    double b = cgroup_min(sysfs_cgroup, proc_cgroup, "memory", memory_in);
    return b >= (double)SIZE_MAX ? 0 : (size_t)b;
}

size_t la_memory_usable(void)
{
    static _Atomic size_t cached;
    size_t n = atomic_load(&cached);
    if (n) return n;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    n = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)4 << 30;
    size_t c = la_memory_cgroup("/sys/fs/cgroup", "/proc/self/cgroup");
    if (c && c < n) n = c;
    atomic_store(&cached, n);
    return n;
}

int la_cpu_probe_once(int *slot, int (*probe)(void))
{
    int v = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (v < 0) {
        v = probe();
        __atomic_store_n(slot, v, __ATOMIC_RELAXED);
    }
    return v;
}

int la_cpu_count(void)
{
    static _Atomic int cached;
    int n = atomic_load(&cached);
    if (n > 0) return n;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    n = online > 0 ? (int)online : 1;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 && CPU_COUNT(&set) < n) n = CPU_COUNT(&set);
    int q = la_cpu_quota("/sys/fs/cgroup", "/proc/self/cgroup");
    if (q > 0 && q < n) n = q;
    atomic_store(&cached, n);
    return n;
}

int la_omp_threads(int want)
{
    if (want > 0) return want;
#ifdef LA_HAVE_OPENMP
    int omp = omp_get_max_threads(), cpus = la_cpu_count();
    return omp < cpus ? omp : cpus;
#else
    return 1;
#endif
}
