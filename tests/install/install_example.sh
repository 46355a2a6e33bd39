#!/usr/bin/env bash
# The library as an embedder gets it: install into a fresh prefix, build examples/embed/audit.c with
# `cc $(pkg-config --cflags --libs leakaudit)` and through find_package(leakaudit), run both on the
# bundled GSM8K example, and compare with what the program says about the same inputs.
set -euo pipefail
: "${BUILD:?}" "${SRC:?}" "${WORK:?}"
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
prefix=$WORK/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }
# a sanitized library needs its runtime in every program that loads it: not an embedder's build
if [ -n "${SANITIZE:-}" ]; then echo "skipped: the library is built with -fsanitize=$SANITIZE"; exit 77; fi

cmake --install "$BUILD" --prefix "$prefix" >install.log
for f in bin/leakaudit include/leakaudit.h lib/libleakaudit.a lib/pkgconfig/leakaudit.pc \
         lib/cmake/leakaudit/leakauditConfig.cmake lib/cmake/leakaudit/leakauditConfigVersion.cmake; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done
ls "$prefix"/lib/libleakaudit.so.*.* >/dev/null || fail "no versioned shared library"
objdump -p "$prefix/lib/libleakaudit.so" >objdump.txt
soname=$(awk '/SONAME/ {print $2}' objdump.txt)
[[ $soname == libleakaudit.so.* ]] || fail "shared library without a versioned SONAME ($soname)"

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc -std=c11 -Wall -Wextra -Werror "$SRC/examples/embed/audit.c" $(pkg-config --cflags --libs leakaudit) -o audit_pc
ldd ./audit_pc >ldd.txt
grep -q "libleakaudit.so" ldd.txt || fail "audit_pc is not linked to the shared library"

dev=$SRC/examples/gsm8k/dev.jsonl test=$SRC/examples/gsm8k/test.jsonl
# no installed encoder model: the semantic tier uses the lexical embedding (seconds, not minutes)
export LEAKAUDIT_MODELS=$WORK/no-models
set +e
LD_LIBRARY_PATH=$prefix/lib ./audit_pc "$dev" "$test" question >pc.txt 2>pc.err
rc=$?
set -e
cat pc.txt
[ "$rc" = 1 ] || fail "the example exits $rc, expected 1 (the GSM8K example has planted leaks): $(cat pc.err)"
grep -q "^leakaudit 0\.[0-9]*\.[0-9]* (header [0-9]*): 1307 rows, [1-9][0-9]* links" pc.txt || fail "unexpected summary"

# the same numbers as the program's report on the same inputs
"$prefix/bin/leakaudit" audit --dev "$dev" --test "$test" --text-field question --out report --quiet || true
links=$(python3 -c 'import json,sys; print(json.load(open("report/report.json"))["findings"]["pairs"])')
grep -q " $links links," pc.txt || fail "the library found other links than the program ($links)"

cmake -S "$SRC/tests/install/consumer" -B consumer -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLE="$SRC/examples/embed/audit.c" >consumer.log
cmake --build consumer >>consumer.log
set +e
LD_LIBRARY_PATH=$prefix/lib ./consumer/audit_cmake "$dev" "$test" question >cmake.txt
rc=$?
set -e
[ "$rc" = 1 ] && cmp -s pc.txt cmake.txt || fail "find_package build differs: $(cat cmake.txt)"
echo "ok: installed, built through pkg-config and find_package, ran"
