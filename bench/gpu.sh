#!/usr/bin/env bash
# bench/gpu.sh - the GPU device check of leakaudit, in one command, for an NVIDIA Hopper machine
# (H100/H200 class) that has the NVIDIA driver but no package registry and only minutes to spare.
#
# 1. Prepare, here (a machine with nvcc, CMake and the build dependencies; no GPU needed):
#        bench/gpu.sh --prepare
#    builds Release into build-gpu-release (CUDA architectures 80-real;90-real;90-virtual, so Hopper
#    runs sm_90 machine code) and packs bench/gpu-bundle/bundle.tar.gz: the programs (leakaudit,
#    bench_gpu, the tests/gpu parity tests) and the shared libraries they need beyond the base system
#    (found with ldd: OpenBLAS, json-c, libsodium, utf8proc, libcsv, xxHash, zstd, libgomp,
#    libgfortran, libcudart, ...). cuBLAS is NOT bundled: libcublasLt alone is over 500 MB and no
#    static cuBLAS ships with this toolkit, so --run takes libcublas.so.13 and libcublasLt.so.13 from
#    the device machine (its CUDA toolkit, or the nvidia-cublas Python wheel; LA_CUBLAS_DIR=DIR
#    overrides the search). The bundle is checked to stay under 60 MB.
#
# 2. Run, there:
#        bench/gpu.sh --run OUTDIR
#    (through the device tool: command "bench/gpu.sh --run $OUT", carry ["bench/gpu-bundle"],
#    timeout_s 600.) It unpacks the bundle, runs `leakaudit doctor`, the GPU parity tests, and the
#    benchmarks, printing progress as it goes, and writes ONE results file, OUTDIR/gpu-results.txt:
#      - MinHash GB/s of text at 128 permutations (end to end and kernels alone), parity spot check;
#      - similarity TFLOP/s of la_cuda_simtile against plain cublasGemmEx at the same tile shape and
#        precision (the ratio), fp16 and TF32;
#      - end-to-end time of the 1M seen x 100k held-out join (d = 384, synthetic unit vectors);
#      - the acceptance checks of issue 6 (ratio >= 0.6, MinHash >= 5 GB/s, 1M x 100k <= 30 s).
#    Before the benchmarks, the pipeline parity check (also alone: bench/gpu.sh --parity, below):
#      - `leakaudit audit --backend gpu` and `--backend cpu` on examples/gsm8k, and on the
#        site-policy versions when their JSONL is given (bench/gpu.sh --run OUTDIR [SITE.jsonl],
#        e.g. ../shared/data/site-policy/policy_versions.jsonl); pairs.jsonl and
#        assignments.jsonl must be byte-identical (parity.<data>.* lines), report.json's stages must
#        say cuda, and each stage's throughput is printed (stage.<data>.<name> lines);
#      - test_backend_ops (every backend op against the CPU reference) and test_backend_dispatch.
#    The whole log goes to OUTDIR/gpu-run.log. Total device time is kept under about 8 minutes:
#    LA_E2E_BUDGET (seconds, default 200) caps the end-to-end run, which extrapolates past it;
#    LA_GPU_PARITY_ONLY=1 stops after the parity check and the tests.
#
# 3. Parity alone, with any build (on a machine without a device the gpu runs fail with exit 2,
#    which is reported, not hidden):
#        bench/gpu.sh --parity BUILD_DIR OUTDIR [SITE.jsonl]
#    Results go to OUTDIR/gpu-results.txt; OUTDIR defaults to $OUT when that is set.
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
bundle_dir="$here/bench/gpu-bundle"

prepare() {
    local build="$here/build-gpu-release"
    cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
    cmake --build "$build" -j"$(nproc)" --target leakaudit bench_gpu test_gpu_near test_gpu_simtile \
        test_gpu_semantic test_gpu_encoder bench_encoder test_backend_ops test_backend_dispatch || exit 1
    if ! ldd "$build/leakaudit" | grep -q libcudart; then
        echo "the build has no CUDA backend (no nvcc found?): nothing to run on a GPU" >&2
        exit 1
    fi
    local stage; stage=$(mktemp -d)
    mkdir -p "$stage/bin" "$stage/lib"
    cp "$build/leakaudit" "$build/bench/gpu/bench_gpu" "$build/bench/encoder/bench_encoder" \
        "$build"/tests/gpu/test_gpu_* "$build/tests/test_backend_ops" "$build/tests/test_backend_dispatch" \
        "$stage/bin/"
    rm -f "$stage"/bin/*.cmake
    # Shared libraries beyond the base system. Left out: glibc's own, the C++ runtime (the device's
    # is newer and compatible), the driver (libcuda) and cuBLAS (taken from the device, see above).
    for b in "$stage"/bin/*; do ldd "$b"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
        grep -Ev '/(ld-linux|libc|libm|libdl|libpthread|librt|libutil|libgcc_s|libstdc\+\+|libcuda|libcublas|libcublasLt|libnvidia)[.-]' |
        while read -r lib; do cp -L "$lib" "$stage/lib/"; done
    {
        echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(ldd --version | head -1)"
        echo "git $(git -C "$here" rev-parse --short HEAD 2>/dev/null) (plus uncommitted changes, if any)"
        "$build/leakaudit" --version 2>/dev/null || true
        /usr/local/cuda/bin/nvcc --version 2>/dev/null | tail -2
    } >"$stage/BUILD_INFO"
    mkdir -p "$bundle_dir"
    rm -f "$bundle_dir/bundle.tar.gz"
    tar -C "$stage" -czf "$bundle_dir/bundle.tar.gz" . || exit 1
    local raw packed
    raw=$(du -sb "$stage" | cut -f1)
    packed=$(stat -c %s "$bundle_dir/bundle.tar.gz")
    rm -rf "$stage"
    echo "bundle: $bundle_dir/bundle.tar.gz, $((packed / 1048576)) MiB packed ($((raw / 1048576)) MiB unpacked)"
    if [ "$packed" -gt $((60 * 1048576)) ]; then
        echo "bundle is over 60 MB: the device tool carries 64 MiB in all" >&2
        exit 1
    fi
    echo "next: on the device machine, bench/gpu.sh --run OUTDIR (carry bench/gpu-bundle)"
}

# Directory holding $1 on this machine, or nothing.
find_lib() {
    local name=$1 d
    for d in "${LA_CUBLAS_DIR:-}" /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
        /usr/local/cuda-13*/lib64 /usr/local/cuda-13*/targets/x86_64-linux/lib; do
        [ -n "$d" ] && [ -e "$d/$name" ] && { echo "$d"; return 0; }
    done
    local py
    for py in python3 /opt/torch/.venv/bin/python3; do
        command -v "$py" >/dev/null 2>&1 || continue
        d=$("$py" - "$name" <<'PY' 2>/dev/null
import os, site, sys
roots = list(site.getsitepackages()) + [site.getusersitepackages()]
for r in roots:
    for sub in ("nvidia/cu13/lib", "nvidia/cublas/lib"):
        p = os.path.join(r, sub)
        if os.path.exists(os.path.join(p, sys.argv[1])):
            print(p)
            sys.exit(0)
PY
)
        [ -n "$d" ] && { echo "$d"; return 0; }
    done
    d=$(ldconfig -p 2>/dev/null | awk -v n="$name" '$1 == n {print $NF; exit}')
    [ -n "$d" ] && { dirname "$d"; return 0; }
    d=$(find / -xdev \( -path /proc -o -path /sys \) -prune -o -name "$name" -print 2>/dev/null | head -1)
    [ -n "$d" ] && { dirname "$d"; return 0; }
    return 1
}

# parity BIN OUT RES LOG [SITE.jsonl]: the pipeline on both backends, byte for byte, with the
# stages' backends and throughput; the backend tests. Appends key = value lines to RES.
parity() {
    local bin=$1 out=$2 res=$3 log=$4 site=${5:-} work
    work=$(mktemp -d /tmp/la-parity.XXXXXX)
    local sets=("gsm8k")
    if [ -n "$site" ]; then
        if [ -f "$site" ]; then
            python3 - "$site" "$work/site.jsonl" <<'PY' && sets+=("site_policy")
import json, sys
with open(sys.argv[2], "w") as g:
    for l in open(sys.argv[1]):
        r = json.loads(l)
        side = "dev" if r["version_idx"] < max(1, int(r["n_versions"] * 0.7)) else "test"
        g.write(json.dumps({"id": "%s@%d" % (r["family"], r["version_idx"]), "text": r["text"], "split": side,
                            "date": r["date"]}) + "\n")
PY
        else
            echo "parity.site_policy = not run (no file $site)" >>"$res"
        fi
    fi
    local set be
    for set in "${sets[@]}"; do
        local args
        if [ "$set" = gsm8k ]; then
            args=(--dev "$here/examples/gsm8k/dev.jsonl" --test "$here/examples/gsm8k/test.jsonl" --text-field question)
        else
            args=("$work/site.jsonl" --date-field date --date-format iso8601 --cutoff 2022-01-01 --max-cluster 0)
        fi
        for be in cpu gpu; do
            LEAKAUDIT_FSYNC=0 "$bin" audit "${args[@]}" --backend "$be" --quiet --out "$work/$set.$be" \
                >>"$log" 2>"$work/$set.$be.err"
            local rc=$?
            cat "$work/$set.$be.err" >>"$log"
            echo "parity.$set.$be.exit = $rc" >>"$res"
            [ "$rc" -le 1 ] || sed "s/^/parity.$set.$be.error | /" "$work/$set.$be.err" >>"$res"
        done
        local f
        for f in pairs.jsonl assignments.jsonl; do
            if [ ! -f "$work/$set.gpu/$f" ] || [ ! -f "$work/$set.cpu/$f" ]; then
                echo "parity.$set.$f = not compared (a run failed)" >>"$res"
            elif cmp -s "$work/$set.cpu/$f" "$work/$set.gpu/$f"; then
                echo "parity.$set.$f = identical ($(wc -l <"$work/$set.cpu/$f") lines)" >>"$res"
            else
                echo "parity.$set.$f = DIFFERENT" >>"$res"
            fi
        done
        local r
        for r in cpu gpu; do
            [ -f "$work/$set.$r/report.json" ] || continue
            python3 - "$work/$set.$r/report.json" "$set" "$r" >>"$res" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
tag = "stage.%s.%s" % (sys.argv[2], sys.argv[3])
print("%s.run_backend = %s (%s)" % (tag, j["parameters"]["backend"], j["parameters"].get("backend_note") or "no note"))
for tier in ("near", "semantic"):
    for name, st in j.get("findings", {}).get(tier, {}).get("stages", {}).items():
        sec = j["timings"].get(name + "_s")
        rate = ""
        if sec:
            rate = ", %.1f MB/s, %.0f items/s" % (st["bytes"] / sec / 1e6, st["items"] / sec)
        print("%s.%s = %s%s; %d calls, %.0f items, %.0f bytes, %s s (timings are in ms)%s" % (
            tag, name, st["backend"], " (fell back: %s)" % st["fallback"] if st["fallback"] else "", st["calls"],
            st["items"], st["bytes"], sec, rate))
PY
        done
    done
    local t
    for t in test_backend_ops test_backend_dispatch; do
        local tb
        tb=$(dirname "$bin")/$t
        [ -x "$tb" ] || tb=$(dirname "$bin")/tests/$t
        [ -x "$tb" ] || { echo "test.$t = not found" >>"$res"; continue; }
        LA_SOURCE_DIR="$here" timeout 240 "$tb" >"$work/$t.log" 2>&1
        local rc=$?
        cat "$work/$t.log" >>"$log"
        echo "test.$t = $([ $rc = 0 ] && echo pass || echo "FAIL (exit $rc)")" >>"$res"
        grep '^backend ' "$work/$t.log" | sed "s/^/test.$t | /" >>"$res"
    done
    rm -rf "$work"
}

run() {
    local out=$1
    mkdir -p "$out" || exit 1
    local res="$out/gpu-results.txt" log="$out/gpu-run.log" t_start=$SECONDS
    : >"$log"
    say() { echo "[gpu.sh $((SECONDS - t_start))s] $*" | tee -a "$log" >&2; }
    result() { echo "$*" >>"$res"; }
    {
        echo "# leakaudit GPU device check, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "# produced by bench/gpu.sh --run; see docs/gpu.md for what each line measures"
    } >"$res"
    local tarball="$bundle_dir/bundle.tar.gz"
    if [ ! -f "$tarball" ]; then
        say "no bundle at $tarball: run bench/gpu.sh --prepare first, and carry bench/gpu-bundle"
        result "status = no bundle"
        exit 1
    fi
    local b; b=$(mktemp -d /tmp/la-gpu.XXXXXX)
    tar -C "$b" -xzf "$tarball" || exit 1
    result "bundle = $(head -1 "$b/BUILD_INFO")"
    local libs="$b/lib" missing=""
    for l in libcublas.so.13 libcublasLt.so.13; do
        local d; d=$(find_lib "$l") || { missing="$missing $l"; continue; }
        case ":$libs:" in *":$d:"*) ;; *) libs="$libs:$d" ;; esac
    done
    export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    result "library_path = $LD_LIBRARY_PATH"
    [ -n "$missing" ] && { say "cuBLAS not found on this machine:$missing (set LA_CUBLAS_DIR)"; result "status = cuBLAS missing:$missing"; }

    say "device"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader 2>&1 |
            sed 's/^/device = /' >>"$res"
    fi
    say "leakaudit doctor"
    "$b/bin/leakaudit" doctor >"$out/doctor.txt" 2>&1
    result "doctor.exit = $?"
    sed 's/^/doctor | /' "$out/doctor.txt" >>"$res"
    cat "$out/doctor.txt" >>"$log"

    say "parity tests"
    local t
    for t in "$b"/bin/test_gpu_*; do
        local name rc; name=$(basename "$t")
        say "  $name"
        timeout 240 "$t" >"$out/$name.log" 2>&1
        rc=$?
        cat "$out/$name.log" >>"$log"
        case $rc in 0) st=pass ;; 77) st=skipped ;; 124) st="FAIL (timed out)" ;; *) st="FAIL (exit $rc)" ;; esac
        result "test.$name = $st"
        [ "$rc" = 0 ] || tail -20 "$out/$name.log" | sed "s/^/test.$name | /" >>"$res"
        rm -f "$out/$name.log"
    done

    say "pipeline parity: --backend gpu against --backend cpu"
    parity "$b/bin/leakaudit" "$out" "$res" "$log" "${2:-}"
    if [ -n "${LA_GPU_PARITY_ONLY:-}" ]; then
        result "run.seconds = $((SECONDS - t_start))"
        cat "$res"
        rm -rf "$b"
        return
    fi

    local bench="$b/bin/bench_gpu"
    say "MinHash benchmark (1 GB of text)"
    timeout 150 "$bench" minhash 1024 2> >(tee -a "$log" >&2) | tee -a "$log" |
        awk '$1 == "RESULT" {$1 = ""; sub(/^ /, ""); k = $1; $1 = ""; print k " =" $0}' >>"$res"
    say "similarity benchmark (16k x 262k x 384, against cublasGemmEx)"
    timeout 200 "$bench" sim 16384 262144 2> >(tee -a "$log" >&2) | tee -a "$log" |
        awk '$1 == "RESULT" {$1 = ""; sub(/^ /, ""); k = $1; $1 = ""; print k " =" $0}' >>"$res"
    local budget=${LA_E2E_BUDGET:-200}
    say "end to end: 1M seen x 100k held-out (budget ${budget}s)"
    timeout $((budget + 150)) "$bench" e2e 100000 1000000 "$budget" 2> >(tee -a "$log" >&2) | tee -a "$log" |
        awk '$1 == "RESULT" {$1 = ""; sub(/^ /, ""); k = $1; $1 = ""; print k " =" $0}' >>"$res"

    # The sentence encoder (MiniLM-L6 shape, random weights: no model files needed): parity with the
    # CPU, then sentences/s at 64-128 tokens, batches of 1024 (target of issue 12: >= 30,000/s).
    if [ -x "$b/bin/bench_encoder" ]; then
        say "sentence encoder: GPU/CPU parity and sentences/s"
        timeout 120 "$b/bin/bench_encoder" parity 64 128 2>&1 | tee -a "$log" | sed 's/^/encoder.parity | /' >>"$res"
        timeout 200 "$b/bin/bench_encoder" gpu 100000 128 1024 2>&1 | tee -a "$log" |
            sed -n 's/.*, \([0-9]*\) sentences\/s.*/encoder.sentences_per_s = \1/p' >>"$res"
    fi

    # The acceptance checks of issue 6.
    awk -F' = ' '
        $1 == "sim.fp16.ratio_vs_gemm" { r = $2 }
        $1 == "minhash.gbps_end_to_end" { m = $2 }
        $1 == "e2e.seconds_total" || $1 == "e2e.seconds_extrapolated" { e = $2 }
        $1 == "encoder.sentences_per_s" { enc = $2 }
        END {
            printf "check.similarity_ratio_ge_0.60 = %s\n", r == "" ? "not measured" : (r + 0 >= 0.6 ? "pass" : "FAIL")
            printf "check.minhash_ge_5_gbps = %s\n", m == "" ? "not measured" : (m + 0 >= 5 ? "pass" : "FAIL")
            printf "check.e2e_1m_x_100k_le_30s = %s\n", e == "" ? "not measured" : (e + 0 <= 30 ? "pass" : "FAIL")
            printf "check.encoder_ge_30000_sentences_per_s = %s\n", enc == "" ? "not measured" : (enc + 0 >= 30000 ? "pass" : "FAIL")
        }' "$res" >>"$res.checks"
    cat "$res.checks" >>"$res"
    rm -f "$res.checks"
    result "run.seconds = $((SECONDS - t_start))"
    say "done: $res"
    cat "$res"
    rm -rf "$b"
}

case "${1:-}" in
--prepare) prepare ;;
--run) [ $# -ge 2 ] || { echo "usage: $0 --run OUTDIR [SITE.jsonl]" >&2; exit 2; }; run "$2" "${3:-}" ;;
--parity)
    [ $# -ge 2 ] || { echo "usage: $0 --parity BUILD_DIR [OUTDIR] [SITE.jsonl]" >&2; exit 2; }
    pout=${3:-${OUT:-}}
    [ -n "$pout" ] || { echo "give OUTDIR or set OUT" >&2; exit 2; }
    mkdir -p "$pout" || exit 1
    echo "# leakaudit pipeline parity, $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$pout/gpu-results.txt"
    parity "$2/leakaudit" "$pout" "$pout/gpu-results.txt" "$pout/gpu-run.log" "${4:-}"
    cat "$pout/gpu-results.txt"
    ! grep -q "DIFFERENT\|FAIL" "$pout/gpu-results.txt" ;;
*) sed -n '2,45p' "$0"; exit 2 ;;
esac
