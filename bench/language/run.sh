#!/usr/bin/env bash
# The English check of the default model choice (host/language.h) on real text: the English
# messages of the Debian message catalogues installed here and their human translations (messages
# of 6 words or more, the first 8 catalogues of each language), plus any files given (one text per
# line: GSM8K, STS-B, licences...). English should read as English; translations should not.
#   bench/language/run.sh [OUT_DIR=bench/out/language] [FILE...]
# Needs msgunfmt (gettext) and the catalogues under /usr/share/locale.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bld="${BUILD:-$root/build-bench}"   # BUILD=build reuses an existing build folder
cmake -S "$root" -B "$bld" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$bld" -j2 --target language_bench >/dev/null
out="${1:-$root/bench/out/language}"
shift || true
mkdir -p "$out"
for lang in de fr es pt_BR it nl pl tr ru ja zh_CN vi; do
  : >"$out/en_$lang.txt"
  : >"$out/tr_$lang.txt"
  for mo in $(ls /usr/share/locale/$lang/LC_MESSAGES/*.mo 2>/dev/null | head -8); do
    msgunfmt --no-wrap "$mo" 2>/dev/null | python3 -c '
import re, sys
en = None
out_en, out_tr = open(sys.argv[1], "a"), open(sys.argv[2], "a")
for line in sys.stdin:
    m = re.match(r"^msgid \"(.*)\"$", line)
    if m:
        en = m.group(1)
        continue
    m = re.match(r"^msgstr \"(.*)\"$", line)
    if m and en and m.group(1) and len(en.split()) >= 6:
        out_en.write(en.replace("\\n", " ") + "\n")
        out_tr.write(m.group(1).replace("\\n", " ") + "\n")
' "$out/en_$lang.txt" "$out/tr_$lang.txt"
  done
done
"$bld/bench/language/language_bench" "$out"/en_*.txt "$out"/tr_*.txt "$@"
