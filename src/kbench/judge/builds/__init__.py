"""Builds: where a candidate's compiled code lives, and building it ahead of judging.

- ``cache``: the build folder of a source (keyed by the source and by the toolchain),
  a worker's private copy and its publication as the cache, stale locks cleared,
  fresh builds for a confirmation;
- ``ahead``: ``build()``, a solution imported once in a sandboxed worker so that
  its extensions compile before it is judged.

Runs in the judge's process only.

May import: ``processes`` (the workers that build) and ``trusted.reference`` (the
load message a build worker is sent); ``cache`` imports only ``processes.devices``
(kbench's cache root).
"""
