"""Inputs in the caller's terms: pandas DataFrames, pyarrow Tables and RecordBatches, Parquet and
Feather paths, Hugging Face Datasets, lists of dicts, and JSONL/CSV/TSV paths (read by the library
itself). Each becomes one Arrow record batch handed to the library through the Arrow C Data
Interface (la_options_add_arrow), or a file path (la_options_add_input); each remembers what it
came from so that clean rows go back in the same type."""

import ctypes
import os

import pyarrow as pa
import pyarrow.compute as pc

from . import _lib
from ._errors import InputError

_ARROW_FILES = (".parquet", ".pq", ".arrow", ".feather", ".ipc")


class Source:
    """One input: its partition (None: its split field says), the name the library gives it in
    messages and generated ids, and the caller's object."""

    def __init__(self, obj, part, name):
        self.obj, self.part, self.name = obj, part, name
        self.path = None   # a file the library reads itself
        self.table = None  # else the rows as Arrow
        if isinstance(obj, (str, os.PathLike)):
            path = os.fspath(obj)
            self.name = path
            if path.lower().endswith(_ARROW_FILES):
                self.table = read_arrow_file(path)
            else:
                self.path = path
        else:
            self.table = to_arrow(obj, name)

    def add_to(self, options):
        """Hand this input to la_options (a handle); raises InputError from the library's message."""
        part = self.part.encode() if self.part else None
        if self.path is not None:
            return _lib.lib.la_options_add_input(options, part, self.path.encode())
        schema, array = _lib.ArrowSchema(), _lib.ArrowArray()
        batch = one_batch(self.table)
        batch._export_to_c(ctypes.addressof(array), ctypes.addressof(schema))
        s = _lib.lib.la_options_add_arrow(options, part, self.name.encode(), ctypes.byref(schema), ctypes.byref(array))
        if s != _lib.LA_OK:  # refused: still ours to release
            for st in (array, schema):
                if st.release:
                    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(st.release)(ctypes.addressof(st))
        return s

    def take(self, positions):
        """The rows at these 0-based positions, in the type the caller gave."""
        obj = self.obj
        mod = type(obj).__module__.split(".")[0]
        if mod == "pandas":
            return obj.iloc[positions]
        if mod == "datasets":
            return obj.select(positions)
        if isinstance(obj, list):
            return [obj[i] for i in positions]
        if isinstance(obj, pa.RecordBatch):
            return obj.take(pa.array(positions, pa.int64()))
        if self.table is not None:  # a pyarrow Table, or an Arrow file's rows
            return self.table.take(pa.array(positions, pa.int64()))
        raise TypeError(f"{self.name}: clean rows of a file the library reads are in its manifest; "
                        "use Result.write(DIR)")


def read_arrow_file(path):
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if path.lower().endswith((".parquet", ".pq")):
        import pyarrow.parquet as pq
        return pq.read_table(path)
    import pyarrow.feather as feather
    return feather.read_table(path)


def to_arrow(obj, name):
    """A pyarrow Table of the caller's rows."""
    mod = type(obj).__module__.split(".")[0]
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    if mod == "pandas":
        return pa.Table.from_pandas(obj, preserve_index=False)
    if mod == "datasets":
        if getattr(obj, "_indices", None) is None:
            return obj.data.table  # the Dataset's own Arrow table, no copy
        return obj.with_format("arrow")[:]
    if mod == "polars":
        return obj.to_arrow()
    if isinstance(obj, list):
        if obj and not all(isinstance(r, dict) for r in obj):
            bad = next(i for i, r in enumerate(obj) if not isinstance(r, dict))
            raise TypeError(f"{name}: row {bad + 1}: expected a dict, got {type(obj[bad]).__name__}")
        return pa.Table.from_pylist(obj)
    raise TypeError(f"{name}: expected a pandas DataFrame, pyarrow Table, Hugging Face Dataset, list of dicts "
                    f"or a file path, got {type(obj).__name__}")


def _readable(col, column):
    """A column of a type the library reads (leakaudit.h, la_options_add_arrow): dictionaries
    decoded, string views and binaries as strings, timestamps as ISO 8601 text, date64 as date32."""
    t = col.type
    try:
        if pa.types.is_dictionary(t):
            return _readable(pc.cast(col, t.value_type), column)
        if pa.types.is_timestamp(t):
            fmt = "%Y-%m-%dT%H:%M:%S" + ("%z" if t.tz else "")
            return pc.strftime(col, format=fmt)
        if pa.types.is_date64(t):
            return pc.cast(col, pa.date32())
        if pa.types.is_float16(t):
            return pc.cast(col, pa.float32())
        if pa.types.is_decimal(t):
            return pc.cast(col, pa.float64())
        if (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_string_view(t)
                or pa.types.is_binary_view(t) or pa.types.is_time(t) or pa.types.is_duration(t)):
            return pc.cast(col, pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise InputError(f"column '{column}': cannot be read as a string, number, date, list or struct ({e})") from e
    return col


def one_batch(table):
    """The table as a single record batch of readable columns."""
    cols = [_readable(table.column(i), table.schema.field(i).name) for i in range(table.num_columns)]
    table = pa.Table.from_arrays(cols, names=table.column_names)
    try:
        table = table.combine_chunks()
    except pa.ArrowInvalid:  # more than 2 GiB of text in one column: 64-bit offsets
        cols = [pc.cast(c, pa.large_string()) if pa.types.is_string(c.type) else c for c in table.columns]
        table = pa.Table.from_arrays(cols, names=table.column_names).combine_chunks()
    batches = table.to_batches()
    if len(batches) == 1:
        return batches[0]
    return pa.RecordBatch.from_pylist([], schema=table.schema) if not batches else pa.concat_batches(batches)
