"""``kbench report``: one self-contained HTML file, checked as text and in a real browser.

The browser test drives Debian's Chromium (tests/install-browser.sh) through
Playwright; it skips where there is none, except under KBENCH_REQUIRE_BROWSER=1
(CI), where it fails.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner
from view_fixtures import GELU_REASON, GELU_TAIL, base_run, generated_run, make_store, solution_source

from kbench.cli import app
from kbench.runs import log_axis, report, views
from kbench.runs.records import EvaluationRecord, TurnRecord

RESAMPLES = 200  # the report's figures are tested elsewhere (test_score, test_compare); keep it quick
CHROMIUM = ("/usr/bin/chromium", "chromium", "chromium-browser")
# Where the browser test saves its picture of an open drill-down (docs/report-drilldown.png is made so).
SCREENSHOT = os.environ.get("KBENCH_REPORT_SCREENSHOT")


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    """The report of runs base and next (the second compared with the first), made by the CLI."""
    directory = tmp_path_factory.mktemp("report")
    store = make_store(directory / "kbench.db")
    output = directory / "report.html"
    done = CliRunner().invoke(app, ["report", "base", "next", "--store", str(store), "-o", str(output),
                                    "--resamples", str(RESAMPLES)])
    assert done.exit_code == 0, done.output
    assert f"to {output}" in done.stderr
    return output


@pytest.fixture(scope="module")
def html(page_file):
    return page_file.read_text()


def test_the_page_needs_nothing_from_a_network(html):
    tags_with_urls = re.findall(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*[\"']?(?:https?:)?//", html,
                                re.IGNORECASE)
    assert tags_with_urls == []
    assert re.findall(r"@import\s+url\(\s*[\"']?(?:https?:)?//", html) == []
    assert "<script src" not in html


def test_plotly_js_is_inlined_exactly_once(html):
    from plotly.offline import get_plotlyjs

    assert html.count(get_plotlyjs()) == 1
    assert html.count("* plotly.js v") == 1


def test_the_page_holds_every_problem_reason_manifest_and_flip(html):
    for problem in base_run().problems:
        assert html.count(problem.problem_id) >= 2  # in each run's table
    assert "made by hand: compile_error" in html and "incorrect: values differ at trial 0" in html
    assert "kbench run --run base" in html and "abcdef123456" in html  # the manifest: command and revision
    assert "timed on a CPU" in html and "incomplete: 1 problem not fully evaluated" in html
    flips = html[html.index("Problems whose status flipped"):]
    flipped = re.findall(r"<tr><td>([\w/]+)</td>", flips[: flips.index("</table>")])
    assert sorted(flipped) == ["level1/gelu", "level1/relu", "level2/gemm_relu"]
    assert "Comparison: next &minus; base" in html


def test_every_speedup_figure_of_a_cpu_run_is_marked(html):
    """Issue 59: the geomean intervals, the fast_p tables and the comparison of runs timed on a CPU
    say that their speedups mean nothing there, beside the figures, not only in a note above."""
    assert "<th>geomean speedup (eager) (not meaningful on a CPU)</th>" in html
    assert "<caption>fast_p over eager (not meaningful on a CPU)</caption>" in html
    assert "shared problems, then B &minus; A by level (not meaningful on a CPU)</caption>" in html
    gpu = base_run()
    gpu = replace(gpu, run=replace(gpu.run, config=replace(gpu.run.config, device="cuda:0")))
    page = report.render([gpu], resamples=RESAMPLES)
    assert "<th>geomean speedup (eager)</th>" in page and "not meaningful on a CPU" not in page


def test_text_from_the_store_is_escaped():
    data = base_run(spec=[("level1/x", 1, [("incorrect", None)])])
    hostile = EvaluationRecord("level1/x", 0, "incorrect", False, "<script>alert('owned')</script>")
    page = report.render([replace(data, evaluations=[hostile])], resamples=RESAMPLES)
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page


def test_a_missing_plotly_is_one_line_naming_the_extra(monkeypatch, tmp_path):
    store = make_store(tmp_path / "kbench.db")
    monkeypatch.setitem(sys.modules, "plotly.graph_objects", None)  # as if plotly were not installed
    with pytest.raises(report.MissingDependency) as raised:
        report.render([base_run()])
    assert "\n" not in str(raised.value) and f"{sys.executable} -m pip install -e '.[report]'" in str(raised.value)
    done = CliRunner().invoke(app, ["report", "base", "--store", str(store), "-o", str(tmp_path / "r.html")])
    assert done.exit_code == 2
    assert "pip install -e '.[report]'" in " ".join(done.stderr.split())  # whatever the console's width
    assert not (tmp_path / "r.html").exists()


def test_the_report_module_imports_plotly_only_when_rendering():
    """The judge's machines (the GPU ones) have no plotly: importing kbench must not need it."""
    tree = ast.parse(Path(report.__file__).read_text())
    top_level = {alias.name.split(".")[0] for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
                 for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])}
    assert not top_level & {"plotly", "jinja2"}


def chromium() -> str:
    found = next((path for name in CHROMIUM if (path := shutil.which(name))), None)
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        found = None
    if found is None:
        message = "no Chromium with Playwright here (tests/install-browser.sh, pip install -e '.[test]')"
        if os.environ.get("KBENCH_REQUIRE_BROWSER") == "1":
            pytest.fail(message + ", and KBENCH_REQUIRE_BROWSER=1 requires one")
        pytest.skip(message)
    return found


def test_the_page_in_a_real_browser(page_file):
    """Loads without errors, every plot is drawn, the tables hold every sample, and a click sorts."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True)
        try:
            page = browser.new_page()
            page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
            page.on("console", lambda message: errors.append(f"console: {message.text}")
                    if message.type == "error" else None)
            page.goto(page_file.as_uri(), wait_until="load")
            figures = page.locator(".plotly-graph-div")
            assert figures.count() == 3  # fast_p, speedups, the comparison
            for i in range(figures.count()):
                figures.nth(i).locator(".main-svg").first.wait_for(timeout=15_000)
                assert figures.nth(i).locator(".plot-container").count() == 1
            assert page.locator(".plotly-graph-div .scatterlayer .trace").count() >= 2  # drawn, not just framed

            expected = [row.problem_id for row in views.sample_rows(base_run())]
            table = page.locator("#problems-1")
            assert table.locator("tbody tr td:first-child").all_inner_texts() == expected

            speedup = table.locator("thead th", has_text="speedup (eager)")
            column = table.locator("thead th").all_inner_texts().index(speedup.inner_text())
            cells = table.locator(f"tbody tr td:nth-child({column + 1})")
            speedup.click()
            ascending = cells.all_inner_texts()
            assert ascending[:3] == ["0.8x", "1.5x", "2.5x"] and set(ascending[3:]) == {"-"}
            speedup.click()
            assert cells.all_inner_texts()[:3] == ["2.5x", "1.5x", "0.8x"]
            problem = table.locator("thead th", has_text="problem")
            problem.first.click()
            assert table.locator("tbody tr td:first-child").all_inner_texts() == sorted(expected)
        finally:
            browser.close()
    assert errors == []


def test_a_drilldown_in_a_real_browser(page_file):
    """A click on a problem opens its drill-down: the whole reason, the failed trial, the output, the source;
    Escape closes it; a flip opens the other run's; the timing plot and the speedup plot read 1-2-5."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 860})
            page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
            page.on("console", lambda message: errors.append(f"console: {message.text}")
                    if message.type == "error" else None)
            page.goto(page_file.as_uri(), wait_until="load")
            dialog = page.locator("dialog#drilldown")
            assert not dialog.is_visible()

            page.locator("#problems-1 a.drill", has_text="level1/gelu").click()
            dialog.locator("h2").wait_for()
            assert dialog.locator("h2").inner_text() == "level1/gelu #0: incorrect"
            assert "run base;" in dialog.inner_text()
            assert dialog.locator("pre.reason").inner_text() == GELU_REASON  # the line the table leaves out too
            failed = dialog.locator("table.trials tr.failed td").all_inner_texts()
            assert failed == ["0", "failed", "values", "max abs error 0.5", "0.5", "0.25"]
            assert dialog.locator("pre.output").text_content() == GELU_TAIL
            assert dialog.locator("pre.source").text_content() == solution_source("level1/gelu", 0)
            assert page.evaluate("location.hash") == "#sample-1-1"
            page.keyboard.press("Escape")
            page.wait_for_function("location.hash === ''", timeout=5000)  # the dialog's close event clears it, after
            assert not dialog.is_visible()

            page.locator("#problems-1 a.drill.more").first.click()  # [whole reason]: gelu's, the one cut
            dialog.locator("pre.reason").wait_for()
            assert dialog.locator("pre.reason").inner_text() == GELU_REASON
            page.keyboard.press("Escape")

            flips = page.locator("table.flips")
            flips.locator("tr", has_text="level1/gelu").locator("a.drill").nth(1).click()  # B's side: correct
            dialog.locator("h2").wait_for()
            assert dialog.locator("h2").inner_text() == "level1/gelu #0: correct" and "run next;" in dialog.inner_text()
            page.keyboard.press("Escape")

            page.locator("#problems-1 a.drill", has_text="level1/relu").click()
            plot = dialog.locator("svg.timing")
            plot.wait_for()
            assert plot.locator("g.series text.label").all_text_contents() == ["candidate", "eager"]
            assert plot.locator("text.tick").all_text_contents() == ["0.2", "0.5", "1", "2"]  # calls 0.38-0.9 ms
            medians = dialog.locator("table.timing tbody tr").all_inner_texts()
            assert "0.41" in medians[0].split("\t") and "0.615" in medians[1].split("\t")
            assert "speedup 1.5x, 95% interval 1.42-1.58" in dialog.inner_text()
            if SCREENSHOT:
                page.locator("#problems-1 a.drill", has_text="level1/relu").scroll_into_view_if_needed()
                page.screenshot(path=SCREENSHOT)
            page.keyboard.press("Escape")

            speedups = page.locator(".plotly-graph-div").nth(1)
            assert speedups.locator(".ytick text").all_text_contents() == ["0.5", "1", "2", "5"]
        finally:
            browser.close()
    assert errors == []


def test_the_report_leads_with_fast_1_over_torch_compile():
    run = base_run()
    run = replace(run, evaluations=[replace(e, speedup={**e.speedup, "compile": 1.2}) for e in run.evaluations])
    page = report.render([run])
    assert page.index('id="published"') < page.index('id="runs"')
    published = page[page.index('id="published"'):page.index("</table>", page.index('id="published"'))]
    assert "all" in published and "level 1" in published


def test_the_report_shows_kernels_only_beside_the_headline_and_each_samples_style_flags():
    data = base_run(spec=[("level1/kernel", 1, [("correct", 2.0)]), ("level1/mixed", 1, [("correct", 2.0, "reference-op")])])
    page = report.render([data], resamples=RESAMPLES)
    scores = page[page.index('<table class="scores">'):]
    header, first = scores.split("</thead>")[0], scores.split("<tbody>")[1].split("</tr>")[0]
    assert "correct, kernels only" in header
    assert re.findall(r"<td class=\"num\">([\d.]+)", first)[1:3] == ["1.000", "0.500"]  # problems, then 2/2 and 1/2
    fast_p = page[page.index('<caption>fast_p over eager (not meaningful on a CPU)</caption>'):]
    assert "all, kernels only" in fast_p.split("</thead>")[0]
    row_1 = next(row for row in fast_p.split("<tr>") if row.startswith("<th>1</th>"))
    assert re.findall(r'<td class="num[^"]*">([\d.]+)', row_1) == ["1.000", "1.000", "0.500", "0.500"]  # all, level 1
    mixed_row = next(row for row in page.split("<tr>") if row.startswith('<td><a class="drill" href="#sample-1-1">'
                                                                          'level1/mixed</a></td>'))
    assert "<td>reference-op</td>" in mixed_row


def fragments(page: str, run: int) -> list[str]:
    """The drill-downs of the page's run ``run`` (from 1), unpacked as the page's script does."""
    packed = re.search(rf'<script type="application/octet-stream" class="drilldowns" id="drilldowns-{run}">([^<]*)'
                       "</script>", page)
    assert packed, f"no drill-downs for run {run}"
    return report.unpacked_fragments(packed.group(1))


def test_each_sample_has_a_drilldown_with_its_whole_reason_trials_output_and_source(html):
    rows = views.sample_rows(base_run())
    shown = fragments(html, 1)
    assert len(shown) == len(rows)
    gelu = shown[[r.problem_id for r in rows].index("level1/gelu")]
    assert "<pre class=\"reason\">" + GELU_REASON + "</pre>" in gelu  # the whole reason, its second line too
    assert "at index (3, 1)" not in views.one_line(GELU_REASON)  # what the table shows of it
    assert '<tr class="failed"><td class="num">0</td><td>failed</td>' in gelu
    assert GELU_TAIL.strip().splitlines()[-1] in gelu and solution_source("level1/gelu", 0).splitlines()[0] in gelu
    assert "run base" in gelu and "<h3>Conversation" not in gelu  # files, not a model run
    relu = shown[[r.problem_id for r in rows].index("level1/relu")]
    assert '<svg class="timing"' in relu and "95% interval 1.42-1.58" in relu and "0.615 ms" in relu
    matmul = shown[[r.problem_id for r in rows].index("level1/matmul")]
    assert "missing" in matmul and "<h3>Solution" not in matmul
    assert len(fragments(html, 2)) == len(views.sample_rows(base_run("next")))


def test_a_cut_reason_links_to_the_whole_of_it(html):
    table = html[html.index('id="problems-1"'):]
    table = table[:table.index("</table>")]
    gelu = next(row for row in table.split("<tr>") if ">level1/gelu</a>" in row)
    assert '<a class="drill more" href="#sample-1-1">[whole reason]</a>' in gelu
    relu = next(row for row in table.split("<tr>") if ">level1/relu</a>" in row)
    assert "[whole reason]" not in relu  # one line, shown whole


def test_a_model_runs_drilldown_holds_the_conversation():
    page = report.render([generated_run()], resamples=RESAMPLES)
    (shown,) = fragments(page, 1)
    assert "Conversation (2 turns)" in shown
    assert "Write a kernel for ReLU" in shown and "This is turn 2: fix it" in shown
    assert "```python\ngood\n```" in shown and "incorrect: shape (2,) != (3,)" in shown
    assert "100 tokens in, 50 out, $0.0010" in shown and "120 tokens in, 60 out, $0.0012" in shown
    assert "turn 2 of 2" in shown


def test_text_from_the_store_is_escaped_in_the_drilldowns_too():
    data = generated_run()
    hostile = "<script>alert('owned')</script>"
    data = replace(data, evaluations=[replace(e, reason=hostile) for e in data.evaluations],
                   samples=[replace(s, source=hostile) for s in data.samples],
                   turns=[replace(t, prompt=hostile, reply=hostile) for t in data.turns])
    (shown,) = fragments(report.render([data], resamples=RESAMPLES), 1)
    assert "<script" not in shown and shown.count("&lt;script&gt;alert(&#39;owned&#39;)") == 6


def test_a_big_runs_drilldowns_stay_small():
    """A model run of 200 samples of 3 turns, with prompts of one template (as real ones) and distinct replies:
    the page carries the drill-downs in a fraction of their size."""
    data = generated_run()
    turns, evaluations = [], []
    template = "You write fast GPU kernels. Replace the operators of this PyTorch model. " * 60
    for problem in range(200):
        for turn in range(1, 4):
            reply = "".join(f"x{problem}_{turn}_{i} = torch.relu(x{i})\n" for i in range(60))
            turns.append(TurnRecord("level1/relu", problem, turn, 1, template + f"problem {problem}", {}, reply,
                                    None, reply, "s" * 64, {}, 1000, 500, 0.01, "", "incorrect", False, "wrong"))
        evaluations.append(replace(data.evaluations[0], sample_index=problem, turn=3))
    samples = [replace(data.samples[0], index=problem, source=f"# sample {problem}\n") for problem in range(200)]
    page = report.render([replace(data, samples=samples, evaluations=evaluations, turns=turns)], resamples=RESAMPLES)
    shown = fragments(page, 1)
    raw = len("".join(shown).encode())
    packed = len(re.search(r'id="drilldowns-1">([^<]*)</script>', page).group(1))
    assert len(shown) == 200 and raw > 4_000_000 and packed < raw / 10, (raw, packed)


def test_log_axes_are_labelled_at_1_2_5():
    assert log_axis.log_ticks(0.1, 10) == [0.1, 0.2, 0.5, 1, 2, 5, 10]
    assert log_axis.log_ticks(0.17, 2.5) == [0.1, 0.2, 0.5, 1, 2, 5]  # 0.17 between the labels 0.1 and 0.2
    assert log_axis.log_ticks(0.02, 30) == [0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50]
    assert log_axis.log_ticks(0.002, 30) == [0.001, 0.01, 0.1, 1, 10, 100]  # over 4 decades: powers of ten
    ticks, labels = log_axis.axis([0.8, 3.0], include=(1.0,))
    assert labels == ["0.5", "1", "2", "5"] and ticks == [0.5, 1, 2, 5]
    assert log_axis.axis([])[1] == ["0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "20"]
    with pytest.raises(ValueError):
        log_axis.log_ticks(0, 1)


def test_the_speedup_plot_has_1_2_5_labels(html):
    assert '"ticktext":["0.5","1","2","5"]' in html.replace(" ", "")  # base and next: speedups 0.8 to 3


# --- issue 59: `make test` runs the browser tests, or stops saying why ------------------------------

ROOT = Path(__file__).resolve().parent.parent


def test_make_test_installs_and_requires_the_browser_and_ci_runs_the_readmes_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test\n" in readme
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith("#") and not line.startswith(("set ", "cd "))]
    assert ci == ["make test"], "CI runs the README's test command, nothing beside it"
    dry = subprocess.run(["make", "-n", "test", "VENV=/nonexistent-venv"], cwd=ROOT, capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "KBENCH_REQUIRE_BROWSER"})
    assert dry.returncode == 0, dry.stderr
    assert "bash tests/install-browser.sh" in dry.stdout and "KBENCH_REQUIRE_BROWSER=1 " in dry.stdout
    skipped = subprocess.run(["make", "-n", "test", "KBENCH_REQUIRE_BROWSER=0"], cwd=ROOT, capture_output=True,
                             text=True)
    assert "install-browser" not in skipped.stdout and "KBENCH_REQUIRE_BROWSER=0 " in skipped.stdout
    counts = re.findall(r"\b\d[\d,]* (?:tests?|passed|skipped|failed|collected|xfailed)\b", readme)
    assert counts == [], "test counts in the README go stale with the next test"


def test_without_a_browser_or_a_way_to_install_one_the_set_up_says_why(tmp_path):
    done = subprocess.run(["/bin/bash", str(ROOT / "tests" / "install-browser.sh")], capture_output=True, text=True,
                          env={"PATH": str(tmp_path)})  # no chromium, no apt-get
    assert done.returncode == 1
    assert "the report's browser tests need Chromium, and there is none on PATH and no apt-get" in done.stderr
    assert "make test KBENCH_REQUIRE_BROWSER=0" in done.stderr
