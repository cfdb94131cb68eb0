"""What the judge's checks cost in wall time: the same evaluations under two source trees.

Each tree (``git archive REV | tar -x -C DIR``) judges the same honest solutions,
interleaved (tree A, tree B, next case; ``--reps`` times), each evaluation in a
fresh process with the tree's own build cache; the JSON lines give each
evaluation's wall time and phases, the summary the median per case and tree,
and the time outside the named phases (the record call, the static reading,
closing the workers).

    git archive 39db105^ | tar -x -C /tmp/before; git archive HEAD | tar -x -C /tmp/after
    PYTHONPATH=src python3 benchmarks/judge_cost.py /tmp/before /tmp/after --device cpu --out cost.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

# (problem, solution, size): paths inside each tree, present in both.
CASES = [
    ("level1/relu", "src/kbench/suite/examples/relu.py", "small"),
    ("level1/softmax", "src/kbench/suite/examples/softmax.py", "small"),
    ("tests/fixtures/problems/linear_tanh.py", "tests/fixtures/solutions/honest_triton.py", "default"),
]
ONE = """import json, sys, kbench
v = kbench.evaluate(sys.argv[1], sys.argv[2], sys.argv[3], size=sys.argv[4])
print(json.dumps({"status": v.status, "wall": v.wall_seconds, "phases": v.phase_seconds}))"""


def judge(tree: Path, case: tuple[str, str, str], device: str) -> dict:
    problem, solution, size = case
    problem = str(tree / problem) if problem.endswith(".py") else problem
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "KBENCH_CACHE": str(tree / ".kbench-cache")}
    done = subprocess.run([sys.executable, "-c", ONE, problem, str(tree / solution), device, size],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=900)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs=2, type=Path, help="two source trees: before, after")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    rows = []
    for rep in range(args.reps):
        for case in CASES:
            for tree in args.trees:
                result = {"rep": rep, "tree": str(tree), "problem": case[0], **judge(tree, case, args.device)}
                rows.append(result)
                print(json.dumps(result), flush=True)
                with open(args.out, "a") as out:
                    out.write(json.dumps(result) + "\n")
    for case in CASES:
        line = [case[0]]
        for tree in args.trees:
            mine = [r for r in rows if r["problem"] == case[0] and r["tree"] == str(tree)]
            walls = [r["wall"] for r in mine]
            outside = statistics.median(r["wall"] - sum(r["phases"].values()) for r in mine)
            line.append(f"{tree.name}: {statistics.median(walls):.1f} s ({min(walls):.1f}-{max(walls):.1f}), "
                        f"{outside:.1f} s outside the phases")
        print(" | ".join(line))


if __name__ == "__main__":
    main()
