"""The ``kbench`` command line: a thin layer over the Python API.

Exit status: 0 whenever a verdict was reached (whatever it says); 2 for usage
errors (a missing file, an unknown device, an unusable problem file).

One module per command group, each only parsing options and printing:
``evaluate`` (eval, baseline, demo, problems), ``audit``, ``run`` (run) and
``scores`` (score, compare, export), ``views`` (runs, show, report);
``verdicts`` renders verdicts for the terminal. May import every other layer; nothing imports it.
"""

import typer

from kbench.cli import audit, evaluate, run, scores, views

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__.splitlines()[0], rich_markup_mode=None)
for group in (evaluate, audit, run, scores, views):
    group.register(app)

if __name__ == "__main__":
    app()
