"""kbench: a judge for AI-generated GPU kernels."""

from kbench.core.solution import Solution, SolutionError
from kbench.core.verdict import STATUSES, Trial, Verdict
from kbench.judge import evaluate, evaluate_many
from kbench.suite import find_problem, suite_problems
from kbench.suite.problem import Problem, ProblemError, load_problem

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
    "evaluate_many",
    "find_problem",
    "load_problem",
    "suite_problems",
]
