# lib.bash - assertions shared by the CLI tests (sourced, not a test of its own: ctest runs *.sh).
# Each test runs in its own scratch directory $WORK, removed again when the test passes, and
# prints every check it makes; the first failed check ends the test with exit status 1.
set -euo pipefail

: "${LEAKAUDIT:?LEAKAUDIT must name the leakaudit binary}"
: "${SRC:?SRC must name the source directory}"
: "${WORK:?WORK must name a scratch directory}"

# python3 may be a version-manager shim that takes a fifth of a second to start: resolve it once.
command -v python3 >/dev/null || { echo "python3 is needed by the CLI tests" >&2; exit 1; }
LA_PYTHON=$(python3 -c 'import sys; print(sys.executable)')
python3() { "$LA_PYTHON" "$@"; }

rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"

fail() {
    echo "FAIL: $*" >&2
    for f in out.txt err.txt; do
        if [ -s "$f" ]; then
            echo "--- $f" >&2
            head -n 40 "$f" >&2
        fi
    done
    exit 1
}

check() { echo "check: $*"; }

# la ARGS...: run leakaudit, stdout in out.txt, stderr in err.txt, exit status in $rc. A sanitizer
# report on stderr (in a -DLA_SANITIZE build) fails the test whatever the exit status.
la() {
    set +e
    "$LEAKAUDIT" "$@" >out.txt 2>err.txt
    rc=$?
    set -e
    no_sanitizer_report err.txt "leakaudit $*"
}

# no_sanitizer_report FILE WHAT: FILE holds no AddressSanitizer, LeakSanitizer or UBSan report.
no_sanitizer_report() {
    if grep -qE 'ERROR: (Address|Leak|UndefinedBehavior)Sanitizer|runtime error: ' "$1"; then
        echo "FAIL: sanitizer report from $2" >&2
        head -n 60 "$1" >&2
        exit 1
    fi
}

expect_rc() { [ "$rc" -eq "$1" ] || fail "expected exit $1, got $rc (leakaudit ${2:-})"; }

# expect_has FILE TEXT: FILE holds TEXT (fixed string).
expect_has() { grep -qF -- "$2" "$1" || fail "$1 does not contain: $2"; }
expect_lacks() { ! grep -qF -- "$2" "$1" || fail "$1 contains: $2"; }

expect_same() { cmp -s "$1" "$2" || { diff -u "$1" "$2" | head -n 40 >&2; fail "$1 and $2 differ"; }; }

# tree_digest DIR: one line per file (name and SHA-256), to compare a directory before and after.
tree_digest() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum); }

# no_leftovers DIR: nothing beside DIR from an unfinished write (DIR.tmp-*, DIR.old-*).
no_leftovers() {
    local d
    for d in "$1".tmp-* "$1".old-*; do
        [ -e "$d" ] && fail "left behind: $d"
    done
    return 0
}

# json_same A B: report.json files equal once timings and every "stages" object (the calls, items
# and bytes of each backend op, which count work, not results) are removed.
json_same() {
    python3 - "$1" "$2" <<'PY' || fail "$1 and $2 differ beyond timings and stages"
import json, sys
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in ("timings", "stages")}
    return [strip(x) for x in o] if isinstance(o, list) else o
a, b = (strip(json.load(open(p))) for p in sys.argv[1:])
if a != b:
    for k in a:
        if a[k] != b.get(k):
            print(k, json.dumps(a[k])[:400], "\n  other:", json.dumps(b.get(k))[:400], file=sys.stderr)
    sys.exit(1)
PY
}

# same_outputs A B [no-report]: every file of A is in B, byte for byte; report.json as json_same,
# or left out with a third argument (runs that searched by different methods).
same_outputs() {
    [ "$(cd "$1" && ls)" = "$(cd "$2" && ls)" ] || fail "$2 holds other files than $1: $(cd "$2" && ls | tr '\n' ' ')"
    for f in $(cd "$1" && ls); do
        if [ "$f" = report.json ]; then [ -n "${3:-}" ] || json_same "$1/$f" "$2/$f"; else expect_same "$1/$f" "$2/$f"; fi
    done
}

# json_get FILE EXPR: evaluate a Python expression over the parsed JSON document `j`.
json_get() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# strip_report IN OUT: report.json without the fields documented as varying between runs
# (the timings object and every input's blake2b_256 fingerprint).
strip_report() {
    python3 - "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j.pop("timings", None)
for i in j.get("inputs", []):
    i.pop("blake2b_256", None)
open(sys.argv[2], "w").write(json.dumps(j, indent=1, ensure_ascii=False) + "\n")
PY
}

pass() {
    cd /
    rm -rf "$WORK"
    echo "PASS"
}

# write_npy FILE DTYPE ROWS...: a C-order 2-D .npy (format 1.0) from rows of numbers, stdlib only
write_npy() {
  python3 - "$@" <<'PY'
import struct, sys
path, dtype, rows = sys.argv[1], sys.argv[2], [list(map(float, r.split(","))) for r in sys.argv[3:]]
cols = len(rows[0]) if rows else 0
hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (dtype, len(rows), cols)
hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
fmt = {"<f4": "<f", "<f2": "<e", "<f8": "<d", "<i4": "<i"}[dtype]
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
    for r in rows:
        for x in r:
            f.write(struct.pack(fmt, int(x) if fmt == "<i" else x))
PY
}
