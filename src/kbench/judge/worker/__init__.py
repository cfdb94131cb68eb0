"""The worker program: what runs inside a worker process, the candidate's included.

A worker is started by the judge (``processes.process``) as a fresh interpreter
running ``session.main``; it plays the reference's role (the problem's ``Model``,
trusted) or the candidate's (the solution's ``ModelNew``, sandboxed). In the
candidate's role every module this program imports runs beside code that can
rewrite any of it, so nothing computed there decides a fact: its answers are
read by ``trusted.answers``, its clock bounded by the judge's
(``trusted.calls``), its output read and checked by the reference.

- ``session``: the message loop: load, build, calls as the judge orders them,
  and (reference) draw, read, compare, record, audit;
- ``loading``: the problem and the solution loaded, models and inputs made,
  what the worker reports of where it runs;
- ``graphs``: CUDA-graph timing (``--cuda-graph``);
- ``self_test``: a solution's source as the worker runs it (without its
  ``if __name__ == "__main__":`` block), which the guard's static rules read too.

May import: ``exchange``, ``protocol``, the guard's runtime side (``guard``,
``guard.runtime``, ``guard.captures`` and what they import), and of ``trusted`` only
the reference role's computations (``truth``, ``problem_checks``, ``pieces``,
``compare``, ``baselines``). Never the judge's process: ``trusted.calls``,
``trusted.answers``, ``trusted.reference``, ``processes`` but ``devices``' cache
root, ``builds``, the evaluation (tests/test_architecture.py checks the whole
import closure of ``session``).
"""
