"""The trusted side: the facts a verdict rests on, made where the candidate cannot reach.

Two processes are trusted: the judge's own and the reference worker (which runs
only the problem's ``Model``). This package is their code, and nothing a
candidate's process computes decides anything here:

- ``calls``: the judge's half of every call: the seed it draws when the call is
  due, its own clock from the draw to the reference's read (``trusted_times``),
  and the secret choice of which calls are checked;
- ``answers``: the fields of a candidate's answers the judge reads, each checked
  before use (a forged or malformed one is a verdict, never a crash);
- ``reference``: the reference's workers, the eager and compiled columns timed on
  the very same draws; ``baselines``: the columns and their cache;
- ``compare``: the correctness criterion (the float64 truth or KernelBench's
  tolerance); ``pieces``: the same a piece at a time; ``truth``: the float64 truth
  of a checked call, computed in the reference worker;
- ``problem_checks``: the audit's measurements, taken in a reference worker;
- ``tracebacks``: a worker's failure as the solution's author needs it.

``truth``, ``problem_checks``, ``pieces``, ``compare`` and ``baselines`` (its columns'
preparation) run inside the reference worker, so the worker program imports them;
they run in the reference's role only. ``calls``, ``answers``, ``reference`` and
``tracebacks`` run in the judge's process alone: the worker program never imports
them (tests/test_architecture.py).

May import: ``protocol``, ``exchange``, ``processes``, ``guard``; never ``worker``
(the worker program is started, never imported) or ``builds``.
"""
