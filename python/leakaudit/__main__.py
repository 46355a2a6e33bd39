"""python -m leakaudit audit|split [OPTIONS] [FILE...]: `leakaudit audit` and `leakaudit split`
with the same options, where inputs may also be Parquet or Arrow/Feather files (read with pyarrow;
the C program reads JSONL, CSV and TSV). Writes the same files into --out (default
leakaudit-report, leakaudit-split), prints the same summary and exits with the same code: audit 0
clean, 1 leaks found; split 0 done, 1 dev or test under --min-share; both 2 bad input or usage, 3
internal error."""

import ctypes
import sys

from . import InputError, LeakauditError, Result, SplitResult, _fail, _lib, _Stderr
from ._inputs import Source

USAGE = """usage: python -m leakaudit audit [OPTIONS] [FILE...]
       python -m leakaudit split [OPTIONS] FILE...
The options of `leakaudit audit` and `leakaudit split` (their --help lists them); --dev, --test,
--part NAME=FILE and FILE may also name .parquet, .pq, .arrow or .feather files.
"""


class _Command:
    """What differs between the two commands: the library's functions, the result, the default
    folder, and the options that name inputs."""

    def __init__(self, name, new, run, takes_value, result, out, inputs):
        self.name, self.new, self.run, self.takes_value = name, new, run, takes_value
        self.result, self.out, self.inputs = result, out, inputs


def _commands():
    lib = _lib.lib
    return {
        "audit": _Command("audit", lib.la_options_new, lib.la_audit_run, lib.la_option_takes_value, Result,
                          "leakaudit-report", {"dev": "dev", "test": "test"}),
        # split takes its files as FILE...: --dev, --test and --part go to the library, which refuses them
        "split": _Command("split", lib.la_options_new_split, lib.la_split_run, lib.la_split_option_takes_value,
                          SplitResult, "leakaudit-split", {}),
    }


def _parse(cmd, argv):
    """(inputs as (part, path), options as (name, value), out) from a command line of cmd."""
    inputs, options, out = [], [], cmd.out
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
        takes = cmd.takes_value(name.encode())
        if takes < 0:
            raise InputError(f"--{name}: not an option of leakaudit {cmd.name}")
        if takes and not eq:
            if k == len(argv):
                raise InputError(f"--{name}: a value is required")
            value = argv[k]
            k += 1
        if name in cmd.inputs:
            inputs.append((cmd.inputs[name], value))
        elif name == "part" and cmd.name == "audit":
            part, sep, path = value.partition("=")
            if not sep:
                raise InputError(f"--part {value}: expected NAME=FILE")
            inputs.append((part, path))
        elif name == "out":
            out = value
        else:
            options.append((name, value if takes else None))
    return inputs, options, out


def command_main(cmd, argv):
    if "--help" in argv or "-h" in argv:
        sys.stdout.write(USAGE)
        return 0
    lib = _lib.lib
    handle = ctypes.c_void_p()
    try:
        inputs, options, out = _parse(cmd, argv)
        s = cmd.new(ctypes.byref(handle))
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
            s = cmd.run(handle, ctypes.byref(res))
        if s != _lib.LA_OK:
            raise _fail(s)
        result = cmd.result(res, sources)
        result.write(out)
        if ("quiet", None) not in options:
            sys.stdout.write(result.summary())
        return result.exit_code
    except (LeakauditError, FileNotFoundError, TypeError) as e:
        sys.stderr.write(f"leakaudit {cmd.name}: {e}\n")
        return getattr(e, "exit_code", 2)
    finally:
        lib.la_options_free(handle)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    commands = _commands()
    if not argv or argv[0] not in commands:
        sys.stderr.write(USAGE)
        return 2
    return command_main(commands[argv[0]], argv[1:])


if __name__ == "__main__":
    sys.exit(main())
