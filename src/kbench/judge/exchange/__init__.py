"""The exchange: what crosses between the judge's processes, and how.

Each call's inputs go from the reference worker to the candidate's process, and
its output back, through memory the reader maps and copies itself: ``buffers``
(sealed ``memfd`` on a CPU), ``vmm`` (CUDA virtual memory handed over by file
descriptor), ``outputs`` (a call's tensors packed into that memory, the reader's
copy, and the reference's checks: of the copy, ``check_held``, and of the shared
inputs, ``same_bits``). Answers travel on pipes as the
worker's own JSON (``wire``), a failure with the phase it happened in
(``failure``).

Both sides run this code: only the reading side's copy and check count, and the
reader is always the reference worker (docs/guard.md, "What the judge trusts").

May import: only itself and ``trusted.compare`` (the criterion the reference's
check applies).
"""
