#!/usr/bin/env python3
"""Peer runner of the near-copy benchmark: datasketch and rensa on the corpus that
`near_bench --write DIR` wrote, with the same shingles (word bigrams under leakaudit's token rule:
runs of ASCII letters, digits and non-ASCII bytes), the same K and the same threshold.

Times MinHash signatures single-threaded (shingle lists are built beforehand and not timed, which
favours the peers: leakaudit's main figure includes shingling; rensa best of --reps runs, datasketch
one run), then runs each peer's LSH at the
threshold and scores its candidate pairs against truth.jsonl. Prints ratios against leakaudit's
signature rate when --ours-rows-per-s is given.

    peers.py DIR [--perm 128] [--threshold 0.33] [--ours-rows-per-s R] [--datasketch-rows N]
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # rensa's batch paths: one thread, like the others

import datasketch  # noqa: E402
import rensa  # noqa: E402

from shingle import shingles  # noqa: E402


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def score(pairs, truth, name, secs):
    tp = len(pairs & truth)
    prec = tp / len(pairs) if pairs else 1.0
    print(f"{name:<22} LSH candidates {len(pairs):7d}  recall {tp / len(truth):.3f}  "
          f"candidate precision {prec:.4f}  ({secs:.2f}s insert+query)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--perm", type=int, default=128)
    ap.add_argument("--threshold", type=float, default=0.33)
    ap.add_argument("--ours-rows-per-s", type=float, default=0.0)
    ap.add_argument("--ours", action="append", default=[], metavar="NAME=ROWS_PER_S",
                    help="one more leakaudit rate to print ratios for (repeatable)")
    ap.add_argument("--datasketch-rows", type=int, default=0, help="time datasketch on the first N rows only")
    ap.add_argument("--reps", type=int, default=5, help="rensa timings: best of this many runs (datasketch: 1)")
    a = ap.parse_args()

    dev = load(os.path.join(a.dir, "dev.jsonl"))
    test = load(os.path.join(a.dir, "test.jsonl"))
    truth = {(t["dev"], t["test"]) for t in load(os.path.join(a.dir, "truth.jsonl"))}
    rows = dev + test
    sets = [shingles(r["text"]) for r in rows]
    nsh = sum(len(s) for s in sets)
    print(f"corpus: {len(dev)} dev + {len(test)} test rows, {nsh} shingles; "
          f"datasketch {datasketch.__version__ if hasattr(datasketch, '__version__') else ''} rensa; K={a.perm}")

    # datasketch: one MinHash per row, update_batch with the encoded shingles.
    nds = a.datasketch_rows or len(rows)
    enc = [[s.encode() for s in x] for x in sets[:nds]]
    t0 = time.perf_counter()
    ds = []
    for x in enc:
        m = datasketch.MinHash(num_perm=a.perm, seed=1)
        m.update_batch(x)
        ds.append(m)
    t_ds = time.perf_counter() - t0
    ds_rate = nds / t_ds
    print(f"datasketch MinHash     {nds:7d} rows in {t_ds:7.2f}s = {ds_rate:10.0f} rows/s")

    # rensa, the per-row object API (best of --reps, as leakaudit's figures are best of 5).
    t_r = 1e30
    for _ in range(a.reps):
        t0 = time.perf_counter()
        rm = []
        for x in sets:
            m = rensa.RMinHash(num_perm=a.perm, seed=42)
            m.update(x)
            rm.append(m)
        t_r = min(t_r, time.perf_counter() - t0)
    r_rate = len(rows) / t_r
    print(f"rensa RMinHash         {len(rows):7d} rows in {t_r:7.3f}s = {r_rate:10.0f} rows/s (best of {a.reps})")

    # rensa, the bulk matrix API (one thread).
    t_rb, cpu_rb = 1e30, 0.0
    for _ in range(a.reps):
        t0, c0 = time.perf_counter(), time.process_time()
        rensa.RMinHash.digest_matrix_from_token_sets(sets, a.perm, 42)
        t = time.perf_counter() - t0
        if t < t_rb:
            t_rb, cpu_rb = t, time.process_time() - c0
    rb_rate = len(rows) / t_rb
    print(f"rensa bulk matrix      {len(rows):7d} rows in {t_rb:7.3f}s = {rb_rate:10.0f} rows/s (best of {a.reps}; "
          f"CPU time / wall time {cpu_rb / t_rb:.2f}, 1.00 = one thread)")

    ours = ([("text", a.ours_rows_per_s)] if a.ours_rows_per_s > 0 else [])
    ours += [(x.split("=", 1)[0], float(x.split("=", 1)[1])) for x in a.ours]
    for name, o in ours:
        print(f"ratio leakaudit ({name}) / datasketch {o / ds_rate:8.1f}x   / rensa {o / r_rate:6.2f}x   "
              f"/ rensa bulk {o / rb_rate:6.2f}x")

    # LSH at the same threshold: candidates only (neither peer verifies).
    if nds == len(rows):
        t0 = time.perf_counter()
        lsh = datasketch.MinHashLSH(threshold=a.threshold, num_perm=a.perm)
        for r, m in zip(dev, ds[:len(dev)]):
            lsh.insert(r["id"], m)
        pairs = {(k, r["id"]) for r, m in zip(test, ds[len(dev):]) for k in lsh.query(m)}
        score(pairs, truth, "datasketch MinHashLSH", time.perf_counter() - t0)
    # rensa needs bands dividing K: the divisor nearest datasketch's choice.
    want = lsh.b if nds == len(rows) else 42
    b = min((d for d in range(1, a.perm + 1) if a.perm % d == 0), key=lambda d: abs(d - want))
    t0 = time.perf_counter()
    rl = rensa.RMinHashLSH(threshold=a.threshold, num_perm=a.perm, num_bands=b)
    for i, m in enumerate(rm[:len(dev)]):
        rl.insert(i, m)
    pairs = {(dev[k]["id"], t["id"]) for t, m in zip(test, rm[len(dev):]) for k in rl.query(m)}
    score(pairs, truth, f"rensa RMinHashLSH b={b}", time.perf_counter() - t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
