"""The ctypes binding over include/leakaudit.h: the shared library the wheel installs beside this
file (lib/libleakaudit.so.*), or the one LEAKAUDIT_LIBRARY names. Only the declarations; what the
calls mean is in the header. Nothing here computes anything the library computes."""

import ctypes
import glob
import os

LA_OK = 0
LA_EINVAL, LA_EINPUT, LA_EIO, LA_ENOMEM, LA_ECUDA, LA_ENODEV, LA_EUNSUPPORTED, LA_EINTERNAL = range(-1, -9, -1)
OUTCOME_QUARANTINE = 0xFFFFFFFF


class ArrowSchema(ctypes.Structure):
    """struct ArrowSchema of the Arrow C Data Interface (only its size and release matter here)."""

    _fields_ = [("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
                ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64), ("children", ctypes.c_void_p),
                ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


class ArrowArray(ctypes.Structure):
    """struct ArrowArray of the Arrow C Data Interface."""

    _fields_ = [("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
                ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64), ("buffers", ctypes.c_void_p),
                ("children", ctypes.c_void_p), ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p),
                ("private_data", ctypes.c_void_p)]


class Row(ctypes.Structure):
    """la_row."""

    _fields_ = [("id", ctypes.c_char_p), ("text", ctypes.c_void_p), ("norm", ctypes.c_void_p),
                ("norm_len", ctypes.c_size_t), ("family", ctypes.c_void_p), ("label", ctypes.c_void_p),
                ("raw", ctypes.c_void_p), ("score", ctypes.c_double), ("hash", ctypes.c_uint64 * 2),
                ("date", ctypes.c_int32), ("part", ctypes.c_uint32), ("file", ctypes.c_uint32),
                ("line", ctypes.c_uint32), ("ordinal", ctypes.c_uint32)]


class Stats(ctypes.Structure):
    """la_result_stats."""

    _fields_ = [("rows_read", ctypes.c_size_t), ("rows_rejected", ctypes.c_size_t), ("links", ctypes.c_size_t),
                ("gating_links", ctypes.c_size_t), ("clusters", ctypes.c_size_t), ("quarantined", ctypes.c_size_t),
                ("heldout_rows", ctypes.c_size_t), ("heldout_clean", ctypes.c_size_t),
                ("accuracy", ctypes.c_double), ("accuracy_observed", ctypes.c_int), ("ci95", ctypes.c_double),
                ("leaks", ctypes.c_int), ("exit_code", ctypes.c_int)]


class SplitStats(ctypes.Structure):
    """la_split_stats."""

    _fields_ = [("rows_read", ctypes.c_size_t), ("rows_rejected", ctypes.c_size_t), ("demos", ctypes.c_size_t),
                ("dev", ctypes.c_size_t), ("test", ctypes.c_size_t), ("quarantined", ctypes.c_size_t),
                ("three_set", ctypes.c_int), ("exit_code", ctypes.c_int)]


def _path():
    env = os.environ.get("LEAKAUDIT_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "lib", "libleakaudit.so*")))
    if not found:
        raise ImportError(f"leakaudit: no libleakaudit.so in {here}/lib (install the package with pip install ., "
                          "or set LEAKAUDIT_LIBRARY to the library's path)")
    return found[0]


def _load():
    lib = ctypes.CDLL(_path())
    vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
    sigs = {
        "la_version": ([], cp),
        "la_strerror": ([ctypes.c_int], cp),
        "la_last_error": ([], cp),
        "la_options_new": ([ctypes.POINTER(vp)], ctypes.c_int),
        "la_options_free": ([vp], None),
        "la_options_set": ([vp, cp, cp], ctypes.c_int),
        "la_option_takes_value": ([cp], ctypes.c_int),
        "la_options_add_input": ([vp, cp, cp], ctypes.c_int),
        "la_options_add_arrow": ([vp, cp, cp, ctypes.POINTER(ArrowSchema), ctypes.POINTER(ArrowArray)], ctypes.c_int),
        "la_audit_run": ([vp, ctypes.POINTER(vp)], ctypes.c_int),
        "la_result_free": ([vp], None),
        "la_result_table": ([vp], vp),
        "la_result_heldout": ([vp], ctypes.c_uint32),
        "la_result_outcome": ([vp, sz], ctypes.c_uint32),
        "la_result_stats_get": ([vp, ctypes.POINTER(Stats)], None),
        "la_result_summary": ([vp, cp, ctypes.c_char_p, sz], sz),
        "la_result_write": ([vp, cp], ctypes.c_int),
        "la_options_new_split": ([ctypes.POINTER(vp)], ctypes.c_int),
        "la_split_option_takes_value": ([cp], ctypes.c_int),
        "la_split_run": ([vp, ctypes.POINTER(vp)], ctypes.c_int),
        "la_split_result_free": ([vp], None),
        "la_split_result_table": ([vp], vp),
        "la_split_result_set": ([vp, sz], ctypes.c_uint32),
        "la_split_result_stats_get": ([vp, ctypes.POINTER(SplitStats)], None),
        "la_split_result_summary": ([vp, cp, ctypes.c_char_p, sz], sz),
        "la_split_result_write": ([vp, cp], ctypes.c_int),
        "la_table_nrows": ([vp], sz),
        "la_table_rows_const": ([vp], ctypes.POINTER(Row)),
        "la_table_npart": ([vp], ctypes.c_uint32),
        "la_table_part_name": ([vp, ctypes.c_uint32], cp),
        "la_table_nfile": ([vp], ctypes.c_uint32),
        "la_table_file_name": ([vp, ctypes.c_uint32], cp),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes = args
        fn.restype = res
    return lib


lib = _load()


def last_error(status):
    """The library's message for a failed call on this thread (la_last_error), else its status text."""
    msg = lib.la_last_error().decode("utf-8", "replace")
    return msg or lib.la_strerror(status).decode()
