"""Processes and the sandbox: the judge's workers, and the walls around a candidate's.

- ``process``: ``Worker``, a throw-away interpreter with its pipes, deadline and
  memory limit, killed with its process group; ``candidate_worker``: one in the
  sandbox, building in its own folder (``builds.cache``);
- ``sandbox``: the OS sandbox every candidate process runs in (bubblewrap);
- ``devices``: device names resolved, a GPU's turn, kbench's cache root, a worker's
  environment;
- ``sides``: each side's code beside the problem file (the repository track);
- ``spares``: workers started ahead of the evaluations that will use them;
  ``background``: work beside the measurements, stopped while anything is timed.

Runs in the judge's process only.

May import: only itself and ``builds.cache`` (where a candidate builds).
"""
