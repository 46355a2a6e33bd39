#!/usr/bin/env bash
# bench/review_page/bench.sh - how fast report.html loads and filters with about LINKS links, in
# headless Chromium: generates the audit (tests/browser/make_links.py), audits it with the lexical
# embedding, then loads the page RUNS times through tests/browser/check_page.py --time, which
# prints the page size, the load event time after navigation start (with the file read, JSON.parse
# and first list), and the grade filter and text search times.
# Usage: bench/review_page/bench.sh [BUILD] [LINKS] [RUNS]   (default build, 100000, 3)
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
links=${2:-100000}
runs=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$src/tests/browser/make_links.py" "$links" "$work/gen"
"$build/leakaudit" audit --dev "$work/gen/dev.jsonl" --test "$work/gen/test.jsonl" --embed lexical \
    --out "$work/report" --quiet || [ $? -eq 1 ]
echo "links: $(wc -l <"$work/report/pairs.jsonl"), report.html: $(stat -c %s "$work/report/report.html") bytes"
for ((i = 1; i <= runs; i++)); do
    python3 "$src/tests/browser/check_page.py" "$work/report" "$work/shot.png" --time | grep '^timing:'
done
