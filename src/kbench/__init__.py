"""kbench: a judge for AI-generated GPU kernels."""

from kbench.judge import evaluate
from kbench.problem import Problem, ProblemError, load_problem
from kbench.solution import Solution, SolutionError
from kbench.suite import find_problem, suite_problems
from kbench.verdict import STATUSES, Trial, Verdict

__version__ = "0.1.0"

__all__ = [
    "Problem",
    "ProblemError",
    "STATUSES",
    "Solution",
    "SolutionError",
    "Trial",
    "Verdict",
    "evaluate",
    "find_problem",
    "load_problem",
    "suite_problems",
]
