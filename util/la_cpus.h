/*
 * la_cpus.h - how many CPUs this process may use (what `--threads 0` means), and how much memory.
 *
 * The smaller of the CPUs in the process's affinity mask (taskset, cpusets, Slurm's binding) and
 * the CPU quota of its cgroup (a Kubernetes pod's CPU limit, Docker's --cpus), rounded up:
 * sysconf(_SC_NPROCESSORS_ONLN) counts the node's cores, which in a pod limited to 2 CPUs of a
 * 64-core node would start 64 threads that the quota then throttles.
 */
#ifndef LA_CPUS_H
#define LA_CPUS_H

#include <stddef.h>

/* A check of what the CPU has, run once: *slot (-1 until then) takes probe()'s answer (0 or more),
 * which later calls return without probing. Any thread may call it; two threads that race both
 * probe and store the same answer. The kernels' vector loops pick their code with it. */
int la_cpu_probe_once(int *slot, int (*probe)(void));

/* CPUs usable by this process, at least 1. Read once; later calls return the same number. */
int la_cpu_count(void);

/* OpenMP threads for a loop or a BLAS call asked to use `want` threads: want itself when positive,
 * else the smaller of OpenMP's own default (OMP_NUM_THREADS, or the CPUs of the affinity mask) and
 * la_cpu_count(). 1 in a build without OpenMP. */
int la_omp_threads(int want);

/* The CPU quota, rounded up to whole CPUs, of the cgroup that proc_cgroup (the contents format of
 * /proc/self/cgroup, read from that path) names under sysfs_cgroup (where the cgroup filesystem is
 * mounted, /sys/fs/cgroup): cgroup v2's cpu.max, else v1's cpu.cfs_quota_us / cpu.cfs_period_us,
 * the smallest along the path from the cgroup up to the root. 0 when there is no quota or it cannot
 * be read. */
int la_cpu_quota(const char *sysfs_cgroup, const char *proc_cgroup);

/* Memory this process may use, in bytes: the smaller of the physical memory and its cgroup's
 * memory limit (cgroup v2 memory.max, v1 memory.limit_in_bytes, the smallest along the path, as
 * for the CPU quota). Read once. */
size_t la_memory_usable(void);

/* The cgroup memory limit alone, read as la_cpu_quota reads the CPU quota; 0 when there is none. */
size_t la_memory_cgroup(const char *sysfs_cgroup, const char *proc_cgroup);

#endif /* LA_CPUS_H */
