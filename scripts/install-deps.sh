#!/usr/bin/env bash
# Installs the Debian 12 packages that leakaudit's build, tests and demo need.
# Idempotent: when everything is present it only checks and returns (well under a second).
# Prints what it installs. Needs root (or sudo) only when something is missing.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config
  libsodium-dev libxxhash-dev libutf8proc-dev libjson-c-dev libcsv-dev
  zlib1g-dev libzstd-dev libcmocka-dev
  libopenblas-openmp-dev libfaiss-dev
  clang-14 libclang-rt-14-dev zstd
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: not root and no sudo; install these packages: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
