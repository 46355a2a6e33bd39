#!/usr/bin/env bash
# Peak memory of an audit at corpus scale: the near-copy generator's corpus (SEEN seen x 20k
# held-out rows), audited with the rows in spill files (LEAKAUDIT_SPILL=1, the default for inputs
# over 512 MiB) and, for comparison, with the rows in memory (LEAKAUDIT_SPILL=0); peak RSS of the process, wall time,
# and the largest RSS seen during each stage (sampled every 0.25 s, stages from --progress json).
#   bench/memory/run.sh BUILD_DIR [SEEN ...]     (default: 1000000 2000000)
# LA_MEM_ARGS: the audit's options (default "--embed lexical --threads 2"); LA_MEM_MODES: "spill",
# "memory" or both (default both); LA_MEM_DIR: where the corpora are written (default a temporary
# folder, removed at the end; about 1.1 GB per million rows). Not part of CI: 2M rows take minutes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:?usage: run.sh BUILD_DIR [SEEN ...]}"
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000000 2000000)
args="${LA_MEM_ARGS:---embed lexical --threads 2}"
modes="${LA_MEM_MODES:-spill memory}"
dir="${LA_MEM_DIR:-}"
if [ -z "$dir" ]; then
    dir="$(mktemp -d)"
    trap 'rm -rf "$dir"' EXIT
fi
for n in "${sizes[@]}"; do
    corpus="$dir/c$n"
    if [ ! -s "$corpus/dev.jsonl" ]; then
        mkdir -p "$corpus"
        "$build/bench/near/near_bench" --dev "$n" --test 20000 --write "$corpus" --write-only >/dev/null
    fi
    for mode in $modes; do
        spill=1
        [ "$mode" = memory ] && spill=0
        LEAKAUDIT_SPILL=$spill python3 "$here/sample.py" "$n" "$mode" "$build/leakaudit" audit \
            --dev "$corpus/dev.jsonl" --test "$corpus/test.jsonl" $args --progress json --out "$dir/out-$n-$mode"
        rm -rf "$dir/out-$n-$mode"
    done
done
