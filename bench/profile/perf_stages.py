#!/usr/bin/env python3
"""perf_stages.py - where an audit's CPU time goes, per stage, per thread and per function.

Splits the samples of a `perf record` of one `leakaudit audit` run into the run's sequential stages,
using the stage durations in its report.json (`timings`) laid end to end from the first sample, and
prints for each stage (and for "outputs": writing the files after total_s) its wall time, the CPU seconds each thread spent in it and its hottest leaf
functions. Not for: exact attribution at stage boundaries (a few milliseconds of slack) or runs with
--progress output that delays the first stage.

usage: perf_stages.py PERF.DATA REPORT.JSON [TOP]
"""
import collections
import json
import subprocess
import sys

# Top-level stages in the order cmd_audit.c runs them; *_s keys not listed here are sub-stages.
STAGES = ["read_s", "normalize_s", "links_s", "near_s", "semantic_s", "grade_s", "decide_s"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    timings = json.load(open(sys.argv[2]))["timings"]
    bounds, t = [], 0.0
    for name in STAGES:
        if name in timings:
            bounds.append((name, t, t + timings[name]))
            t += timings[name]
    out = subprocess.run(["perf", "script", "-i", sys.argv[1], "-F", "tid,time,period,ip,sym", "-G"],
                         capture_output=True, text=True, check=True).stdout
    samples = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 4:
            continue
        samples.append((int(f[0]), float(f[1].rstrip(":")), int(f[2]), f[4] if len(f) > 4 else f[3]))
    if not samples:
        sys.exit("no samples")
    start = min(s[1] for s in samples)
    main_tid = samples[0][0]
    per_thread = collections.defaultdict(lambda: collections.Counter())
    per_sym = collections.defaultdict(lambda: collections.Counter())
    for tid, when, period, sym in samples:
        rel = when - start
        stage = next((b[0] for b in bounds if rel < b[2]), "outputs")
        per_thread[stage]["main" if tid == main_tid else "workers"] += period
        per_thread[stage][tid] += period
        per_sym[stage][sym] += period
    total_cpu = sum(s[2] for s in samples) / 1e9
    print(f"{len(samples)} samples, {total_cpu:.2f} CPU s in all")
    print(f"{'stage':<14}{'wall s':>8}{'CPU s':>8}{'main':>8}{'workers':>9}{'threads':>9}  hottest leaf functions (CPU s)")
    end = max(s[1] for s in samples) - start
    for name, lo, hi in bounds + [("outputs", t, max(t, end))]:
        c = per_thread[name]
        cpu = (c["main"] + c["workers"]) / 1e9
        nthreads = len([k for k in c if isinstance(k, int) and c[k] > 0.02 * (c["main"] + c["workers"])])
        hot = ", ".join(f"{s} {p / 1e9:.2f}" for s, p in per_sym[name].most_common(top))
        print(f"{name:<14}{hi - lo:8.2f}{cpu:8.2f}{c['main'] / 1e9:8.2f}{c['workers'] / 1e9:9.2f}{nthreads:9d}  {hot}")


if __name__ == "__main__":
    main()
