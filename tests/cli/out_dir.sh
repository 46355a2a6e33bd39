#!/usr/bin/env bash
# --out never loses a file: it is replaced only when it holds nothing but what an earlier run listed
# in its .leakaudit-manifest, never when it holds an input, and the check comes before any work.
# The replacement is one swap: a run killed at any moment leaves either the previous report or the
# new one, complete; SIGTERM leaves nothing beside it, and the next run removes what SIGKILL left.
# A symbolic link to a directory stays a link.
source "$(dirname "$0")/lib.bash"
export LEAKAUDIT_FSYNC=1 # the durable path, as users run it

printf '%s\n' '{"id":"d1","text":"alpha beta gamma"}' '{"id":"d2","text":"delta epsilon"}' >dev.jsonl
printf '%s\n' '{"id":"t1","text":"zeta eta theta"}' >test.jsonl

# complete DIR: the manifest lists exactly the files in DIR and report.json parses.
complete() {
    python3 - "$1" <<'PY' || fail "$1 is not one complete report"
import json, os, sys
d = sys.argv[1]
lines = open(os.path.join(d, ".leakaudit-manifest")).read().splitlines()
assert lines[0].startswith("# leakaudit output"), lines[0]
listed = set(lines[1:])
present = set(os.listdir(d)) - {".leakaudit-manifest"}
assert listed == present, (sorted(listed ^ present))
json.load(open(os.path.join(d, "report.json")))
PY
}

check "the reported case: inputs beside a report.json in --out are refused, nothing changes"
mkdir data
cp dev.jsonl test.jsonl data/
echo '{}' >data/report.json
tree_digest data >data.digest
la audit --dev data/dev.jsonl --test data/test.jsonl --out data
expect_rc 2
expect_has err.txt "--out data: the directory is not empty and holds no .leakaudit-manifest"
tree_digest data >after.digest
expect_same data.digest after.digest
no_leftovers data

check "--out is checked before the inputs are read: the --out error comes first"
printf '%s\n' '{"id":"t1"' >broken.jsonl
la audit --dev dev.jsonl --test broken.jsonl --out data
expect_rc 2
expect_has err.txt "--out data:"
expect_lacks err.txt "broken.jsonl:1"

check "a previous report is replaced; the manifest lists exactly its files"
la audit --dev dev.jsonl --test test.jsonl --out rep
expect_rc 0
complete rep
expect_has rep/.leakaudit-manifest "report.json"
expect_has rep/.leakaudit-manifest "dev.jsonl"
la audit --dev dev.jsonl --test test.jsonl --out rep
expect_rc 0
complete rep
no_leftovers rep

check "at two threads too: the previous report goes (on a thread of its own), the new one is complete"
la audit --dev dev.jsonl --test test.jsonl --out rep --threads 2
expect_rc 0
complete rep
no_leftovers rep
la audit --dev dev.jsonl --test test.jsonl --out rep --threads 2
expect_rc 0
complete rep
no_leftovers rep

check "a run at two threads that fails on its input leaves the previous report byte for byte (its cached pages were let go meanwhile)"
tree_digest rep >rep.before
la audit --dev dev.jsonl --test broken.jsonl --out rep --threads 2
expect_rc 2
expect_has err.txt "broken.jsonl:1"
tree_digest rep >rep.after
expect_same rep.before rep.after
complete rep
no_leftovers rep

check "an input inside a previous report is refused (auditing rep/dev.jsonl into rep)"
cp rep/dev.jsonl rep.dev.copy
tree_digest rep >rep.digest
la audit --dev rep/dev.jsonl --test test.jsonl --out rep
expect_rc 2
expect_has err.txt "--out rep: holds the input rep/dev.jsonl; refusing to write over inputs"
tree_digest rep >after.digest
expect_same rep.digest after.digest
la audit --part seen=dev.jsonl --test test.jsonl --embeddings seen=rep/dev.jsonl --out rep
expect_rc 2
expect_has err.txt "holds the input rep/dev.jsonl"
la split --cutoff 2026-01-01 rep/dev.jsonl --out rep
expect_rc 2
expect_has err.txt "holds the input rep/dev.jsonl"
tree_digest rep >after.digest
expect_same rep.digest after.digest

check "a file a person added to a previous report is kept: the run refuses and names it"
echo "my notes" >rep/notes.txt
mkdir rep/plots
tree_digest rep >rep.digest
la audit --dev dev.jsonl --test test.jsonl --out rep
expect_rc 2
expect_has err.txt "--out rep: holds 2 files leakaudit did not write"
expect_has err.txt "notes.txt"
expect_has err.txt "plots"
tree_digest rep >after.digest
expect_same rep.digest after.digest
[ -d rep/plots ] || fail "rep/plots is gone"
rm -r rep/notes.txt rep/plots

check "a report file replaced by a link or directory is not ours either"
ln -s ../dev.jsonl rep/report.md.link
mv rep/report.md rep/keep.md && mkdir rep/report.md
la audit --dev dev.jsonl --test test.jsonl --out rep
expect_rc 2
expect_has err.txt "report.md"
[ -d rep/report.md ] && [ -f rep/keep.md ] && [ -L rep/report.md.link ] || fail "rep/ changed"
rm -r rep/report.md rep/report.md.link && mv rep/keep.md rep/report.md

check "--out as a symbolic link to a directory: the link stays, the directory it names gets the report"
mkdir real
ln -s real linked
la audit --dev dev.jsonl --test test.jsonl --out linked
expect_rc 0
[ -L linked ] || fail "linked is no longer a symbolic link"
complete real
printf '%s\n' '{"id":"t1","text":"alpha beta gamma"}' >leak.jsonl
la audit --dev dev.jsonl --test leak.jsonl --out linked/
expect_rc 1
[ -L linked ] || fail "linked is no longer a symbolic link"
complete real
[ "$(wc -l <real/pairs.jsonl)" -ge 1 ] || fail "the new report is not in real/"
no_leftovers real
no_leftovers linked
ln -s nowhere dangling
la audit --dev dev.jsonl --test test.jsonl --out dangling
expect_rc 2
expect_has err.txt "--out dangling: a symbolic link to something that does not exist"
[ ! -e nowhere ] || fail "nowhere was created"

check "temporary directories of killed runs are removed; a running one's is left alone"
sleep 30 &
alive=$!
mkdir "rep.tmp-999999999-AbCdEf" "rep.tmp-$alive-AbCdEf" "rep.tmp-999999998-NotOur"
: >"rep.tmp-999999999-AbCdEf/.leakaudit-incomplete"
echo partial >"rep.tmp-999999999-AbCdEf/report.json"
: >"rep.tmp-$alive-AbCdEf/.leakaudit-incomplete"
echo "someone's" >"rep.tmp-999999998-NotOur/file"
la audit --dev dev.jsonl --test test.jsonl --out rep
expect_rc 0
[ ! -e rep.tmp-999999999-AbCdEf ] || fail "the killed run's directory is still there"
[ -d "rep.tmp-$alive-AbCdEf" ] || fail "a running process's directory was removed"
[ -f rep.tmp-999999998-NotOur/file ] || fail "a directory without the marker was removed"
kill "$alive" 2>/dev/null || true
wait "$alive" 2>/dev/null || true
rm -r "rep.tmp-$alive-AbCdEf" rep.tmp-999999998-NotOur

check "killed before each file it removes: --out stays complete, the next run removes what is left"
# The fault-injection build stops itself (SIGKILL) right before its Nth unlink, for every N of a run
# that replaces a report: the marker, then the previous report's files one by one. What is left
# beside --out must still be recognizably ours, so that the next run removes it. The order files are
# removed in is the file system's listing order: the walk runs here and again on tmpfs, which lists
# the newest file (the previous report's manifest) first.
: "${LEAKAUDIT_FAILALLOC:?LEAKAUDIT_FAILALLOC must name the fault-injection build}"
walk_unlinks() {
    local out=$1 i rc unlinks
    la audit --dev dev.jsonl --test test.jsonl --out "$out"
    expect_rc 0
    set +e
    LA_KILL_AT_UNLINK=0 "$LEAKAUDIT_FAILALLOC" audit --dev dev.jsonl --test test.jsonl --out "$out" >/dev/null 2>walk.err
    rc=$?
    set -e
    [ "$rc" -eq 0 ] || fail "the counting run exited $rc: $(cat walk.err)"
    unlinks=$(sed -n 's/^unlinks: //p' walk.err)
    [ -n "$unlinks" ] && [ "$unlinks" -ge 5 ] || fail "unlinks not counted: '$unlinks'"
    echo "  $out: a replacing run removes $unlinks files"
    for ((i = 1; i <= unlinks; i++)); do
        set +e
        LA_KILL_AT_UNLINK=$i "$LEAKAUDIT_FAILALLOC" audit --dev dev.jsonl --test test.jsonl --out "$out" >/dev/null 2>walk.err
        rc=$?
        set -e
        [ "$rc" -eq 137 ] || fail "killed at unlink $i: exit $rc, expected 137 (SIGKILL)"
        complete "$out"
        la audit --dev dev.jsonl --test test.jsonl --out "$out"
        expect_rc 0
        complete "$out"
        no_leftovers "$out"
    done
}
walk_unlinks walk
if shm=$(mktemp -d /dev/shm/leakaudit-out-dir.XXXXXX 2>/dev/null); then
    trap 'rm -rf "$shm"' EXIT
    walk_unlinks "$shm/walk"
else
    echo "  no writable /dev/shm: the tmpfs walk is not run"
fi

check "kill at any moment: --out holds the previous report or the new one, complete"
python3 - <<'PY'
import json, random
random.seed(7)
words = ["w%d" % i for i in range(400)]
with open("big_dev.jsonl", "w") as f:
    for i in range(6000):
        f.write(json.dumps({"id": "d%d" % i, "text": " ".join(random.choice(words) for _ in range(30))}) + "\n")
with open("big_test.jsonl", "w") as f:
    for i in range(600):
        f.write(json.dumps({"id": "t%d" % i, "text": " ".join(random.choice(words) for _ in range(30))}) + "\n")
PY
la audit --dev dev.jsonl --test test.jsonl --out killed
expect_rc 0
start=$(date +%s%N)
la audit --dev big_dev.jsonl --test big_test.jsonl --out timing --embed none --threads 1
full_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "a full run takes ${full_ms} ms"
# At two threads the previous report is removed on a thread of its own after the swap, and a
# SIGTERM then still removes it: the last tenths of the run are tried there too.
for sig in TERM KILL; do
    for i in 1 2 3 4 5 6 7 8 9 10 8t 9t 10t; do
        threads=1
        case $i in *t) threads=2 i=${i%t} ;; esac
        delay_ms=$(( full_ms * i / 10 ))
        set +e
        "$LEAKAUDIT" audit --dev big_dev.jsonl --test big_test.jsonl --out killed --embed none --threads "$threads" \
            --quiet >/dev/null 2>killed.err &
        pid=$!
        sleep "$(awk -v ms="$delay_ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
        kill -"$sig" "$pid" 2>/dev/null
        wait "$pid"
        set -e
        no_sanitizer_report killed.err "the run killed with SIG$sig"
        complete killed
        if [ "$sig" = TERM ]; then no_leftovers killed; fi
    done
done
# The SIGKILLed runs could not clean up; the next run removes their directories, except one whose
# process id now belongs to a running process (ids are reused: this machine wraps at pid_max while
# other tests run), which is left alone by design.
la audit --dev dev.jsonl --test test.jsonl --out killed
expect_rc 0
complete killed
for d in killed.tmp-* killed.old-*; do
    [ -e "$d" ] || continue
    pid=${d#killed.???-}
    pid=${pid%%-*}
    kill -0 "$pid" 2>/dev/null || fail "left behind: $d (its process $pid is gone)"
    echo "  $d kept: process id $pid is in use again"
done

# A large manifest passes to direct writes (O_DIRECT) past 64 MiB, through buffers of its own and
# threads that write them; LEAKAUDIT_DIRECT_FROM moves the point. The files are the same wherever
# it lies: from the first byte, from an odd byte (the head through the page cache up to a block
# boundary), never; and on tmpfs, which may refuse direct writes (then the page cache takes them).
check "manifests written directly to the disk are the same files"
python3 - <<'PY'
import json, random
r = random.Random(7)
words = ["w%d" % i for i in range(5000)]
with open("big_dev.jsonl", "w") as f:
    for i in range(12000):  # about 10 MB: two whole 4 MiB blocks and a part one
        n = r.randrange(20, 260)
        f.write(json.dumps({"id": "d%05d" % i, "text": " ".join(r.choice(words) for _ in range(n))}) + "\n")
with open("big_test.jsonl", "w") as f:
    for i in range(300):
        f.write(json.dumps({"id": "t%04d" % i, "text": " ".join(r.choice(words) for _ in range(40))}) + "\n")
PY
LEAKAUDIT_DIRECT_FROM=off la audit --dev big_dev.jsonl --test big_test.jsonl --embed none --out direct_off
expect_rc 0
[ "$(stat -c %s direct_off/dev.jsonl)" -gt $((8 << 20)) ] || fail "the dev manifest is too small to test direct writes"
expect_same big_dev.jsonl direct_off/dev.jsonl
for from in 0 5000; do
    LEAKAUDIT_DIRECT_FROM=$from la audit --dev big_dev.jsonl --test big_test.jsonl --embed none --out direct_$from
    expect_rc 0
    same_outputs direct_off direct_$from no-report
    complete direct_$from
done
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    shm=$(mktemp -d /dev/shm/la-direct-XXXXXX)
    LEAKAUDIT_DIRECT_FROM=0 la audit --dev big_dev.jsonl --test big_test.jsonl --embed none --out "$shm/out"
    expect_rc 0
    same_outputs direct_off "$shm/out" no-report
    rm -rf "$shm"
fi

pass
