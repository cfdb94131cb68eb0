"""How often an expert patch judged beside itself solves its own task, by how far its rounds move and by the
most rounds the judge allows; and how often a patch at exactly 95% of the expert is wrongly solved.

Each simulated evaluation draws round fractions lognormal about the truth and asks the judge's own rule
(``kbench.judge.protocol.repeatability.rounds_decided``) after every round from REPO_TIMING's ``rounds`` on; where
it stops (or at the cap) the task is solved if the rounds' 95% t interval, widened by the between-process
spread as the verdict's is (``widen``), has its lower end at 0.95 or above. An approximation of the
verdict (which bootstraps the rounds' calls), not a measurement of a GPU:

    PYTHONPATH=src python3 benchmarks/repo_rounds_simulation.py [--evaluations 2000] [--caps 16 32]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
import statistics

from kbench.judge.protocol.repeatability import _t_interval, rounds_decided, widen
from kbench.repo.expert import SOLVED_FRACTION
from kbench.repo.patch_judge import REPO_TIMING


def simulate(truth: float, sd: float, cap: int, evaluations: int, seed: int) -> tuple[float, float]:
    """The share of evaluations solved, and the mean number of rounds."""
    rng, settings = random.Random(seed), dataclasses.replace(REPO_TIMING, max_rounds=cap)
    solved = rounds = 0
    for _ in range(evaluations):
        fractions: list[float] = []
        while len(fractions) < cap:
            fractions.append(truth * math.exp(rng.gauss(0, sd)))
            if rounds_decided([1.0] * len(fractions), fractions, settings, SOLVED_FRACTION, "cuda"):
                break
        centre, half_width = _t_interval([math.log(f) for f in fractions])
        fraction = math.exp(centre)
        low = widen(fraction, [math.exp(centre - half_width), math.exp(centre + half_width)], "cuda")[0]
        solved += low >= SOLVED_FRACTION
        rounds += len(fractions)
    return solved / evaluations, rounds / evaluations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluations", type=int, default=2000)
    parser.add_argument("--caps", type=int, nargs="*", default=[16, 32])
    args = parser.parse_args()
    print(f"{'truth':>6} {'round sd':>9} " + " ".join(f"{f'at most {cap}: solved, rounds':>28}" for cap in args.caps))
    for truth in (1.0, SOLVED_FRACTION):
        for sd in (0.03, 0.05, 0.07, 0.09, 0.10):
            cells = [simulate(truth, sd, cap, args.evaluations, seed=round(sd * 1000)) for cap in args.caps]
            print(f"{truth:6.2f} {sd:9.0%} " + " ".join(f"{share:21.1%} {mean:6.1f}" for share, mean in cells))


if __name__ == "__main__":
    main()
