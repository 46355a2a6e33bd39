"""The Python package against the program it wraps: the GSM8K example (examples/gsm8k, MIT) as
DataFrames, pyarrow Tables, lists of dicts, Parquet files, a DatasetDict built here and through
`python -m leakaudit audit` gives the same pairs, clusters and assignments, byte for byte, as
`leakaudit audit` on the JSONL files; bad rows are named NAME:ROW: FIELD; clean() returns the
caller's type; gate() exits as the program would."""

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import leakaudit
from common import DEV, TEST, cli_path, read, rows

OPTS = {"text-field": "question", "cutoff": "2026-01-01", "embed": "lexical", "threads": "2"}
FILES = ("pairs.jsonl", "clusters.jsonl", "assignments.jsonl")


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    """The program's reports on the JSONL files, and its exit code and summary."""
    out = str(tmp_path_factory.mktemp("cli") / "report")
    args = [cli_path(), "audit", "--dev", DEV, "--test", TEST, "--out", out]
    for k, v in OPTS.items():
        args += [f"--{k}", v]
    p = subprocess.run(args, capture_output=True, text=True)
    assert p.returncode == 1, p.stderr  # the example has planted leaks
    return out, p.stdout


def py_audit(**inputs):
    return leakaudit.audit(**inputs, text="question", cutoff="2026-01-01", embed="lexical", threads=2,
                           progress=False)


def same_as_cli(result, cli, tmp_path):
    out, stdout = cli
    mine = result.write(str(tmp_path / "py"))
    for name in FILES:
        assert read(mine, name) == read(out, name), name
    # the DataFrames are those files
    assert len(result.pairs) == len(rows(os.path.join(out, "pairs.jsonl"))) > 0
    assert list(result.pairs["id_b"]) == [r["id_b"] for r in rows(os.path.join(out, "pairs.jsonl"))]
    assert list(result.assignments["split_out"]) == [r["split_out"] for r in rows(os.path.join(out, "assignments.jsonl"))]
    assert result.exit_code == 1
    # the summary the program printed, but for the folder named
    strip = lambda s: [l for l in s.splitlines() if not l.startswith("  reports:")]
    assert strip(result.summary()) == strip(stdout)


def test_dataframes(cli, tmp_path):
    dev, test = pd.DataFrame(rows(DEV)), pd.DataFrame(rows(TEST))
    before = test.copy()
    r = py_audit(dev=dev, test=test)
    same_as_cli(r, cli, tmp_path)
    assert test.equals(before)  # the caller's rows are untouched
    clean = r.clean("test")
    assert isinstance(clean, pd.DataFrame)
    manifest = rows(os.path.join(cli[0], "test.jsonl"))
    assert list(clean["id"]) == [m["id"] for m in manifest]
    assert len(clean) == r.stats["heldout_clean"] < len(test)


def test_parquet(cli, tmp_path):
    for name, path in (("dev", DEV), ("test", TEST)):
        pq.write_table(pa.Table.from_pylist(rows(path)), tmp_path / f"{name}.parquet")
    r = py_audit(dev=str(tmp_path / "dev.parquet"), test=str(tmp_path / "test.parquet"))
    same_as_cli(r, cli, tmp_path)
    assert isinstance(r.clean("test"), pa.Table)


def test_arrow_tables_and_lists(cli, tmp_path):
    same_as_cli(py_audit(dev=pa.Table.from_pylist(rows(DEV)), test=rows(TEST)), cli, tmp_path)


def test_dataset_dict(cli, tmp_path):
    datasets = pytest.importorskip("datasets")
    dd = datasets.DatasetDict({"dev": datasets.Dataset.from_list(rows(DEV)),
                               "test": datasets.Dataset.from_list(rows(TEST))})
    r = py_audit(data=dd)
    same_as_cli(r, cli, tmp_path)
    clean = r.clean("test")
    assert isinstance(clean, datasets.Dataset)
    assert clean["id"] == [m["id"] for m in rows(os.path.join(cli[0], "test.jsonl"))]
    # a shuffled Dataset (an indices mapping over its table) is read in its own order
    shuffled = dd["test"].shuffle(seed=3)
    r2 = py_audit(dev=dd["dev"], test=shuffled)
    assert sorted(r2.pairs["id_b"]) == sorted(r.pairs["id_b"])
    assert r2.clean("test")["id"] == [i for i in shuffled["id"] if i in set(clean["id"])]


def test_python_m_with_parquet(cli, tmp_path):
    for name, path in (("dev", DEV), ("test", TEST)):
        pq.write_table(pa.Table.from_pylist(rows(path)), tmp_path / f"{name}.parquet")
    out = str(tmp_path / "report")
    args = [sys.executable, "-m", "leakaudit", "audit", "--dev", str(tmp_path / "dev.parquet"),
            "--test", str(tmp_path / "test.parquet"), f"--out={out}"]
    for k, v in OPTS.items():
        args += [f"--{k}", v]
    p = subprocess.run(args, capture_output=True, text=True)
    assert p.returncode == 1, p.stderr
    for name in FILES:
        assert read(out, name) == read(cli[0], name), name
    assert "exit 1: leaks found" in p.stdout
    assert f"reports: {out}/report.html" in p.stdout
    bad = subprocess.run([sys.executable, "-m", "leakaudit", "audit", "--dev", str(tmp_path / "none.parquet"),
                          "--test", TEST], capture_output=True, text=True)
    assert bad.returncode == 2 and "none.parquet: no such file" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "leakaudit", "audit", "--no-such-option", "1"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--no-such-option" in bad.stderr


def test_bad_rows_named(tmp_path):
    test = pd.DataFrame(rows(TEST))
    test.loc[2, "question"] = None
    with pytest.raises(leakaudit.InputError) as e:
        py_audit(dev=pd.DataFrame(rows(DEV)), test=test)
    assert e.value.exit_code == 2
    assert "test:3: question: missing; expected a string" in str(e.value)
    r = leakaudit.audit(dev=rows(DEV), test=test, text="question", embed="lexical", on_invalid="reject",
                        progress=False)
    assert r.stats["rows_rejected"] == 1 and list(r.rejects["id"]) == [test.loc[2, "id"]]
    with pytest.raises(leakaudit.InputError, match="not an option"):
        leakaudit.audit(dev=rows(DEV), test=rows(TEST), no_such_option=1)
    with pytest.raises(leakaudit.InputError, match="column 'blob'"):
        leakaudit.audit(dev=rows(DEV), test=pa.table({"id": ["a"], "question": ["q"],
                                                       "blob": pa.array([b"\xff"], pa.binary())}))


def test_generated_ids_and_gate():
    dev = [{"question": "How many legs does a spider have?"}, {"question": "Name the capital city of France."}]
    test = [{"question": "how many legs does a SPIDER have?"}, {"question": "Who wrote Hamlet?"}]
    r = leakaudit.audit(dev=dev, test=test, text="question", embed="none", progress=False)
    assert list(r.pairs["id_a"]) == ["dev:1"] and list(r.pairs["id_b"]) == ["test:1"]
    with pytest.raises(leakaudit.LeaksFound) as e:
        r.gate(quiet=True)
    assert e.value.exit_code == 1 and isinstance(e.value, SystemExit)
    assert leakaudit.audit(dev=dev, test=test, text="question", embed="none", fail_on="none",
                           progress=False).gate() is not None
    assert r.clean("test") == [test[1]]


def test_chat_rows():
    """A chat column (a list of structs through Arrow) read with a '*' text field: the turns joined
    by newlines, a null turn left out; an exact link to the same text under normalize none."""
    dev = pa.table({"id": ["c1", "c2"],
                    "messages": [[{"role": "user", "content": "Tom has 5 pens."},
                                  {"role": "assistant", "content": None},
                                  {"role": "user", "content": "How many now?"}],
                                 [{"role": "user", "content": "Something else entirely"}]]})
    test = [{"id": "t1", "text": "Tom has 5 pens.\nHow many now?"}]
    r = leakaudit.audit(dev=dev, test=test, text=["dev=messages.*.content", "test=text"], normalize="none",
                        embed="none", near="off", progress=False)
    assert list(zip(r.pairs["id_a"], r.pairs["id_b"], r.pairs["kinds"])) == [("c1", "t1", ["exact"])]
    with pytest.raises(leakaudit.InputError, match=r"got an array of objects \(--text-field 'messages\.\*\.content'"):
        leakaudit.audit(dev=dev.to_pandas(), test=test, text=["dev=messages", "test=text"], embed="none",
                        progress=False)


def test_numpy_embeddings(tmp_path):
    dev = [{"id": f"d{i}", "text": f"dev row {i} about topic {i}"} for i in range(4)]
    test = [{"id": f"t{i}", "text": f"unrelated words number {i}"} for i in range(3)]
    rng = np.random.default_rng(0)
    ev, et = rng.normal(size=(4, 8)).astype(np.float32), rng.normal(size=(3, 8)).astype(np.float32)
    et[1] = ev[2]  # the same vector: a semantic link t1 ~ d2
    r = leakaudit.audit(dev=dev, test=test, embeddings={"dev": ev, "test": et}, near="off", progress=False)
    sem = r.pairs[r.pairs["kinds"].apply(lambda k: "semantic" in k)]
    assert list(zip(sem["id_a"], sem["id_b"])) == [("d2", "t1")]


def test_reports(tmp_path):
    r = py_audit(dev=rows(DEV), test=rows(TEST))
    page = open(r.to_html(tmp_path / "r.html"), encoding="utf-8").read()
    assert "<html" in page and r.pairs["id_b"][0] in page  # the page names the links
    assert "<iframe srcdoc=" in r._repr_html_()
    assert repr(r).endswith("exit 1>")
