#!/usr/bin/env bash
# The runtime stages' steps (docker/Dockerfile). "setup": install the packages the build stage
# listed in /tmp/runtime-packages and add the user the image runs as (uid 10001, not root).
# "smoke": audit the bundled example as that user; the planted leaks must give exit 1.
set -euo pipefail
case "${1:?usage: runtime.sh setup|smoke}" in
  setup)
    apt-get update -qq
    xargs -a /tmp/runtime-packages apt-get install -y -qq --no-install-recommends >/dev/null
    rm -rf /var/lib/apt/lists/* /tmp/runtime-packages
    useradd --system --uid 10001 --user-group --create-home --home-dir /home/leakaudit leakaudit
    ;;
  smoke)
    ex=/usr/share/leakaudit/examples/gsm8k
    set +e
    leakaudit audit --dev "$ex/dev.jsonl" --test "$ex/test.jsonl" --text-field question --cutoff 2026-01-01 \
      --embed lexical --out /tmp/smoke --quiet
    rc=$?
    set -e
    rm -rf /tmp/smoke
    [ "$rc" -eq 1 ] || { echo "smoke audit: exit $rc, expected 1 (the example's planted leaks)" >&2; exit 1; }
    leakaudit models >/dev/null
    echo "smoke audit: exit 1 on the example's planted leaks, as expected"
    ;;
esac
