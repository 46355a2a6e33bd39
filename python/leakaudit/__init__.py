"""leakaudit from Python: audit the partitions of an evaluation set for leaks across the held-out
boundary, given as pandas DataFrames, pyarrow Tables, Parquet paths, Hugging Face Datasets or
DatasetDicts, or lists of dicts.

    import leakaudit
    r = leakaudit.audit(dev=dev_df, test=test_df, text="question", cutoff="2026-01-01")
    print(r.summary())
    r.pairs, r.clusters, r.assignments   # DataFrames: the CLI's pairs/clusters/assignments.jsonl
    clean_test = r.clean("test")         # the clean rows, in the type given
    r.gate()                             # raises LeaksFound (exit code 1) when leaks gate the run

Everything is computed by the C library (libleakaudit, include/leakaudit.h) with the options of
`leakaudit audit` by their long names (fail_on="exact" is --fail-on exact); this package only moves
rows in (through the Arrow C Data Interface) and results out.
"""

import ctypes
import os
import shutil
import sys
import tempfile

from . import _lib
from ._errors import InputError, LeakauditError
from ._inputs import Source

__all__ = ["audit", "Result", "LeakauditError", "InputError", "LeaksFound", "version"]


def version():
    """The C library's version."""
    return _lib.lib.la_version().decode()


__version__ = version()


class LeaksFound(SystemExit):
    """Raised by Result.gate() when links fail the gate (--fail-on): a SystemExit with code 1, so a
    script that does not catch it exits 1 as `leakaudit audit` would."""

    def __init__(self, message, exit_code=1):
        super().__init__(exit_code)
        self.exit_code = exit_code
        self.message = message

    def __str__(self):
        return self.message


def _fail(status, detail=""):
    msg = _lib.last_error(status)
    if detail:
        msg = f"{msg}\n{detail}"
    usage = status in (_lib.LA_EINVAL, _lib.LA_EINPUT, _lib.LA_EIO, _lib.LA_ENODEV, _lib.LA_EUNSUPPORTED)
    return (InputError if usage else LeakauditError)(msg)


class _Stderr:
    """The library prints the first problems of a refused input to stderr (fd 2): catch them for the
    exception's message, and pass everything on to sys.stderr."""

    def __enter__(self):
        self.saved = os.dup(2)
        self.tmp = tempfile.TemporaryFile()
        os.dup2(self.tmp.fileno(), 2)
        return self

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.tmp.seek(0)
        self.text = self.tmp.read().decode("utf-8", "replace")
        self.tmp.close()
        if self.text:
            sys.stderr.write(self.text)
        return False


def _option_items(options):
    """(name, value) pairs for la_options_set: underscores become dashes, True is a flag, False and
    None are left out, a list or tuple repeats the option."""
    for key, value in options.items():
        name = key.replace("_", "-")
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if v is None or v is False:
                continue
            yield name, None if v is True else str(v)


def _progress(enabled, total):
    if enabled is False:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="leakaudit", unit="step", leave=False)


def _partitions(data, dev, test, parts):
    """(part, object) pairs in the order given."""
    out = []
    if data is not None:
        if hasattr(data, "items") and not hasattr(data, "columns"):  # DatasetDict or dict of partitions
            out.extend(data.items())
        else:
            out.append((None, data))  # one table: its split field names the partitions
    if dev is not None:
        out.append(("dev", dev))
    if test is not None:
        out.append(("test", test))
    if parts:
        out.extend(parts.items())
    if not out:
        raise InputError("no input: give dev= and test=, parts={NAME: rows}, a DatasetDict, or one table with "
                         "a split field")
    return out


def audit(data=None, *, dev=None, test=None, parts=None, text="text", id="id", embeddings=None, progress=None,
          **options):
    """Run `leakaudit audit` on rows in memory or in files and return its Result.

    data: a DatasetDict or dict mapping partition names to rows, or one table whose split field
    (split_field=, default "split") names each row's partition. dev, test: shorthands; parts: more
    partitions by name. Rows: pandas DataFrame, pyarrow Table or RecordBatch, Hugging Face Dataset,
    list of dicts, or a path (.parquet/.arrow/.feather read with pyarrow; .jsonl/.csv/.tsv, .gz and
    .zst read by the library). text: the text field, or a list of fields joined with a newline;
    id: the id field (a table without it gets ids NAME:ROW). embeddings: {partition: NumPy array},
    one float32 row per input row. Every other keyword is a `leakaudit audit` option by its long
    name with underscores (cutoff="2026-01-01", embed="lexical", fail_on="exact", near="off",
    within=True, threads=4). progress: False turns the tqdm bar off.

    Raises InputError (exit code 2) for bad options or input, naming NAME:ROW: FIELD.
    """
    sources = [Source(obj, part, part or "rows") for part, obj in _partitions(data, dev, test, parts)]
    tmpdir = None
    handle = ctypes.c_void_p()
    bar = _progress(progress, len(sources) + 1)
    lib = _lib.lib
    try:
        s = lib.la_options_new(ctypes.byref(handle))
        if s != _lib.LA_OK:
            raise _fail(s)
        items = list(_option_items(options))
        for name, value in [("text-field", t) for t in ([text] if isinstance(text, str) else text or [])] + \
                [("id-field", id)] * (id is not None) + items:
            s = lib.la_options_set(handle, name.encode(), None if value is None else value.encode())
            if s != _lib.LA_OK:
                raise _fail(s)
        if embeddings:
            import numpy as np
            tmpdir = tempfile.mkdtemp(prefix="leakaudit-emb-")
            for part, vectors in embeddings.items():
                path = os.path.join(tmpdir, f"{part}.npy")
                np.save(path, np.ascontiguousarray(vectors, dtype=np.float32))
                s = lib.la_options_set(handle, b"embeddings", f"{part}={path}".encode())
                if s != _lib.LA_OK:
                    raise _fail(s)
        for src in sources:
            if bar is not None:
                bar.set_description(f"leakaudit: {src.name}")
            s = src.add_to(handle)
            if s != _lib.LA_OK:
                raise _fail(s)
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.set_description("leakaudit: auditing")
        res = ctypes.c_void_p()
        with _Stderr() as err:
            s = lib.la_audit_run(handle, ctypes.byref(res))
        if s != _lib.LA_OK:
            raise _fail(s, err.text.strip())
        if bar is not None:
            bar.update(1)
        return Result(res, sources)
    finally:
        if bar is not None:
            bar.close()
        lib.la_options_free(handle)
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)


class Result:
    """What one audit decided. The tables are the CLI's own files (pairs.jsonl, clusters.jsonl,
    assignments.jsonl) as DataFrames, written once by the library into a private folder when first
    asked for."""

    def __init__(self, handle, sources):
        self._h = handle
        self._sources = sources
        self._dir = None
        self._written = None
        self._tables = {}
        st = _lib.Stats()
        _lib.lib.la_result_stats_get(handle, ctypes.byref(st))
        self.stats = {name: getattr(st, name) for name, _ in _lib.Stats._fields_}
        self.exit_code = st.exit_code
        self.leaks = bool(st.leaks)

    def __del__(self):
        self.close()

    def close(self):
        """Free the library's result and the private folder (the object is unusable after)."""
        if getattr(self, "_h", None):
            _lib.lib.la_result_free(self._h)
            self._h = None
        if getattr(self, "_dir", None):
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def write(self, path):
        """Write every report `leakaudit audit --out PATH` writes (atomically: PATH is replaced only
        when it is absent, empty or an earlier report)."""
        path = os.fspath(path)
        s = _lib.lib.la_result_write(self._h, path.encode())
        if s != _lib.LA_OK:
            raise _fail(s)
        self._written = path
        return path

    def _files(self):
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="leakaudit-")
            out = os.path.join(self._dir, "report")
            s = _lib.lib.la_result_write(self._h, out.encode())
            if s != _lib.LA_OK:
                raise _fail(s)
        return os.path.join(self._dir, "report")

    def _jsonl(self, name):
        if name not in self._tables:
            import pandas as pd
            path = os.path.join(self._files(), name)
            if os.path.getsize(path) == 0:
                self._tables[name] = pd.DataFrame()
            else:
                import json
                with open(path, encoding="utf-8") as f:
                    self._tables[name] = pd.DataFrame.from_records([json.loads(line) for line in f])
        return self._tables[name]

    @property
    def pairs(self):
        """Every link across the boundary (pairs.jsonl): id_a, split_a, id_b, split_b (held out),
        kinds, grade, cluster, scores."""
        return self._jsonl("pairs.jsonl")

    @property
    def clusters(self):
        """Every leak cluster (clusters.jsonl)."""
        return self._jsonl("clusters.jsonl")

    @property
    def assignments(self):
        """Every input row (assignments.jsonl): id, split_in, split_out, reasons."""
        return self._jsonl("assignments.jsonl")

    @property
    def rejects(self):
        """Rejected rows with their reasons (rejects.jsonl; with on_invalid="reject")."""
        return self._jsonl("rejects.jsonl")

    def summary(self):
        """The summary `leakaudit audit` prints: rows, links by kind and grade, clusters, the clean
        held-out rows and their 95% interval, the exit code."""
        where = (self._written or "").encode()
        n = _lib.lib.la_result_summary(self._h, where, None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        _lib.lib.la_result_summary(self._h, where, buf, n + 1)
        text = buf.value.decode("utf-8", "replace")
        if not self._written:  # no folder to name: Result.write(DIR) writes the reports
            text = "".join(line for line in text.splitlines(True) if not line.startswith("  reports:"))
        return text

    def __repr__(self):
        st = self.stats
        return (f"<leakaudit.Result: {st['rows_read']} rows, {st['links']} links, {st['clusters']} clusters, "
                f"{st['quarantined']} quarantined, exit {self.exit_code}>")

    def to_html(self, path):
        """Write report.html (one self-contained page) to path."""
        shutil.copyfile(os.path.join(self._files(), "report.html"), os.fspath(path))
        return os.fspath(path)

    def _repr_html_(self):
        import html
        with open(os.path.join(self._files(), "report.html"), encoding="utf-8") as f:
            page = f.read()
        return (f'<iframe srcdoc="{html.escape(page, quote=True)}" '
                'style="width:100%;height:640px;border:1px solid #ddd"></iframe>')

    def gate(self, quiet=False):
        """Raise LeaksFound (exit code 1) when links fail the gate (fail_on=), after printing the
        summary to stderr unless quiet; return self when the run is clean."""
        if self.exit_code == 0:
            return self
        text = self.summary()
        if not quiet:
            sys.stderr.write(text)
        raise LeaksFound(text, self.exit_code)

    def clean(self, split):
        """The rows of partition `split` that stay in it (not quarantined, not rejected), in the type
        they were given (a DataFrame's rows as a DataFrame, a Dataset's as a Dataset, ...; a Parquet
        path's as a pyarrow Table), in input order. With several inputs for one partition, a list of
        them, one per input."""
        lib = _lib.lib
        t = lib.la_result_table(self._h)
        part = next((p for p in range(lib.la_table_npart(t)) if lib.la_table_part_name(t, p).decode() == split), None)
        if part is None:
            raise KeyError(f"no partition '{split}'")
        n = lib.la_table_nrows(t)
        rows = lib.la_table_rows_const(t)
        keep = {}
        for i in range(n):
            r = rows[i]
            if r.part == part and lib.la_result_outcome(self._h, i) == part:
                keep.setdefault(r.file, []).append(r.line - 1)
        out = []
        for k, src in enumerate(self._sources):
            if src.part not in (split, None):
                continue
            out.append(src.take(keep.get(k, [])))
        return out[0] if len(out) == 1 else out
