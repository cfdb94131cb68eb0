"""The measurement protocol: how a call is timed, and how many calls, rounds and pairs make a time.

- ``timing``: the settings and records of a timing, the clock a worker times a
  call with, the cache flush, the stopping rule;
- ``plain``: what a plain output is (data computed by the time its call returned);
- ``l2``: persisting L2 lines reset around every judged call; ``state``: the
  process-wide settings (TF32, cuDNN) pinned in every worker; ``quiet``: a quiet
  GPU before a baseline round;
- ``rounds``: how many rounds, and each round's share of the time;
- ``pairs``: worker pairs, the part of a speedup's error that stays with one pair;
- ``repeatability``: the speedup interval a reader can hold to.

Numbers and clocks only: it starts no process and decides no verdict. A clock
read in the candidate's process (``timing.Clock``) is the candidate's, believed
only within the judge's own (``trusted.calls``).

May import: nothing of the judge outside itself.
"""
