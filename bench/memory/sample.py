"""Runs one command (leakaudit ... --progress json), samples its RSS every 0.25 s, and prints its
peak RSS, wall time and the largest RSS seen during each stage, in the order the stages ran.
    sample.py ROWS MODE COMMAND...   (used by run.sh)"""
import json, os, subprocess, sys, threading, time

rows, mode, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
env = dict(os.environ)
t0 = time.time()
proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
stage = ["start"]
peaks = {}
order = []
done = threading.Event()

def sample():
    while not done.is_set():
        try:
            with open("/proc/%d/status" % proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        kb = int(line.split()[1])
                        s = stage[0]
                        if s not in peaks:
                            order.append(s)
                        peaks[s] = max(peaks.get(s, 0), kb)
        except (OSError, ValueError):
            pass
        time.sleep(0.25)

th = threading.Thread(target=sample, daemon=True)
th.start()
for line in proc.stderr:
    try:
        ev = json.loads(line)
    except ValueError:
        sys.stderr.write(line)
        continue
    if ev.get("progress") == "begin":
        stage[0] = ev.get("stage", "?")
_, status, usage = os.wait4(proc.pid, 0)
done.set()
th.join()
wall = time.time() - t0
code = os.waitstatus_to_exitcode(status)
if code not in (0, 1):
    sys.exit("sample.py: the audit exited with %d" % code)
print("%s seen rows, rows %s: peak RSS %.2f GB, wall %.1f s" % (rows, "in spill files" if mode == "spill" else "in memory",
                                                                   usage.ru_maxrss / 1e6, wall))
for s in order:
    print("    %-34s %6.0f MB" % (s, peaks[s] / 1e3))
sys.stdout.flush()
