"""Replay runs of the repository suite on a GPU: the expert patches must solve every task, patches that
change nothing must solve none (issue 29's "done when"). Every patch is judged with the expert timed beside
it (kbench.repo.expert): an expert patch's fraction is of itself.

Writes two folders of patches in ``kbench run --solutions`` layout under OUT (``experts/``: each task's
expert patch; ``nothing/``: a comment appended to the first file a patch may change, which no workload can
feel), runs ``kbench run --tasks all --solutions ...`` for each into OUT/kbench.db, and prints and saves
(OUT/replays.json) each run's ``kbench score --json`` and every sample's status, speedup and fraction of the
expert:

    PYTHONPATH=src python3 benchmarks/repo_replays.py --out $OUT [--tasks ID ...] [--device cuda]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kbench.agents.repo_workspace import PatchRepo
from kbench.judge.protocol.repeatability import round_spread
from kbench.repo import suite_tasks
from kbench.repo.checkout import checkout
from kbench.repo.patch import glob_match
from kbench.runs.store import Store

COMMENT = "\n# kbench replay: a patch that changes nothing a workload can measure\n"


def do_nothing_patch(task, scratch: Path) -> str:
    """A comment appended to the first existing file the task lets a patch change, diffed as the
    harness diffs a command agent's checkout (kbench.agents.repo_workspace.PatchRepo)."""
    private = scratch / task.id.replace("/", "_")
    tree = checkout(task.repository, private / "repo")
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.py") if p.is_file())
    target = next(f for f in files if any(glob_match(pattern, f) for pattern in task.allowed))
    patches = PatchRepo(private, tree)
    patches.record_base()
    with open(tree / target, "a") as handle:
        handle.write(COMMENT)
    return patches.patch()


def write_patches(tasks, out: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        for task in tasks:
            for name, text in (("experts", task.expert_patch.read_text()),
                               ("nothing", do_nothing_patch(task, Path(scratch)))):
                path = out / name / f"{task.id}.patch"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)


def sample(evaluation) -> dict:
    """What a replay keeps of an evaluation: its verdict's speedup and fraction, and every round's median
    (the patch's, the base's, the expert's beside), from which the fraction's round spread."""
    verdict = evaluation.verdict or {}
    return {"task": evaluation.problem_id, "status": evaluation.status, "speedup": evaluation.speedup.get("base"),
            "interval": verdict.get("speedup_interval", {}).get("base"), "expert": verdict.get("expert"),
            "patch_rounds_ms": (verdict.get("timing") or {}).get("rounds", []),
            "base_rounds_ms": (verdict.get("baselines", {}).get("base", {}).get("timing") or {}).get("rounds", []),
            "reason": evaluation.reason[:300]}


def kbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kbench", *args], capture_output=True, text=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tasks", nargs="*", help="task ids (default: the whole suite)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--kinds", nargs="+", choices=("experts", "nothing"), default=["experts", "nothing"],
                        help="which replays to run (the experts alone fit the whole suite in one device call)")
    args = parser.parse_args()
    tasks = [t for t in suite_tasks() if not args.tasks or t.id in args.tasks]
    args.out.mkdir(parents=True, exist_ok=True)
    write_patches(tasks, args.out)
    db = args.out / "kbench.db"
    results = {}
    for name in args.kinds:
        started = time.monotonic()
        ran = kbench("run", "--run", name, "--tasks", ",".join(t.id for t in tasks), "--solutions",
                     str(args.out / name), "--device", args.device, "--db", str(db), "--plain")
        print(ran.stdout[-3000:], ran.stderr[-3000:], sep="\n", flush=True)
        scored = kbench("score", name, "--json", "--db", str(db))
        with Store(db) as store:
            samples = [sample(e) for e in store.evaluations(name)]
        results[name] = {"exit_code": ran.returncode, "seconds": round(time.monotonic() - started, 1),
                         "score": json.loads(scored.stdout) if scored.returncode == 0 else scored.stderr,
                         "samples": samples}
        for s in samples:
            expert = s["expert"] or {}
            low = (expert.get("fraction_interval") or [0])[0]
            spread = round_spread(s["patch_rounds_ms"], expert.get("rounds_ms") or [])
            print(f"{name:8s} {s['task']:30s} {s['status']:10s} speedup {s['speedup'] or 0:7.3f}x "
                  f"fraction {expert.get('fraction') or 0:6.3f} (lower {low:6.3f}) solved {expert.get('solved')}, "
                  f"{len(s['patch_rounds_ms'])} rounds, the fraction's round spread "
                  + (f"{spread:.1%}" if spread is not None else "-"))
    (args.out / "replays.json").write_text(json.dumps(results, indent=1, default=str))
    for name, result in results.items():
        score = result["score"]
        print(f"{name}: exit {result['exit_code']}, {result['seconds']} s, solved "
              f"{score.get('solved') if isinstance(score, dict) else score}")
    shutil.rmtree(args.out / "experts", ignore_errors=True)  # the patches are in the store; keep $OUT small
    shutil.rmtree(args.out / "nothing", ignore_errors=True)


if __name__ == "__main__":
    main()
