"""The ``kbench`` command line: a thin layer over the Python API.

Exit status: 0 whenever a verdict was reached (whatever it says); 2 for usage
errors (a missing file, an unknown device, an unusable problem file); 1 for
work a pipeline should stop on: ``kbench audit`` finding a flagged or broken
problem (``--fail-on``), a ``kbench run`` that judged nothing because everything
failed outside the candidates, or that ``--fail-on-error N`` stopped; 4 for a ``kbench run``
of a run another process is judging (kbench.runs.writer).

One module per command group, each only parsing options and printing:
``evaluate`` (eval, baseline, demo), ``problems`` (list, show), ``audit``, ``tasks`` (tasks list, show,
audit; eval-patch: the repository track), ``run`` (run) and
``scores`` (score, compare, export), ``views`` (runs, show, report), ``serve`` (serve: the reward service);
``verdicts`` renders verdicts for the terminal. May import every other layer; nothing imports it.
"""

import typer

from kbench.cli import audit, evaluate, problems, run, scores, serve, tasks, views

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


def _print_version(asked: bool) -> None:
    if asked:
        from kbench.runs.manifest import harness_version

        typer.echo(f"kbench {harness_version()}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print kbench's version (and git revision, in a checkout) and exit."),
) -> None:
    """A judge for AI-generated GPU kernels: correct first, then faster."""


for group in (evaluate, problems, audit, tasks, run, scores, views, serve):
    group.register(app)

if __name__ == "__main__":
    app()
