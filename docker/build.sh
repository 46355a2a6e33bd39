#!/usr/bin/env bash
# The build stages' one step (docker/Dockerfile): configure and build the program without the
# tests (CUDA on or off: $1), and stage under /stage what the runtime stage copies: the binary,
# the bundled example, the encoder models when the build context has them (models/, filled by
# scripts/install-deps.sh on the machine that builds), and /stage/runtime-packages, the Debian
# packages that hold the shared libraries the binary links (read from ldd and dpkg, so the list is
# right on any Debian or Ubuntu base).
set -euo pipefail
cuda=${1:?usage: build.sh ON|OFF}
cmake -S . -B /tmp/build -DCMAKE_BUILD_TYPE=Release -DLA_BUILD_TESTS=OFF -DLA_WITH_CUDA="$cuda" \
  -DLA_MODELS_DIR=/usr/share/leakaudit/models >/dev/null
cmake --build /tmp/build -j"$(nproc)"
# cuBLAS is opened at run time (the CUDA runtime image has it); the CUDA runtime is linked.
if [ "$cuda" = ON ] && ! ldd /tmp/build/leakaudit | grep -q libcudart; then
  echo "docker/build.sh: a CUDA build was asked for, but the program does not link the CUDA runtime (no nvcc in the base?)" >&2
  exit 1
fi
mkdir -p /stage/usr/local/bin /stage/usr/share/leakaudit/models /stage/usr/share/leakaudit/examples
cp /tmp/build/leakaudit /stage/usr/local/bin/
cp -r examples/gsm8k /stage/usr/share/leakaudit/examples/
if [ -d models ]; then cp -rL models/. /stage/usr/share/leakaudit/models/; fi
ldd /tmp/build/leakaudit | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
  dpkg -S "$(realpath "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || true
done | cut -d: -f1 | sort -u >/stage/runtime-packages
echo "docker/build.sh: runtime packages: $(tr '\n' ' ' </stage/runtime-packages)"
