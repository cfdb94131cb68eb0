from kbench.cli import app

app(prog_name="kbench")
