#!/usr/bin/env python3
"""End-to-end runner of the near-copy benchmark: leakaudit, rensa and datasketch, each from the
JSONL files that `near_bench --write DIR` wrote to a file of dev x test pairs, on one CPU.

    e2e.py run DIR --build BUILD_DIR [--reps 2] [--cpu 0] [--cpus 0,1] [--datasketch-fraction F]
    e2e.py peer rensa|datasketch DIR OUT [--perm 128] [--threshold 0.33] [--bands B] [--fraction F]

`run` times each tool as a whole process (interpreter start-up and imports included) pinned to one
CPU with taskset, wall and CPU (user+sys, from wait4), best wall of --reps rounds (each round runs
every tool once; the ratios within each round are printed too), and scores each tool's pairs
against truth.jsonl. leakaudit runs `audit --embed none` (read, normalize, shingle,
MinHash, LSH, verification, grading, clusters, every report); its pairs are verified. The peers
read the JSONL, shingle each text as leakaudit does (word bigrams, bench/peers/shingle.py), build
MinHash signatures (K=128), index dev in an LSH at the same Jaccard threshold, query it with every
test row and write the candidate pairs unverified, as the peers' own APIs give them. Then
leakaudit at --threads 2 (pinned to --cpus) against --threads 1.

`peer` is one peer's whole job, the process `run` times; it prints its phase times as JSON.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------- peer: one tool's whole job

def read_rows(path, fraction):
    with open(path) as f:
        rows = [json.loads(line) for line in f]
    return rows[:max(1, int(len(rows) * fraction))] if fraction < 1.0 else rows


def rensa_pairs(dev_sets, test_sets, a):
    import rensa
    lsh = rensa.RMinHashLSH(threshold=a.threshold, num_perm=a.perm, num_bands=a.bands)
    lsh.insert_matrix(rensa.RMinHash.digest_matrix_from_token_sets(dev_sets, a.perm, 42))
    found = lsh.query_all(rensa.RMinHash.from_token_sets(test_sets, a.perm, 42))
    return [(k, t) for t, keys in enumerate(found) for k in keys]


def datasketch_pairs(dev_sets, test_sets, a):
    import datasketch

    def sign(sets):
        out = []
        for s in sets:
            m = datasketch.MinHash(num_perm=a.perm, seed=1)
            m.update_batch([x.encode() for x in s])
            out.append(m)
        return out

    lsh = datasketch.MinHashLSH(threshold=a.threshold, num_perm=a.perm)
    with lsh.insertion_session() as session:
        for i, m in enumerate(sign(dev_sets)):
            session.insert(i, m, check_duplication=False)
    return [(k, t) for t, m in enumerate(sign(test_sets)) for k in lsh.query(m)]


def peer(a):
    sys.path.insert(0, HERE)
    from shingle import shingles
    clock = [time.perf_counter()]

    def lap():
        clock.append(time.perf_counter())
        return round(clock[-1] - clock[-2], 3)

    dev = read_rows(os.path.join(a.dir, "dev.jsonl"), a.fraction)
    test = read_rows(os.path.join(a.dir, "test.jsonl"), a.fraction)
    phases = {"read_s": lap()}
    dev_sets = [shingles(r["text"]) for r in dev]
    test_sets = [shingles(r["text"]) for r in test]
    phases["shingle_s"] = lap()
    pairs = (rensa_pairs if a.tool == "rensa" else datasketch_pairs)(dev_sets, test_sets, a)
    phases["minhash_lsh_s"] = lap()
    with open(a.out, "w") as f:
        f.writelines(f"{dev[k]['id']}\t{test[t]['id']}\n" for k, t in pairs)
    phases["write_s"] = lap()
    print(json.dumps({"rows": len(dev) + len(test), "pairs": len(pairs), **phases}))
    return 0


# ---------------------------------------------------------------- run: time and score every tool

def timed(cmd, env=None):
    """Runs cmd; returns (wall s, CPU s user+sys, stdout, exit status)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, out.decode(), p.returncode


def run_once(cmd, ok=(0,), env=None, loads=None):
    loads.append(os.getloadavg()[0])
    wall, cpu, out, rc = timed(cmd, env)
    loads.append(os.getloadavg()[0])
    if rc not in ok:
        sys.exit(f"e2e.py: {' '.join(cmd)} exited with {rc}")
    return wall, cpu, out


def leakaudit_pairs(out_dir):
    pairs = set()
    with open(os.path.join(out_dir, "pairs.jsonl")) as f:
        for line in f:
            p = json.loads(line)
            ends = {p["split_a"]: p["id_a"], p["split_b"]: p["id_b"]}
            pairs.add((ends["dev"], ends["test"]))
    return pairs


def tsv_pairs(path):
    with open(path) as f:
        return {tuple(line.rstrip("\n").split("\t")) for line in f}


def truth_pairs(path, dev_ids=None, test_ids=None):
    with open(path) as f:
        truth = {(t["dev"], t["test"]) for t in map(json.loads, f)}
    if dev_ids is None:
        return truth
    return {p for p in truth if p[0] in dev_ids and p[1] in test_ids}


def ids_in(path, fraction):
    return {r["id"] for r in read_rows(path, fraction)}


def score(pairs, truth):
    tp = len(pairs & truth)
    return tp / len(pairs) if pairs else 1.0, tp / len(truth) if truth else 1.0


def print_row(name, wall, cpu, pairs, truth, note=""):
    prec, rec = score(pairs, truth)
    print(f"{name:<34} wall {wall:7.2f} s  CPU {cpu:7.2f} s  pairs {len(pairs):7d}  "
          f"precision {prec:.4f}  recall {rec:.4f}{note}")


def run(a):
    files = ["--dev", os.path.join(a.dir, "dev.jsonl"), "--test", os.path.join(a.dir, "test.jsonl")]
    tmp = os.path.join(a.dir, "e2e-out")
    os.makedirs(tmp, exist_ok=True)
    pin = ["taskset", "-c", str(a.cpu)]
    loads = []
    truth = truth_pairs(os.path.join(a.dir, "truth.jsonl"))
    print(f"corpus {a.dir}: {sum(1 for _ in open(files[1]))} dev x {sum(1 for _ in open(files[3]))} "
          f"test rows, {len(truth)} planted pairs; K={a.perm}, Jaccard threshold {a.threshold}; "
          f"each tool pinned to CPU {a.cpu}, best wall of {a.reps}")

    audit = [os.path.join(a.build, "leakaudit"), "audit", *files, "--embed", "none", "--quiet"]
    from datasketch.lsh import _optimal_param  # the bands datasketch picks; rensa's must divide K
    want = _optimal_param(a.threshold, a.perm, 0.5, 0.5)[0]
    bands = min((d for d in range(1, a.perm + 1) if a.perm % d == 0), key=lambda d: abs(d - want))
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    # every tool once per round, rounds one after another: a machine whose speed drifts during the
    # run (other jobs on the host) then slows every tool of a round alike, and the ratios of each
    # round say more than ratios of best times taken minutes apart
    jobs = []
    for threads, cpus in ((1, str(a.cpu)), (2, a.cpus)):
        out_dir = os.path.join(tmp, f"leakaudit-t{threads}")
        jobs.append((threads, ["taskset", "-c", cpus, *audit, "--threads", str(threads), "--out", out_dir],
                     (0, 1), None))  # 1: leaks found
    for tool, fraction in (("rensa", 1.0), ("datasketch", a.datasketch_fraction)):
        out = os.path.join(tmp, f"{tool}.tsv")
        jobs.append((tool, [*pin, sys.executable, os.path.abspath(__file__), "peer", tool, a.dir, out,
                            "--perm", str(a.perm), "--threshold", str(a.threshold), "--bands", str(bands),
                            "--fraction", str(fraction)], (0,), env))
    runs = {name: [] for name, *_ in jobs}
    for _ in range(a.reps):
        for name, cmd, ok, job_env in jobs:
            runs[name].append(run_once(cmd, ok, job_env, loads))
    best = {name: min(v, key=lambda x: x[0]) for name, v in runs.items()}
    la = {t: (best[t][0], best[t][1], leakaudit_pairs(os.path.join(tmp, f"leakaudit-t{t}"))) for t in (1, 2)}
    peers = {}
    for tool, fraction in (("rensa", 1.0), ("datasketch", a.datasketch_fraction)):
        wall, cpu, stdout = best[tool]
        peers[tool] = (wall, cpu, tsv_pairs(os.path.join(tmp, f"{tool}.tsv")), json.loads(stdout), fraction)

    print(f"load average (1 min) around the runs: {min(loads):.2f} to {max(loads):.2f}")
    print_row("leakaudit audit --threads 1", la[1][0], la[1][1], la[1][2], truth, "  (verified)")
    for tool, (wall, cpu, pairs, phases, fraction) in peers.items():
        sub = truth if fraction >= 1.0 else truth_pairs(
            os.path.join(a.dir, "truth.jsonl"), ids_in(files[1], fraction), ids_in(files[3], fraction))
        label = f"{tool} (b={bands})" if tool == "rensa" else f"{tool} (b={want})"
        note = "  (LSH candidates)"
        if fraction < 1.0:
            note += f"  first {fraction:.0%} of each file, times scaled by 1/{fraction:g}"
            wall, cpu = wall / fraction, cpu / fraction
            peers[tool] = (wall, cpu, pairs, phases, fraction)
        print_row(label, wall, cpu, pairs, sub, note)
        print(f"{'':<34} phases: " + ", ".join(f"{k} {v}" for k, v in phases.items() if k.endswith("_s")))
    for tool, (wall, cpu, *_rest) in peers.items():
        print(f"ratio {tool} / leakaudit --threads 1: wall {wall / la[1][0]:6.2f}x  CPU {cpu / la[1][1]:6.2f}x")
    print_row(f"leakaudit audit --threads 2 (CPUs {a.cpus})", la[2][0], la[2][1], la[2][2], truth)
    print(f"threads 2 / threads 1: speed-up (wall t1 / wall t2) {la[1][0] / la[2][0]:.2f}x, "
          f"CPU t2 / CPU t1 {la[2][1] / la[1][1]:.2f}; same pairs: {la[1][2] == la[2][2]}")
    if a.reps > 1:
        def rounds(num, den):
            scale = {"datasketch": 1.0 / a.datasketch_fraction}.get(num, 1.0)
            r = [x[0] * scale / y[0] for x, y in zip(runs[num], runs[den])]
            return f"median {statistics.median(r):.2f}x (rounds: {', '.join(f'{v:.2f}' for v in r)})"
        print(f"ratios of wall times within each round: rensa / leakaudit --threads 1 {rounds('rensa', 1)}; "
              f"datasketch / leakaudit --threads 1 {rounds('datasketch', 1)}; "
              f"threads 1 / threads 2 {rounds(1, 2)}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--build", required=True)
    r.add_argument("--reps", type=int, default=2)
    r.add_argument("--cpu", type=int, default=0, help="the CPU of the one-thread runs")
    r.add_argument("--cpus", default="0,1", help="the CPUs of the --threads 2 run")
    r.add_argument("--datasketch-fraction", type=float, default=1.0,
                   help="run datasketch on the first F of each file and scale its times by 1/F")
    p = sub.add_parser("peer")
    p.add_argument("tool", choices=["rensa", "datasketch"])
    p.add_argument("dir")
    p.add_argument("out")
    p.add_argument("--bands", type=int, default=32)
    p.add_argument("--fraction", type=float, default=1.0)
    for x in (r, p):
        x.add_argument("--perm", type=int, default=128)
        x.add_argument("--threshold", type=float, default=0.33)
    a = ap.parse_args()
    return run(a) if a.mode == "run" else peer(a)


if __name__ == "__main__":
    sys.exit(main())
