"""leakaudit.split against the program it wraps: the GSM8K example (examples/gsm8k, MIT) as
DataFrames, Parquet files, a DatasetDict built here and through `python -m leakaudit split` gives
the same assignments, byte for byte, as `leakaudit split` on the JSONL files, by the chronological
rule and by the three-set rule; each set's rows come back in the caller's type; bad rows and
options are named; --min-share gives exit code 1."""

import json
import os
import subprocess
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import leakaudit
from common import DEV, TEST, cli_path, read, rows

CHRONO = {"cutoff": "2026-01-01", "text-field": "question", "threads": "2"}
THREE = {"three-set": None, "seed": "7", "dev-share": "0.3", "text-field": "question", "threads": "2"}


def labeled(rs):
    """The rows with a class label: whether the answer is even or odd."""
    out = []
    for r in rs:
        answer = int(r["answer"].split("####")[-1].strip().replace(",", ""))
        out.append(dict(r, label="even" if answer % 2 == 0 else "odd"))
    return out


def run_cli(out, options, files):
    args = [cli_path(), "split", "--out", out]
    for k, v in options.items():
        args += [f"--{k}"] + ([v] if v is not None else [])
    return subprocess.run(args + files, capture_output=True, text=True)


def py_options(options):
    return {k.replace("-", "_"): True if v is None else v for k, v in options.items() if k != "text-field"}


@pytest.fixture(scope="module")
def chrono(tmp_path_factory):
    """The program's split of the two JSONL files by the cutoff, and its summary."""
    out = str(tmp_path_factory.mktemp("cli") / "split")
    p = run_cli(out, CHRONO, [DEV, TEST])
    assert p.returncode == 0, p.stderr
    return out, p.stdout


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """The program's three-set split of the labeled test questions."""
    folder = tmp_path_factory.mktemp("three")
    path = str(folder / "labeled.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for r in labeled(rows(TEST)):
            f.write(json.dumps(r) + "\n")
    p = run_cli(str(folder / "split"), THREE, [path])
    assert p.returncode == 0, p.stderr
    return str(folder / "split"), path


def py_split(data, options=CHRONO):
    return leakaudit.split(data, text="question", progress=False, **py_options(options))


def same_assignments(result, out, tmp_path):
    mine = result.write(str(tmp_path / "py"))
    assert read(mine, "assignments.jsonl") == read(out, "assignments.jsonl")
    want = rows(os.path.join(out, "assignments.jsonl"))
    assert list(result.assignments["id"]) == [r["id"] for r in want]
    assert list(result.assignments["split_out"]) == [r["split_out"] for r in want]
    assert result.exit_code == 0


def ids(parts):
    """The ids of one input's rows, or of several inputs' in order."""
    parts = parts if isinstance(parts, list) else [parts]
    out = []
    for p in parts:
        out += list(p["id"]) if not isinstance(p, pa.Table) else p.column("id").to_pylist()
    return out


def test_dataframes(chrono, tmp_path):
    out, stdout = chrono
    dev, test = pd.DataFrame(rows(DEV)), pd.DataFrame(rows(TEST))
    s = py_split([dev, test])
    same_assignments(s, out, tmp_path)
    # the summary the program printed, but for the folder named
    assert s.summary() == stdout.replace(out, str(tmp_path / "py"))
    assert s.stats["quarantined"] == 14 and s.stats["dev"] + s.stats["test"] + 14 == len(dev) + len(test)
    for name in ("dev", "test", "quarantine"):
        got = s.split(name)
        assert isinstance(got, list) and all(isinstance(g, pd.DataFrame) for g in got)
        assert ids(got) == [m["id"] for m in rows(os.path.join(out, f"{name}.jsonl"))], name
    assert s.rows("test")[1].equals(test[test["id"].isin(ids(s.split("test")))])
    with pytest.raises(KeyError, match="no set 'demos'"):
        s.split("demos")
    assert repr(s).endswith("quarantine 14; exit 0>")


def test_parquet_and_one_table(chrono, tmp_path):
    paths = []
    for name, path in (("dev", DEV), ("test", TEST)):
        paths.append(str(tmp_path / f"{name}.parquet"))
        pq.write_table(pa.Table.from_pylist(rows(path)), paths[-1])
    s = py_split(paths)
    same_assignments(s, chrono[0], tmp_path)
    assert all(isinstance(t, pa.Table) for t in s.split("dev"))
    # one list of dicts: one input, its rows back as a list
    one = py_split(rows(DEV), dict(CHRONO, cutoff="2025-06-01"))
    kept = one.split("test")
    assert isinstance(kept, list) and all(isinstance(r, dict) for r in kept)
    assert 0 < len(kept) == one.stats["test"] < len(rows(DEV))
    assert all(r["available_on"] >= "2025-06-01" for r in kept)


def test_dataset_dict(chrono, tmp_path):
    datasets = pytest.importorskip("datasets")
    dd = datasets.DatasetDict({"dev": datasets.Dataset.from_list(rows(DEV)),
                               "test": datasets.Dataset.from_list(rows(TEST))})
    s = py_split(dd)
    same_assignments(s, chrono[0], tmp_path)
    q = s.split("quarantine")
    assert all(isinstance(d, datasets.Dataset) for d in q)
    assert list(q[0]["id"]) + list(q[1]["id"]) == [m["id"] for m in rows(os.path.join(chrono[0], "quarantine.jsonl"))]


def test_three_set(three, tmp_path):
    out, path = three
    s = py_split(pd.DataFrame(rows(path)), THREE)
    same_assignments(s, out, tmp_path)
    assert s.sets == ["demos", "dev", "test", "quarantine"]
    with open(os.path.join(out, "manifest.json"), encoding="utf-8") as f:
        want = json.load(f)
    # the sets' fingerprints cover ids, labels and texts: the same sets, whatever the input's format
    assert s.manifest["fingerprints"] == want["fingerprints"]
    assert s.stats["demos"] == 4 and s.stats["dev"] + s.stats["test"] == len(rows(path)) - 4
    demos = s.split("demos")
    assert isinstance(demos, pd.DataFrame) and list(demos["id"]) == [m["id"] for m in rows(os.path.join(out, "demos.jsonl"))]
    assert s.summary().startswith(f"leakaudit {leakaudit.version()} split (three sets, seed 7): demos 4,")


def test_python_m_split(chrono, tmp_path):
    for name, path in (("dev", DEV), ("test", TEST)):
        pq.write_table(pa.Table.from_pylist(rows(path)), tmp_path / f"{name}.parquet")
    out = str(tmp_path / "split")
    args = [sys.executable, "-m", "leakaudit", "split", str(tmp_path / "dev.parquet"), str(tmp_path / "test.parquet"),
            f"--out={out}"]
    for k, v in CHRONO.items():
        args += [f"--{k}", v]
    p = subprocess.run(args, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert read(out, "assignments.jsonl") == read(chrono[0], "assignments.jsonl")
    assert f"outputs: {out}/ (assignments.jsonl" in p.stdout
    # JSONL files, read by the library itself: every file the program writes, but the report's timings
    out2 = str(tmp_path / "split-jsonl")
    p = subprocess.run(args[:4] + [DEV, TEST, f"--out={out2}"] + args[7:], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    for name in sorted(os.listdir(chrono[0])):
        strip = lambda s: [l for l in s.splitlines() if '"timings"' not in l]
        assert strip(read(out2, name)) == strip(read(chrono[0], name)), name
    bad = subprocess.run([sys.executable, "-m", "leakaudit", "split", "--dev", DEV, "--cutoff", "2026-01-01"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--dev does not apply to split" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "leakaudit", "split", DEV], capture_output=True, text=True)
    assert bad.returncode == 2 and "--cutoff YYYY-MM-DD (chronological rule) or --three-set is required" in bad.stderr


def test_bad_input_and_min_share():
    test = pd.DataFrame(rows(TEST))
    test.loc[1, "available_on"] = None
    with pytest.raises(leakaudit.InputError) as e:
        leakaudit.split(test, text="question", cutoff="2026-01-01", progress=False)
    assert e.value.exit_code == 2 and "rows:2: available_on" in str(e.value)
    with pytest.raises(leakaudit.InputError, match="not an option of leakaudit split"):
        leakaudit.split(rows(TEST), resolve="keep-test", cutoff="2026-01-01")
    with pytest.raises(leakaudit.InputError, match="label: missing"):
        leakaudit.split(rows(TEST), three_set=True, progress=False)
    # every row after 2020: dev is empty, under min_share
    s = leakaudit.split(rows(TEST), text="question", cutoff="2020-01-01", min_share=0.2, progress=False)
    assert s.exit_code == 1 and s.stats["dev"] == 0
    assert s.split("dev") == []
