#!/usr/bin/env bash
# Hostile input, over 100 cases in every class the tool refuses (JSON that json-c lets through, bad
# UTF-8 and NUL, wrong field types and values, ragged and malformed CSV/TSV, rows and inputs over
# the limits, gzip and zstd bombs, broken .npy files, bad options), each run under a memory cap:
# no crash and no kill, exit 2 with the expected FILE:LINE: FIELD: message, nothing written and a
# previous report untouched; under --on-invalid reject a bad row is one reject with its line and
# every other row is still placed. The cases are written by hostile_cases.py.
source "$(dirname "$0")/lib.bash"

# Under a sanitizer the address space cannot be capped (the shadow memory is reserved up front);
# there the cap is on the resident set instead, checked after each run.
sanitized=0
if grep -qa __asan_init "$LEAKAUDIT"; then sanitized=1; fi
CAP_KB=1500000
REAL=$LEAKAUDIT
cat >capped <<EOF
#!/usr/bin/env bash
[ $sanitized = 1 ] || ulimit -v $CAP_KB
export OPENBLAS_NUM_THREADS=1
exec "$REAL" "\$@"
EOF
chmod +x capped
LEAKAUDIT=$PWD/capped

python3 "$SRC/tests/cli/hostile_cases.py" >cases.tsv
{ printf '{"id":"b1","text":"'; head -c 512M /dev/zero | tr '\0' a; printf '"}\n'; } | zstd -q -3 -o zstd_bomb.jsonl.zst
{ yes '{"id":"x","text":"y"}' || true; } | head -c 512M | zstd -q -3 -o zstd_bomb_many_rows.jsonl.zst
printf '%s\n' '{"id":"t1","text":"one held-out row"}' >one.jsonl
ncases=$(wc -l <cases.tsv)
check "$ncases hostile cases"
[ "$ncases" -ge 100 ] || fail "only $ncases cases"

la audit --dev good.jsonl --test one.jsonl --out prev
expect_rc 0
tree_digest prev >prev.digest

peak_ok() { # the resident set of the last run stayed under the cap (sanitized builds)
    [ $sanitized = 1 ] || return 0
    local kb
    kb=$(python3 -c 'import resource; print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)')
    [ "$kb" -lt $((CAP_KB * 2)) ] || fail "$1: peak resident set ${kb} KB"
}

# A case whose whole input is refused, or a bad option: exit 2 with the message, nothing written,
# the previous report untouched, also under --on-invalid reject.
run_case() { # NAME CLASS FILE EXPECT EXTRA (EXTRA split on blanks)
    local name=$1 cls=$2 file=$3 expect=$4 extra=$5
    local -a args
    # shellcheck disable=SC2206
    local -a more=($extra)
    case $cls in
    npy) args=(--dev good.jsonl --test one.jsonl --embeddings "test=$file") ;;
    usage) args=(--dev good.jsonl --test one.jsonl) ;;
    *) args=(--dev good.jsonl --test "$file") ;;
    esac
    la audit "${args[@]}" "${more[@]}" --out prev
    [ "$rc" -lt 128 ] || fail "$name: killed or crashed (exit $rc)"
    expect_rc 2 "$name"
    expect_has err.txt "$expect"
    tree_digest prev >after.digest
    cmp -s prev.digest after.digest || fail "$name: the previous report in prev/ changed"
    no_leftovers prev
    peak_ok "$name"
    if [ "$cls" = file-row ]; then
        la audit "${args[@]}" "${more[@]}" --on-invalid reject --out "rej-$name"
        [ "$rc" -le 1 ] || fail "$name: exit $rc under --on-invalid reject"
        printf '%s\x1f%s\x1f%s\n' "rej-$name" "$file" "$expect" >>rejected.tsv
    elif [ "$cls" != usage ]; then
        la audit "${args[@]}" "${more[@]}" --on-invalid reject --out "rej-$name"
        expect_rc 2 "$name under --on-invalid reject"
        [ ! -e "rej-$name" ] || fail "$name: rej-$name was written"
    fi
}

# Bad rows are read together, one file per case: one run that must fail, one that sets them aside.
row_args=()
split_args=()
n=0
while IFS=$'\x1f' read -r name cls file expect extra; do
    case $cls in
    row) row_args+=(--test "$file"); printf '%s\x1f%s\x1f%s\n' rej-rows "$file" "$expect" >>rejected.tsv ;;
    split-row) split_args+=("$file"); printf '%s\x1f%s\x1f%s\n' rej-split "$file" "$expect" >>rejected.tsv ;;
    *) run_case "$name" "$cls" "$file" "$expect" "$extra" ;;
    esac
    n=$((n + 1))
done <cases.tsv
nrows=$(( ${#row_args[@]} / 2 ))
check "$((n - nrows - ${#split_args[@]})) whole-input and option cases: exit 2 with the message, nothing written"

check "$nrows files with one bad row each: exit 2 naming FILE:LINE, nothing written"
la audit --dev good.jsonl "${row_args[@]}" --out prev
[ "$rc" -lt 128 ] || fail "killed or crashed (exit $rc)"
expect_rc 2
expect_has err.txt "leakaudit audit: $nrows invalid rows in the input; nothing written"
tree_digest prev >after.digest
cmp -s prev.digest after.digest || fail "the previous report in prev/ changed"
no_leftovers prev
peak_ok rows
la audit --dev good.jsonl "${row_args[@]}" --on-invalid reject --out rej-rows
expect_rc 0
check "${#split_args[@]} files with a bad split field"
la audit --dev good.jsonl "${split_args[@]}" --out prev
expect_rc 2
expect_has err.txt "leakaudit audit: ${#split_args[@]} invalid rows in the input; nothing written"
la audit --dev good.jsonl "${split_args[@]}" --on-invalid reject --out rej-split
expect_rc 0

check "under --on-invalid reject each bad row is one reject with its FILE:LINE: FIELD: reason and its text"
python3 - rejected.tsv <<'PY' || fail "a bad row was not set aside as expected, or a row was lost"
import collections, json, sys
want = collections.defaultdict(dict)
for line in open(sys.argv[1], encoding="utf-8"):
    d, name, expect = line.rstrip("\n").split("\x1f")
    where, _, reason = expect.partition(": ")
    fname, _, lineno = where.rpartition(":")
    assert fname == name, (fname, name)
    want[d][name] = (int(lineno), reason)
for d, files in want.items():
    c = json.load(open(d + "/report.json"))["counts"]
    assert c["rows_read"] == c["rows_placed"] + c["rows_rejected"], (d, c)
    assert c["rows_rejected"] == len(files), (d, c["rows_rejected"], len(files))
    got = collections.defaultdict(list)
    for l in open(d + "/rejects.jsonl", encoding="utf-8"):
        r = json.loads(l)
        got[r["file"]].append(r)
    for name, (lineno, reason) in files.items():
        rs = got.get(name, [])
        assert len(rs) == 1, (name, rs)
        r = rs[0]
        assert r["line"] == lineno, (name, r["line"], lineno)
        assert reason in "; ".join(r["reasons"]), (name, reason, r["reasons"])
        assert r["record"], (name, "the rejected row's text is kept")
    assert c["rows_placed"] == c["rows_read"] - len(files), (d, c)
PY

pass
