"""Agents: asking models for kernels, and recording exactly how.

Owns the providers (API clients and external command agents), the prompt
templates and their worked examples, reading solutions out of replies, token
prices, and the agent loop that asks, judges and refines over turns.

May import: ``kbench.runs``, ``kbench.judge``, ``kbench.suite``,
``kbench.core``; never the CLI.
"""
