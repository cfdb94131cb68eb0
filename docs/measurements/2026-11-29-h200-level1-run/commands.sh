# Call B: level-1 run with the bundled examples, uninterrupted and killed-then-resumed; then part of the GPU audit.
export PYTHONPATH=src KBENCH_CACHE=$PWD/.kbench-cache
K="python3 -m kbench"
DB=$OUT/runs.db
s=$(date +%s)
$K run --solutions src/kbench/examples --problems level1 --run full --db $DB --plain > $OUT/run-full.log 2>&1
echo "full run: $(( $(date +%s) - s )) s"
$K score full --db $DB --json > $OUT/score-full.json; $K score full --db $DB > $OUT/score-full.txt 2>&1
s=$(date +%s)
$K run --solutions src/kbench/examples --problems level1 --run resumed --db $DB --plain > $OUT/run-killed.log 2>&1 &
pid=$!
python3 - "$DB" <<'PY'
import sqlite3, sys, time
for _ in range(600):
    try:
        con = sqlite3.connect(sys.argv[1]); n = con.execute("select count(*) from evaluations where run='resumed' and status!='missing'").fetchone()[0]; m = con.execute("select count(*) from evaluations where run='resumed'").fetchone()[0]; con.close()
    except Exception as e:
        n = m = 0
    if n >= 1: print("stored before the kill:", m, "evaluations,", n, "judged"); break
    time.sleep(0.5)
PY
sleep 5; kill -9 $pid; wait $pid; echo "killed (rc $?) after $(( $(date +%s) - s )) s"
sleep 1; ps -eo pid,pgid,cmd | grep -c "kbench.worker" 
$K run --run resumed --db $DB --plain > $OUT/run-resumed.log 2>&1
echo "killed+resumed total: $(( $(date +%s) - s )) s"
$K score resumed --db $DB --json > $OUT/score-resumed.json; $K score resumed --db $DB > $OUT/score-resumed.txt 2>&1
cat $OUT/score-full.txt $OUT/score-resumed.txt; tail -3 $OUT/run-killed.log; tail -5 $OUT/run-resumed.log
python3 .device/audit_part.py 0 ${AUDIT_LIMIT:-200}
