"""python -m leakaudit audit [OPTIONS] [FILE...]: `leakaudit audit` with the same options, where
inputs may also be Parquet or Arrow/Feather files (read with pyarrow; the C program reads JSONL,
CSV and TSV). Writes the same reports into --out (default leakaudit-report), prints the same
summary and exits with the same code: 0 clean, 1 leaks found, 2 bad input or usage, 3 internal."""

import ctypes
import sys

from . import InputError, LeakauditError, Result, _fail, _lib, _Stderr
from ._inputs import Source

USAGE = """usage: python -m leakaudit audit [OPTIONS] [FILE...]
The options of `leakaudit audit` (its --help lists them); --dev, --test, --part NAME=FILE and
FILE may also name .parquet, .pq, .arrow or .feather files.
"""

_INPUTS = {"dev": "dev", "test": "test"}


def _parse(argv):
    """(inputs as (part, path), options as (name, value), out) from a `leakaudit audit` command line."""
    inputs, options, out = [], [], "leakaudit-report"
    k = 0
    while k < len(argv):
        arg = argv[k]
        k += 1
        if arg == "--":
            inputs.extend((None, a) for a in argv[k:])
            break
        if not arg.startswith("--") or arg == "-":
            inputs.append((None, arg))
            continue
        name, eq, value = arg[2:].partition("=")
        takes = _lib.lib.la_option_takes_value(name.encode())
        if takes < 0:
            raise InputError(f"--{name}: not an option of leakaudit audit")
        if takes and not eq:
            if k == len(argv):
                raise InputError(f"--{name}: a value is required")
            value = argv[k]
            k += 1
        if name in _INPUTS:
            inputs.append((_INPUTS[name], value))
        elif name == "part":
            part, sep, path = value.partition("=")
            if not sep:
                raise InputError(f"--part {value}: expected NAME=FILE")
            inputs.append((part, path))
        elif name == "out":
            out = value
        else:
            options.append((name, value if takes else None))
    return inputs, options, out


def audit_main(argv):
    if "--help" in argv or "-h" in argv:
        sys.stdout.write(USAGE)
        return 0
    lib = _lib.lib
    handle = ctypes.c_void_p()
    try:
        inputs, options, out = _parse(argv)
        s = lib.la_options_new(ctypes.byref(handle))
        if s != _lib.LA_OK:
            raise _fail(s)
        for name, value in options:
            s = lib.la_options_set(handle, name.encode(), None if value is None else value.encode())
            if s != _lib.LA_OK:
                raise _fail(s)
        sources = [Source(path, part, path) for part, path in inputs]
        for src in sources:
            s = src.add_to(handle)
            if s != _lib.LA_OK:
                raise _fail(s)
        res = ctypes.c_void_p()
        with _Stderr():
            s = lib.la_audit_run(handle, ctypes.byref(res))
        if s != _lib.LA_OK:
            raise _fail(s)
        result = Result(res, sources)
        result.write(out)
        if ("quiet", None) not in options:
            sys.stdout.write(result.summary())
        return result.exit_code
    except (LeakauditError, FileNotFoundError, TypeError) as e:
        sys.stderr.write(f"leakaudit audit: {e}\n")
        return getattr(e, "exit_code", 2)
    finally:
        lib.la_options_free(handle)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "audit":
        sys.stderr.write(USAGE)
        return 2
    return audit_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
