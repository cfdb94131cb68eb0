"""Adapters: kbench as an environment or reward for the libraries RL trainers use (docs/adapters.md).

- ``kbench.adapters.verifiers_env.load_environment``: a ``verifiers`` multi-turn environment (extra
  ``kbench[verifiers]``);
- ``kbench.adapters.inspect_task.kbench``: an inspect_ai task with the judge as its scorer (``kbench[inspect]``);
- ``KbenchReward`` (TRL's GRPOTrainer) and ``compute_score`` (veRL): reward functions (no extra needed).

Each judges here (``kbench.evaluate``) or through the reward service (``service_url=``). Only the
shared core is imported here: the library modules import their library, which may not be installed.

May import: everything below it (``kbench.core`` ... ``kbench.serve``); never the CLI.
"""

from kbench.adapters.judging import AdapterError, Judge, Judged, code_of, feedback_text, problems_named, prompt_for
from kbench.adapters.reward_functions import InfrastructureFailure, KbenchReward, compute_score, trl_rows, verl_rows

__all__ = [
    "AdapterError",
    "InfrastructureFailure",
    "Judge",
    "Judged",
    "KbenchReward",
    "code_of",
    "compute_score",
    "feedback_text",
    "problems_named",
    "prompt_for",
    "trl_rows",
    "verl_rows",
]
