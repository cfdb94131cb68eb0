"""kbench: a judge for AI-generated GPU kernels."""

from kbench.core.solution import Solution, SolutionError
from kbench.core.verdict import STATUSES, Trial, Verdict
from kbench.judge import evaluate, evaluate_many
from kbench.repo import Patch, Task, TaskError, evaluate_patch, find_task, solved, suite_tasks
from kbench.suite import find_problem, suite_problems
from kbench.suite.problem import Problem, ProblemError, load_problem

__version__ = "0.1.0"

__all__ = [
    "Problem",
    "ProblemError",
    "Patch",
    "STATUSES",
    "Solution",
    "SolutionError",
    "Task",
    "TaskError",
    "Trial",
    "Verdict",
    "evaluate",
    "evaluate_many",
    "evaluate_patch",
    "find_problem",
    "find_task",
    "load_problem",
    "solved",
    "suite_problems",
    "suite_tasks",
]
