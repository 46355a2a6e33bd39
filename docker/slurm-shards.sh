#!/usr/bin/env bash
# One audit spread over a Slurm array, then merged. Submit from a login node with
#   docker/slurm-shards.sh /shared/corpus/train.jsonl.zst /shared/bench/test.jsonl /shared/reports [N [OPTION...]]
# N array tasks (default 8) each audit their slice of the training rows against the whole
# benchmark (--shard auto: index and count from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT)
# into REPORTS/audit-YYYY-MM-DD-JOBID.shards/I; a merge job that starts once every task has
# succeeded (--dependency=afterok) writes the unsharded audit's reports to REPORTS/audit-...-JOBID
# and exits with its gate (0 clean, 1 leaks, 2 bad input). Give absolute paths: the merge reads
# the inputs again and checks they are the ones the shards read (README: Shards). Options after N
# go to every shard's audit (--cutoff, --text-field, --embed, ...; the merge repeats them itself).
set -euo pipefail
train=$1 test=$2 reports=$3 n=${4:-8}
shift $(($# < 4 ? $# : 4))
extra=""
if [ $# -gt 0 ]; then extra=$(printf ' %q' "$@"); fi
run=leakaudit
if command -v apptainer >/dev/null 2>&1; then run="apptainer exec --bind /shared leakaudit.sif leakaudit"; fi
stamp=$(date -u +%Y-%m-%d)
array=$(sbatch --parsable --job-name=leakaudit-shard --array="0-$((n - 1))" \
    --cpus-per-task=8 --mem=16G --time=02:00:00 --output="$reports/slurm-%A_%a.log" \
    --wrap="$run audit --part train='$train' --test '$test'$extra --shard auto -q \
        --out '$reports/audit-$stamp-'\$SLURM_ARRAY_JOB_ID.shards/\$SLURM_ARRAY_TASK_ID")
array=${array%%;*} # --parsable prints JOBID or JOBID;CLUSTER
sbatch --parsable --job-name=leakaudit-merge --dependency="afterok:$array" \
    --cpus-per-task=4 --mem=16G --time=01:00:00 --output="$reports/slurm-%j-merge.log" \
    --wrap="$run merge --out '$reports/audit-$stamp-$array' '$reports/audit-$stamp-$array'.shards/*"
echo "submitted array job $array ($n shards) and its merge; reports in $reports/audit-$stamp-$array"
