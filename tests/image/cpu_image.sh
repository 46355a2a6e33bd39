#!/usr/bin/env bash
# The CPU container image builds from the source tree and its smoke audit passes: docker/Dockerfile
# runs `leakaudit audit` on the bundled example inside the runtime stage, as the image's own user,
# so a finished build has audited. Then the image's metadata: not root, the OCI title and version,
# leakaudit as the entry point. Skipped (77) without podman or docker, or without a base image:
# LEAKAUDIT_IMAGE_BASE names one (on a machine without a registry, a Debian 12 made with
# debootstrap and `podman import`, see docker/README.md); else debian:12-slim when it is already
# present. Slow (the build compiles the program): minutes.
set -euo pipefail
: "${SRC:?SRC must name the source directory}"
engine=""
for e in podman docker; do command -v "$e" >/dev/null 2>&1 && { engine=$e; break; }; done
[ -n "$engine" ] || { echo "no podman or docker: skipped"; exit 77; }
base=${LEAKAUDIT_IMAGE_BASE:-}
if [ -z "$base" ]; then
  for b in docker.io/library/debian:12-slim debian:12-slim; do
    if "$engine" image inspect "$b" >/dev/null 2>&1; then base=$b; break; fi
  done
fi
[ -n "$base" ] || { echo "no base image (set LEAKAUDIT_IMAGE_BASE): skipped"; exit 77; }
tag=localhost/leakaudit-test:cpu-$$
log=$(mktemp)
trap 'rm -f "$log"; "$engine" rmi -f "$tag" >/dev/null 2>&1 || true' EXIT
opts=()
[ "$engine" = podman ] && opts+=(--isolation chroot)
echo "check: $engine build of docker/Dockerfile (target cpu) on $base, smoke audit inside"
if ! "$engine" build "${opts[@]}" --build-arg BASE="$base" --build-arg SMOKE_RUN="$(date +%s)-$$" -f "$SRC/docker/Dockerfile" -t "$tag" "$SRC" >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "FAIL: the image did not build" >&2
  exit 1
fi
grep -q "smoke audit: exit 1 on the example's planted leaks" "$log" || { echo "FAIL: no smoke audit in the build" >&2; exit 1; }
inspect() { "$engine" image inspect --format "$1" "$tag"; }
echo "check: the image runs as uid 10001, names itself, and enters leakaudit"
[ "$(inspect '{{.Config.User}}')" = 10001:10001 ] || { echo "FAIL: user $(inspect '{{.Config.User}}')" >&2; exit 1; }
[ "$(inspect '{{index .Config.Labels "org.opencontainers.image.title"}}')" = leakaudit ] || { echo "FAIL: title label" >&2; exit 1; }
[ -n "$(inspect '{{index .Config.Labels "org.opencontainers.image.version"}}')" ] || { echo "FAIL: version label" >&2; exit 1; }
inspect '{{json .Config.Entrypoint}}' | grep -q '"leakaudit"' || { echo "FAIL: entry point" >&2; exit 1; }
echo "PASS"
