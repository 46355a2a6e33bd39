"""What the Python package adds over the program on the same rows: ROWS rows (5% held out, 1% of
the seen rows copies of held-out ones) audited as pandas DataFrames with leakaudit.audit and the
reports written (Result.write), against `leakaudit audit` on the same rows as JSONL files, run in
turn REPEAT times each. Both write the same pairs.jsonl (checked). Prints seconds per run and the
overhead of the fastest runs.

    python bench/python/dataframe_overhead.py [ROWS] [REPEAT] [EMBED]   # 1000000 2 none
"""

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

import pandas as pd

import leakaudit


def make_rows(n, seed=7):
    rnd = random.Random(seed)
    vocab = [f"w{k}" for k in range(20000)]
    n_test = n // 20
    test = [{"id": f"t{i}", "text": " ".join(rnd.choices(vocab, k=rnd.randint(12, 30)))} for i in range(n_test)]
    dev = []
    for i in range(n - n_test):
        if i % 100 == 0:
            text = test[rnd.randrange(n_test)]["text"]
        else:
            text = " ".join(rnd.choices(vocab, k=rnd.randint(12, 30)))
        dev.append({"id": f"d{i}", "text": text})
    return dev, test


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    embed = sys.argv[3] if len(sys.argv) > 3 else "none"
    cli = os.environ.get("LEAKAUDIT_CLI", os.path.join(os.path.dirname(leakaudit.__file__), "bin", "leakaudit"))
    work = tempfile.mkdtemp(prefix="la-bench-py-")
    dev, test = make_rows(n)
    for name, rows in (("dev", dev), ("test", test)):
        with open(os.path.join(work, f"{name}.jsonl"), "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    dev_df, test_df = pd.DataFrame(dev), pd.DataFrame(test)
    del dev, test
    env = dict(os.environ, LEAKAUDIT_FSYNC="0")
    os.environ["LEAKAUDIT_FSYNC"] = "0"
    times = {"cli": [], "python": []}
    for k in range(repeat):
        out_cli, out_py = os.path.join(work, "cli"), os.path.join(work, "py")
        t = time.perf_counter()
        subprocess.run([cli, "audit", "--dev", os.path.join(work, "dev.jsonl"), "--test", os.path.join(work, "test.jsonl"),
                        "--embed", embed, "--out", out_cli, "--quiet"], env=env, check=False)
        times["cli"].append(time.perf_counter() - t)
        t = time.perf_counter()
        r = leakaudit.audit(dev=dev_df, test=test_df, embed=embed, progress=False)
        r.write(out_py)
        times["python"].append(time.perf_counter() - t)
        with open(os.path.join(out_cli, "pairs.jsonl")) as a, open(os.path.join(out_py, "pairs.jsonl")) as b:
            assert a.read() == b.read(), "pairs.jsonl differ"
        print(f"run {k + 1}: cli {times['cli'][-1]:.2f} s, python {times['python'][-1]:.2f} s, "
              f"{r.stats['links']} links", flush=True)
        r.close()
    best_cli, best_py = min(times["cli"]), min(times["python"])
    print(f"{n} rows, embed {embed}: cli {best_cli:.2f} s, python {best_py:.2f} s, "
          f"overhead {100 * (best_py - best_cli) / best_cli:+.1f}%")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
