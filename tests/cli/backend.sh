#!/usr/bin/env bash
# Backend selection on a machine without a usable GPU: auto runs on the CPU and says why, in the
# summary and the report, and every stage of report.json says it ran on the cpu backend;
# --backend gpu (or LEAKAUDIT_BACKEND=gpu) exits 2 with the reason (with no driver at all, that there
# is none) and writes nothing; doctor passes and names the CPU's kernels. On a machine with a GPU this test is skipped (the GPU tests cover it).
source "$(dirname "$0")/lib.bash"

check "doctor names the CPU and the code its hot loops take; the tiles' kernel follows LEAKAUDIT_NO_INT8"
LEAKAUDIT_NO_INT8=1 la doctor
expect_rc 0
expect_has out.txt "CPU:"
grep -qE "^  kernels: MinHash (AVX-512|portable loop.*), SimHash (AVX-512|AVX2|portable loop), lexical n-grams (AVX-512|AVX2|portable loop), similarity tiles sgemm$" out.txt ||
    fail "doctor's kernels line: $(grep kernels out.txt)"
la doctor
expect_rc 0
grep -qE "^  kernels: .*similarity tiles (int8 AVX-512 VNNI|int8 AVX2|sgemm)$" out.txt || fail "doctor's tiles kernel"
if ! grep -q "^  none:" out.txt; then echo "a device is present: skipped"; exit 77; fi

check "a CUDA build opens cuBLAS only when asked: not at start-up, and doctor says where it is"
if grep -q "CUDA backend: compiled in" out.txt; then
  expect_has out.txt "  cuBLAS: "
  if command -v ldd >/dev/null && ldd "$LEAKAUDIT" | grep -q libcublas; then fail "the program links cuBLAS at start-up"; fi
fi

printf '%s\n' '{"id":"d1","text":"one"}' >dev.jsonl
printf '%s\n' '{"id":"t1","text":"two"}' >test.jsonl

check "--backend auto: the CPU, and the reason is in the summary, report.json and report.md"
la audit --dev dev.jsonl --test test.jsonl --backend auto --out auto
expect_rc 0
expect_has out.txt "(backend: cpu; auto chose the CPU:"
[ "$(json_get auto/report.json 'j["parameters"]["backend"]')" = cpu ] || fail "report.json backend"
[ "$(json_get auto/report.json 'j["parameters"]["backend_note"].startswith("auto chose the CPU")')" = True ] || fail "backend_note"
expect_has auto/report.md "Backend: cpu (auto chose the CPU"
for st in near_signatures near_simhash near_band_keys near_buckets; do
  [ "$(json_get auto/report.json "j['findings']['near']['stages']['$st']['backend']")" = cpu ] || fail "stage $st"
done
[ "$(json_get auto/report.json "j['findings']['semantic']['stages']['semantic_tiles']['backend']")" = cpu ] || fail "tiles stage"
[ "$(json_get auto/report.json "j['findings']['near']['backend']")" = cpu ] || fail "findings.near.backend"

check "--backend gpu and LEAKAUDIT_BACKEND=gpu: exit 2 with the reason, nothing written"
la audit --dev dev.jsonl --test test.jsonl --backend gpu --out gpu
expect_rc 2
expect_has err.txt "--backend gpu:"
[ ! -e gpu ] || fail "--out written"
if [ ! -e /proc/driver/nvidia/version ] && ! ls /dev/nvidia* >/dev/null 2>&1 && ! grep -q "built without nvcc" err.txt; then
  # no driver at all: say so, not that the (absent) driver is too old
  if grep -q "insufficient" err.txt; then fail "a missing driver reported as insufficient: $(cat err.txt)"; fi
  expect_has err.txt "no NVIDIA driver installed"
fi
LEAKAUDIT_BACKEND=gpu la audit --dev dev.jsonl --test test.jsonl --out gpuenv
expect_rc 2
[ ! -e gpuenv ] || fail "--out written"

check "--backend cpu and a bad LEAKAUDIT_BACKEND"
la audit --dev dev.jsonl --test test.jsonl --backend cpu --out cpu
expect_rc 0
[ "$(json_get cpu/report.json 'j["parameters"]["backend_note"]')" = "" ] || fail "cpu needs no note"
LEAKAUDIT_BACKEND=tpu la audit --dev dev.jsonl --test test.jsonl --out bad
expect_rc 2
expect_has err.txt "LEAKAUDIT_BACKEND=tpu"
la audit --dev dev.jsonl --test test.jsonl --backend tpu --out bad2
expect_rc 2

check "split --backend: auto on the CPU with the reason in report.json, gpu exits 2 writing nothing, cpu the same groups"
printf '%s\n' '{"id":"a","date":"2020-01-01","text":"the quick brown fox jumps over the lazy dog again and again"}' \
  '{"id":"b","date":"2021-06-01","text":"the quick brown fox jumps over the lazy dog again and again!"}' \
  '{"id":"c","date":"2020-03-01","text":"something else entirely, with other words in it"}' >rows.jsonl
la split --cutoff 2021-01-01 --date-field date rows.jsonl --backend auto --out split_auto
expect_rc 0
[ "$(json_get split_auto/report.json 'j["parameters"]["backend"]')" = cpu ] || fail "split report.json backend"
[ "$(json_get split_auto/report.json 'j["parameters"]["backend_note"].startswith("auto chose the CPU")')" = True ] || fail "split backend_note"
la split --cutoff 2021-01-01 --date-field date rows.jsonl --backend gpu --out split_gpu
expect_rc 2
expect_has err.txt "--backend gpu:"
[ ! -e split_gpu ] || fail "split --out written"
la split --cutoff 2021-01-01 --date-field date rows.jsonl --backend cpu --out split_cpu
expect_rc 0
cmp split_auto/assignments.jsonl split_cpu/assignments.jsonl || fail "split assignments differ between auto and cpu"
[ "$(json_get split_cpu/report.json 'j["parameters"]["backend_note"]')" = "" ] || fail "split cpu needs no note"
# the near copy a/b spans the cutoff: one group, quarantined, on either backend
grep -q '"a".*quarantine' split_cpu/assignments.jsonl || fail "near copies not grouped"

pass
