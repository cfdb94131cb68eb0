"""Runs: judging a selection of problems against solutions, and what is kept of it.

Owns the runner (plans, resumption), the records and the SQLite store, the
run manifest (pins), scores (fast_p with intervals, comparisons) and exports.

May import: ``kbench.judge``, ``kbench.suite``, ``kbench.core``; never the
agents or the CLI (an agent loop plugs in through ``runner``'s callbacks).
"""
