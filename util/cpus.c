/*
 * cpus.c - CPUs usable by this process (see la_cpus.h).
 */
#define _GNU_SOURCE
#include "la_cpus.h"

#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
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

/* Smallest quota from root/rel up to root itself (rel is "" or begins with '/'); 0 when none. */
static int quota_along(const char *root, const char *rel)
{
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s%s", root, rel) >= sizeof dir) return 0;
    size_t keep = strlen(root);
    int best = 0;
    for (;;) {
        int q = quota_in(dir);
        if (q > 0 && (best == 0 || q < best)) best = q;
        char *slash = strrchr(dir + keep, '/');
        if (!slash) break;
        *slash = '\0'; /* the last cut leaves root itself, a container's own cgroup namespace */
    }
    return best;
}

int la_cpu_quota(const char *sysfs_cgroup, const char *proc_cgroup)
{
    FILE *f = fopen(proc_cgroup, "r");
    if (!f) return 0;
    char line[PATH_MAX + 128];
    int best = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "hierarchy:controllers:path"; v2 is "0::/path", v1's CPU line lists "cpu" */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/') continue;
        *c2 = '\0';
        const char *controllers = c1 + 1, *rel = c2 + 1;
        char root[PATH_MAX];
        int q = 0;
        if (!*controllers) {
            snprintf(root, sizeof root, "%s", sysfs_cgroup);
            q = quota_along(root, strcmp(rel, "/") ? rel : "");
        } else {
            char list[256];
            snprintf(list, sizeof list, ",%s,", controllers);
            if (!strstr(list, ",cpu,")) continue;
            /* mounted as cpu,cpuacct (with a cpu link) on most distributions */
            snprintf(root, sizeof root, "%s/%s", sysfs_cgroup, controllers);
            if (access(root, F_OK) != 0) snprintf(root, sizeof root, "%s/cpu", sysfs_cgroup);
            q = quota_along(root, strcmp(rel, "/") ? rel : "");
        }
        if (q > 0 && (best == 0 || q < best)) best = q;
    }
    fclose(f);
    return best;
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
