"""leakaudit from Python: audit the partitions of an evaluation set for leaks across the held-out
boundary, or make a leak-free split of it, given as pandas DataFrames, pyarrow Tables, Parquet
paths, Hugging Face Datasets or DatasetDicts, or lists of dicts.

    import leakaudit
    r = leakaudit.audit(dev=dev_df, test=test_df, text="question", cutoff="2026-01-01")
    print(r.summary())
    r.pairs, r.clusters, r.assignments   # DataFrames: the CLI's pairs/clusters/assignments.jsonl
    clean_test = r.clean("test")         # the clean rows, in the type given
    r.gate()                             # raises LeaksFound (exit code 1) when leaks gate the run

    s = leakaudit.split(df, text="question", cutoff="2026-01-01")
    s.assignments                        # DataFrame: the CLI's assignments.jsonl
    new_test = s.split("test")           # that set's rows, in the type given

Everything is computed by the C library (libleakaudit, include/leakaudit.h) with the options of
`leakaudit audit` and `leakaudit split` by their long names (fail_on="exact" is --fail-on exact,
min_share=0.1 is --min-share 0.1); this package only moves rows in (through the Arrow C Data
Interface) and results out.
"""

import ctypes
import os
import shutil
import sys
import tempfile

from . import _lib
from ._errors import InputError, LeakauditError
from ._inputs import Source

__all__ = ["audit", "split", "Result", "SplitResult", "LeakauditError", "InputError", "LeaksFound", "version"]


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


def _field_items(text, id):
    """The text and id fields as (name, value) pairs for la_options_set."""
    return [("text-field", t) for t in ([text] if isinstance(text, str) else text or [])] + \
        [("id-field", id)] * (id is not None)


def _run(new, run, sources, settings, embeddings, progress, doing):
    """Make options with new (la_options_new or la_options_new_split), set settings ((name, value)
    pairs) and embeddings ((spec prefix, NumPy array) pairs: each saved as .npy and set as
    embeddings=PREFIX+PATH), hand every source over and run (la_audit_run or la_split_run); the
    result's handle."""
    tmpdir = None
    handle = ctypes.c_void_p()
    bar = _progress(progress, len(sources) + 1)
    lib = _lib.lib
    try:
        s = new(ctypes.byref(handle))
        if s != _lib.LA_OK:
            raise _fail(s)
        settings = list(settings)
        if embeddings:
            import numpy as np
            tmpdir = tempfile.mkdtemp(prefix="leakaudit-emb-")
            for k, (prefix, vectors) in enumerate(embeddings):
                path = os.path.join(tmpdir, f"{k}.npy")
                np.save(path, np.ascontiguousarray(vectors, dtype=np.float32))
                settings.append(("embeddings", prefix + path))
        for name, value in settings:
            s = lib.la_options_set(handle, name.encode(), None if value is None else value.encode())
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
            bar.set_description(f"leakaudit: {doing}")
        res = ctypes.c_void_p()
        with _Stderr() as err:
            s = run(handle, ctypes.byref(res))
        if s != _lib.LA_OK:
            raise _fail(s, err.text.strip())
        if bar is not None:
            bar.update(1)
        return res
    finally:
        if bar is not None:
            bar.close()
        lib.la_options_free(handle)
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)


def audit(data=None, *, dev=None, test=None, parts=None, text="text", id="id", embeddings=None, progress=None,
          **options):
    """Run `leakaudit audit` on rows in memory or in files and return its Result.

    data: a DatasetDict or dict mapping partition names to rows, or one table whose split field
    (split_field=, default "split") names each row's partition. dev, test: shorthands; parts: more
    partitions by name. Rows: pandas DataFrame, pyarrow Table or RecordBatch, Hugging Face Dataset,
    list of dicts, or a path (.parquet/.arrow/.feather read with pyarrow; .jsonl/.csv/.tsv, .gz and
    .zst read by the library). text: the text field, or a list of fields joined with a newline
    (dotted paths; "messages.*.content" joins a chat column's turns; "test=question" for one
    partition); id: the id field (a table without it gets ids NAME:ROW). embeddings: {partition: NumPy array},
    one float32 row per input row. Every other keyword is a `leakaudit audit` option by its long
    name with underscores (cutoff="2026-01-01", embed="lexical", fail_on="exact", near="off",
    within=True, threads=4). progress: False turns the tqdm bar off.

    Raises InputError (exit code 2) for bad options or input, naming NAME:ROW: FIELD.
    """
    sources = [Source(obj, part, part or "rows") for part, obj in _partitions(data, dev, test, parts)]
    settings = _field_items(text, id) + list(_option_items(options))
    vectors = [(f"{part}=", v) for part, v in (embeddings or {}).items()]
    lib = _lib.lib
    res = _run(lib.la_options_new, lib.la_audit_run, sources, settings, vectors, progress, "auditing")
    return Result(res, sources)


def _split_inputs(data):
    """(name, object) pairs of split's inputs: a DatasetDict or dict by its keys, a list or tuple
    of tables one by one (rows1, rows2, ...), or one table (rows)."""
    if hasattr(data, "items") and not hasattr(data, "columns"):
        return list(data.items())
    if isinstance(data, tuple) or (isinstance(data, list) and data and not isinstance(data[0], dict)):
        return [(f"rows{k + 1}", obj) for k, obj in enumerate(data)]
    return [("rows", data)]


def split(data, *, text="text", id="id", embeddings=None, progress=None, **options):
    """Run `leakaudit split` on rows in memory or in files and return its SplitResult.

    data: the rows to split, of any kind audit takes (DataFrame, pyarrow Table, Dataset, list of
    dicts, a path), or several such inputs as a list or tuple, or a DatasetDict or dict of them
    (their names only name them in messages and generated ids: the rule places every row). text:
    the text field or fields (optional for a split; they group copies); id: the id field.
    embeddings: a NumPy array, one float32 row per input row in input order across the inputs.
    Every other keyword is a `leakaudit split` option by its long name with underscores: the rule,
    cutoff="2026-01-01" (chronological: every row needs a date) or three_set=True (every row needs
    a label) with seed=, demos_per_class=, dev_share=, fingerprint_key=; min_share=, near="off",
    embed="lexical", family_field=, date_field=, label_field=, backend=, threads=... progress: False
    turns the tqdm bar off.

    Raises InputError (exit code 2) for bad options or input, naming NAME:ROW: FIELD.
    """
    sources = [Source(obj, None, name) for name, obj in _split_inputs(data)]
    settings = _field_items(text, id) + list(_option_items(options))
    vectors = [("", embeddings)] if embeddings is not None else []
    lib = _lib.lib
    res = _run(lib.la_options_new_split, lib.la_split_run, sources, settings, vectors, progress, "splitting")
    return SplitResult(res, sources)


class _Outcome:
    """What a result of the library shares: its handle, the files the command writes (written once
    by the library into a private folder when first asked for) and the rows as the caller gave
    them. A subclass names the library's functions for its kind of result."""

    _free = _write = _stats_get = _summary = None  # names of the la_* functions
    _Stats = None

    def __init__(self, handle, sources):
        self._h = handle
        self._sources = sources
        self._dir = None
        self._written = None
        self._tables = {}
        st = self._Stats()
        getattr(_lib.lib, self._stats_get)(handle, ctypes.byref(st))
        self.stats = {name: getattr(st, name) for name, _ in self._Stats._fields_}
        self.exit_code = st.exit_code

    def __del__(self):
        self.close()

    def close(self):
        """Free the library's result and the private folder (the object is unusable after)."""
        if getattr(self, "_h", None):
            getattr(_lib.lib, self._free)(self._h)
            self._h = None
        if getattr(self, "_dir", None):
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def write(self, path):
        """Write every file the command writes into --out PATH (atomically: PATH is replaced only
        when it is absent, empty or an earlier report). Rows read from JSONL files are copied back
        from those files into the manifests, so they must still be there as they were read."""
        path = os.fspath(path)
        s = getattr(_lib.lib, self._write)(self._h, path.encode())
        if s != _lib.LA_OK:
            raise _fail(s)
        self._written = path
        return path

    def _files(self):
        if self._dir is None:
            self._dir = tempfile.mkdtemp(prefix="leakaudit-")
            out = os.path.join(self._dir, "report")
            s = getattr(_lib.lib, self._write)(self._h, out.encode())
            if s != _lib.LA_OK:
                raise _fail(s)
        return os.path.join(self._dir, "report")

    def _summary_text(self):
        """The command's summary, naming the folder written to (if any)."""
        where = (self._written or "").encode()
        fn = getattr(_lib.lib, self._summary)
        n = fn(self._h, where, None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        fn(self._h, where, buf, n + 1)
        return buf.value.decode("utf-8", "replace")

    def _rows_where(self, table, keep, wanted=lambda src: True):
        """The rows for which keep(row index, la_row) holds, in the type the caller gave them, in
        input order, from the inputs wanted(Source) picks: one input's alone, several inputs' as a
        list, one per input."""
        lib = _lib.lib
        rows = lib.la_table_rows_const(table)
        positions = {}
        for i in range(lib.la_table_nrows(table)):
            if keep(i, rows[i]):
                positions.setdefault(rows[i].file, []).append(rows[i].line - 1)
        out = [src.take(positions.get(k, [])) for k, src in enumerate(self._sources) if wanted(src)]
        return out[0] if len(out) == 1 else out

    @staticmethod
    def _part_index(table, name):
        lib = _lib.lib
        names = [lib.la_table_part_name(table, p).decode() for p in range(lib.la_table_npart(table))]
        return names.index(name) if name in names else None

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
    def rejects(self):
        """Rejected rows with their reasons (rejects.jsonl; with on_invalid="reject")."""
        return self._jsonl("rejects.jsonl")


class Result(_Outcome):
    """What one audit decided. The tables are the CLI's own files (pairs.jsonl, clusters.jsonl,
    assignments.jsonl) as DataFrames."""

    _free, _write, _stats_get, _summary = "la_result_free", "la_result_write", "la_result_stats_get", "la_result_summary"
    _Stats = _lib.Stats

    def __init__(self, handle, sources):
        super().__init__(handle, sources)
        self.leaks = bool(self.stats["leaks"])

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

    def summary(self):
        """The summary `leakaudit audit` prints: rows, links by kind and grade, clusters, the clean
        held-out rows and their 95% interval, the exit code."""
        text = self._summary_text()
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
        part = self._part_index(t, split)
        if part is None:
            raise KeyError(f"no partition '{split}'")
        return self._rows_where(t, lambda i, r: r.part == part and lib.la_result_outcome(self._h, i) == part,
                                lambda src: src.part in (split, None))


class SplitResult(_Outcome):
    """What one split decided: every row's set (demos under the three-set rule, dev, test or
    quarantine). assignments is the CLI's assignments.jsonl as a DataFrame."""

    _free, _write = "la_split_result_free", "la_split_result_write"
    _stats_get, _summary = "la_split_result_stats_get", "la_split_result_summary"
    _Stats = _lib.SplitStats

    def __init__(self, handle, sources):
        super().__init__(handle, sources)
        self.three_set = bool(self.stats["three_set"])

    @property
    def sets(self):
        """The names of the sets a row can be placed in, "quarantine" last."""
        return (["demos"] if self.three_set else []) + ["dev", "test", "quarantine"]

    @property
    def assignments(self):
        """Every input row (assignments.jsonl): id, split_out (the set), reasons; the family under
        the chronological rule, label and group under the three-set rule."""
        return self._jsonl("assignments.jsonl")

    @property
    def manifest(self):
        """manifest.json of a three-set split (seed, settings, counts per class and set,
        fingerprints) as a dict; None under the chronological rule."""
        if not self.three_set:
            return None
        import json
        with open(os.path.join(self._files(), "manifest.json"), encoding="utf-8") as f:
            return json.load(f)

    def split(self, name):
        """The rows placed in set `name` ("dev", "test", "quarantine", "demos"), in the type they
        were given (a DataFrame's rows as a DataFrame, a Dataset's as a Dataset, ...; a Parquet
        path's as a pyarrow Table), in input order. With several inputs, a list of them, one per
        input."""
        if name not in self.sets:
            raise KeyError(f"no set '{name}' (sets: {', '.join(self.sets)})")
        lib = _lib.lib
        t = lib.la_split_result_table(self._h)
        want = _lib.OUTCOME_QUARANTINE if name == "quarantine" else self._part_index(t, name)
        return self._rows_where(t, lambda i, r: lib.la_split_result_set(self._h, i) == want)

    rows = split

    def summary(self):
        """The summary `leakaudit split` prints: rows per set, rejects (and under three-set the dev
        share reached and the majority-class floor)."""
        return self._summary_text()

    def __repr__(self):
        st = self.stats
        sets = ", ".join(f"{name} {st['quarantined' if name == 'quarantine' else name]}" for name in self.sets)
        return f"<leakaudit.SplitResult: {st['rows_read']} rows: {sets}; exit {self.exit_code}>"
