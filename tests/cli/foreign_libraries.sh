#!/usr/bin/env bash
# The binary loads its shared libraries from where it was linked against them and from the
# system's folders, never from the folder it is run in: a CI job runs it inside a checkout it does
# not control, where a file named like one of its libraries must not be loaded.
source "$(dirname "$0")/lib.bash"

check "leakaudit runs from a folder holding a broken copy of each library it needs"
command -v readelf >/dev/null || { echo "readelf (binutils) not found: skipped"; exit 77; }
libs=$(readelf -d "$LEAKAUDIT" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$libs" ] || fail "readelf found no NEEDED libraries in $LEAKAUDIT"
mkdir -p here
for lib in $libs; do printf 'not a library\n' >"here/$lib"; done
printf '%s\n' '{"id":"d1","text":"alpha beta gamma"}' >here/dev.jsonl
printf '%s\n' '{"id":"t1","text":"alpha beta gamma"}' >here/test.jsonl
cd here
la --version
expect_rc 0
grep -qE '^leakaudit [0-9]' out.txt || fail "--version from a folder of broken libraries: $(cat err.txt)"
la audit --dev dev.jsonl --test test.jsonl --embed none --quiet --out report
expect_rc 1
[ -s report/pairs.jsonl ] || fail "the audit run from that folder wrote no pairs"

check "no empty or relative entry in the binary's library search path"
path=$(readelf -d "$LEAKAUDIT" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p')
case ":$path:" in
    *::*) fail "an empty entry (the current folder) in the search path '$path'" ;;
esac
for dir in ${path//:/ }; do
    case "$dir" in
        /* | '$ORIGIN'*) ;;
        *) fail "a relative entry '$dir' in the search path '$path'" ;;
    esac
done
cd "$WORK"
pass
