"""`spark-jax serve` tells what the reports tell (issue 51), checked in a real headless Chromium
(the OS package, as `test_serve_browser.py`) over copies of committed `results/` folders and a
tiny search run here:

- each page's verdicts (run vs seed, a benchmark's per-task comparison, a comparison's method
  pairs and sampling controls) read in the page equal the tables and lines of the report that
  the package writes for the same folder;
- no page is wider than an 800 px window (`scrollWidth <= clientWidth`);
- the charts are drawn (best-so-far curves, per-task bars with one dot per seed, one legend
  entry per method, a marker at the budget); no console error;
- units and names: percent for accuracy, CartPole's return by its name, a comparison folder
  without run databases says it keeps a report only, comparison members grouped on the index;
- the paper's figures beside ours: where the paper prints per-task OOD accuracy (Table 1, the
  30-task appendix), the benchmark, comparison and run pages draw its bars apart from ours,
  each labelled with its true source and protocol, at the CSV's values.

Skipped, with the reason, when Playwright or /usr/bin/chromium (or $SPARK_JAX_CHROMIUM) is
missing.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading
from urllib.parse import urlencode

import pytest
import serve_fixtures

from spark_jax import compare
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.benchmark.tables import write_benchmark_report
from spark_jax.report import reference
from spark_jax.report.tables import write_report
from spark_jax.serve import make_server, verdicts

REPO = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("SPARK_JAX_CHROMIUM", "/usr/bin/chromium")
RUN, BENCH, CMP = "default-search", "default-search", "llm-trained/data"
REPORT_ONLY = "trust-rules/after/budget"
CARTPOLE = "families/data/cartpole_v1-mlp"
FRESH = "fresh/tiny"
SEQ = "sequential-bench"  # a benchmark in the sequential mode (serve_fixtures)
WIDE, NARROW = 1400, 800

playwright_sync = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')"
)
if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(
        f"no Chromium at {CHROMIUM}: install the OS package (apt-get install -y chromium) "
        "or point SPARK_JAX_CHROMIUM at one",
        allow_module_level=True,
    )


def _copy(name: str, root: pathlib.Path) -> None:
    shutil.copytree(REPO / "results" / name, root / name, ignore=shutil.ignore_patterns("*.png"))


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """Copies of committed results folders, and a tiny search run to its end (seconds a
    candidate; its report.md written by the search)."""
    root = tmp_path_factory.mktemp("reports")
    for name in (RUN, CMP, REPORT_ONLY, CARTPOLE):
        _copy(name, root)
    serve_fixtures.make_sequential_benchmark(root / SEQ)
    run = subprocess.run(
        [sys.executable, "-m", "spark_jax.cli", "search", "--config", "configs/tiny.yaml"]
        + ["--run-dir", str(root / FRESH), "--no-progress"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return root


@pytest.fixture(scope="module")
def reports(root, tmp_path_factory):
    """The reports the package writes for the same folders (on copies: the writers open
    their databases read-write), as Markdown text."""
    out = tmp_path_factory.mktemp("written")
    texts = {}
    for name in (RUN, FRESH):
        copy = shutil.copytree(root / name, out / name.replace("/", "-"))
        texts["run:" + name] = write_report(copy).report.read_text()
    for key, name in (("benchmark", BENCH), ("sequential", SEQ)):
        bench = shutil.copytree(root / name, out / key)
        with BenchmarkDB(bench / "benchmark.db") as db:
            texts[key] = write_benchmark_report(db, bench).read_text()
    cmp_dir = shutil.copytree(root / CMP, out / "cmp")
    plan = compare.ComparePlan.from_dict(json.loads((cmp_dir / compare.PLAN_FILE).read_text()))
    texts["compare"] = compare.write_compare_report(cmp_dir, plan).read_text()
    return texts


@pytest.fixture(scope="module")
def base(root):
    server = make_server(root, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with playwright_sync.sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
            headless=True,
        )
        yield b
        b.close()


class Page:
    """A page in a window `width` px wide that records console errors and page errors."""

    def __init__(self, browser, width: int) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.errors: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.page.locator("#live", has_text="live ·").wait_for()  # rendered from its JSON
        self.page.wait_for_timeout(200)  # the charts' first frame

    def overflow(self) -> tuple[int, int]:
        return self.page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )


@pytest.fixture
def narrow(browser):
    p = Page(browser, NARROW)
    yield p
    p.context.close()


def _url(base: str, kind: str, path: str) -> str:
    return f"{base}{kind}?{urlencode({'path': path})}"


def _plain(markdown_text: str) -> str:
    """A report's Markdown cell or line as the page shows it: no ` or ** marks."""
    return re.sub(r"\*\*|`", "", markdown_text)


def _section(report: str, heading: str) -> list[str]:
    """The lines of a report's section, its heading line excluded."""
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start + 1 : end]


def _report_tables(lines: list[str]) -> list[list[list[str]]]:
    """Every table of a report's lines: head and rows, cells as the page shows them."""
    return [
        [[_plain(c) for c in row] for row in [b["table"]["head"], *b["table"]["rows"]]]
        for b in verdicts.blocks(lines)
        if "table" in b
    ]


def _page_tables(page, selector: str) -> list[list[list[str]]]:
    return page.evaluate(
        """sel => [...document.querySelectorAll(sel + ' table')].map(t =>
             [...t.querySelectorAll('tr')].map(r =>
               [...r.querySelectorAll('th,td')].map(c => c.innerText.trim())))""",
        selector,
    )


def _paper_rows_are_the_reports(page, report: str, heading="## Paper reference rows") -> None:
    page.locator("#reference summary").click()  # folded at first
    expected = _report_tables(_section(report, heading))
    assert expected and _page_tables(page, "#reference") == expected


def test_blocks_cut_a_reports_markdown():
    lines = ["**Verdict:** a `b`", "", "| x | y |", "|---|---:|", "| a \\| b | 1 |", "- one"]
    lines += ["- two", "![plot](p.png)", "## Head"]
    assert verdicts.blocks(lines) == [
        {"text": "**Verdict:** a `b`"},
        {"table": {"head": ["x", "y"], "rows": [["a | b", "1"]]}},
        {"items": ["one", "two"]},
        {"heading": "Head"},
    ]


@pytest.mark.parametrize("name", [RUN, FRESH])
def test_run_page_leads_with_the_reports_test_verdict(base, reports, narrow, name):
    report = reports["run:" + name]
    narrow.open(_url(base, "run", name))
    page = narrow.page
    first = page.locator("main section h2").first.inner_text()
    assert first.startswith("Final outcome on the test set")
    verdict_line = next(line for line in report.splitlines() if line.startswith("**Verdict"))
    shown = page.locator("#run-verdict").inner_text().strip()
    assert shown == _plain(verdict_line), (ascii(shown[:80]), ascii(_plain(verdict_line)[:80]))
    spread = _report_tables(_section(report, "## Seed spread"))
    assert spread and _page_tables(page, "#outcome")[-len(spread) :] == spread
    for chart in ("#c-best", "#c-best-eval"):
        assert page.locator(chart + " canvas").count() == 1
    assert int(page.locator("#c-best").get_attribute("data-points")) > 0
    budget = page.evaluate("fetch(location.href.replace('/run?', '/api/run?')).then(r => r.json())")
    marker = page.locator("#c-best-eval").get_attribute("data-marker")
    assert marker == str(budget["run"]["budget"] - 1)  # the budget counts the seed (x = 0)
    head = page.locator("#attempts th").all_inner_texts()
    assert head[-1] == "OOD accuracy (%), selection set"
    assert re.fullmatch(r"\d+\.\d\d %", page.locator("#attempts tbody td").last.inner_text())
    _paper_rows_are_the_reports(page, report, "## Paper reference figures")
    calls = page.locator("#search tr", has_text="editor calls (offline rules").inner_text()
    assert calls.split("\t")[-1].strip() != ""
    assert narrow.overflow()[0] <= narrow.overflow()[1]
    assert narrow.errors == []


def test_benchmark_page_shows_the_reports_paired_comparison(base, reports, narrow):
    narrow.open(_url(base, "benchmark", BENCH))
    page = narrow.page
    expected = _report_tables(_section(reports["benchmark"], "## Paired comparison"))
    assert len(expected) == 2 and _page_tables(page, "#bench-verdicts") == expected
    notes = page.locator("#bench-verdicts ul").inner_text()
    assert "Minimal detectable difference" in notes and "Holm" in notes
    bars = page.locator("#c-bench-bars svg")
    assert bars.locator("rect.bar").count() == 20  # 2 programs x 10 tasks
    assert bars.locator("circle.seed-dot").count() == 60  # one per seed: 2 x 10 x 3
    rows = page.locator("table.bench-table tbody tr")
    assert rows.count() == 10 + 3  # one row per task, then the mean, params, MACs
    assert rows.nth(0).inner_text().split("\t")[:2] == ["dfs", "15.95 ± 4.69"]
    assert "68,024" in page.locator("table.bench-table").inner_text()
    _paper_rows_are_the_reports(page, reports["benchmark"])
    assert narrow.overflow()[0] <= narrow.overflow()[1]
    assert narrow.errors == []


def test_sequential_benchmark_page_shows_each_tasks_decision(base, reports, narrow):
    narrow.open(_url(base, "benchmark", SEQ))
    page = narrow.page
    expected = _report_tables(_section(reports["sequential"], "## Paired comparison"))
    assert expected and _page_tables(page, "#bench-verdicts") == expected
    assert "Design" in page.locator("#bench-verdicts ul").inner_text()
    marks = page.evaluate(
        "[...document.querySelectorAll('#c-bench-bars text.decision')]"
        ".map(t => t.firstChild.textContent)"
    )
    assert "≡" in marks  # mine is identical to the baseline on dfs
    dfs = page.locator("table.bench-table tr", has_text="dfs").inner_text().split("\t")
    assert dfs[-1] == "identical" and "identical: the baseline's runs" in dfs[2]
    assert "sequential" in page.locator("main p").first.inner_text()
    assert narrow.overflow()[0] <= narrow.overflow()[1]
    assert narrow.errors == []


def test_comparison_page_leads_with_the_test_set_and_the_reports_verdicts(base, reports, narrow):
    narrow.open(_url(base, "compare", CMP))
    page = narrow.page
    assert page.locator("main section h2").first.inner_text().startswith("On the test set")
    first = _report_tables(_section(reports["compare"], "## Methods against `spark`"))
    controls = _report_tables(_section(reports["compare"], "## Methods against the sampling"))
    assert first and _page_tables(page, "#cmp-verdicts-first") == first
    assert controls and _page_tables(page, "#cmp-verdicts-controls") == controls
    test_rows = page.locator("table.test-table tbody tr").all_inner_texts()
    assert test_rows[0].split("\t")[:3] == ["spark (Full SPARK)", "2", "26.03 ± 0.62"]
    assert test_rows[-1].startswith("seed (seed program, no search)")
    for chart in ("#c-cmp-best", "#c-cmp-valid"):
        legend = page.locator(chart + " .u-legend .u-series:visible")
        assert legend.count() == 4  # one entry per method: spark, openevolve, sample, sequential
        assert "--" not in page.locator(chart).inner_text()
    _paper_rows_are_the_reports(page, reports["compare"])
    assert narrow.overflow()[0] <= narrow.overflow()[1]
    assert narrow.errors == []


def test_every_page_fits_800_px_and_says_what_it_shows(base, narrow):
    pages = [
        (base, "Comparisons"),
        (_url(base, "proposal", RUN) + "&attempt=8", "Editor calls"),
        (_url(base, "run", CARTPOLE), "return"),
        (_url(base, "compare", REPORT_ONLY), "report only"),
    ]
    for url, text in pages:
        narrow.open(url)
        assert text in narrow.page.locator("main").inner_text(), url
        width, client = narrow.overflow()
        assert width <= client, (url, width, client)
    cartpole = narrow.page
    narrow.open(_url(base, "run", CARTPOLE))
    assert "OOD" not in cartpole.locator("#search").inner_text()  # CartPole's score: a return
    narrow.open(_url(base, "compare", REPORT_ONLY))
    members = narrow.page.locator("#cmp-members").inner_text()
    assert "missing" not in members and "no database kept (report.md only)" in members
    assert "editor: offline" in narrow.page.locator("#cmp-protocol").inner_text()
    narrow.open(base)
    group = narrow.page.locator(".comparison", has_text=CMP)
    assert group.locator("table.members tbody tr").count() == 8  # its member searches
    assert CMP not in narrow.page.locator("section", has_text="Runs").first.inner_text()
    assert narrow.errors == []


def test_screenshots_at_both_widths(base, browser):
    """With $SPARK_JAX_SCREENSHOTS set, full-page screenshots of the run, benchmark and
    comparison pages at 1400 and 800 px; at both widths no page overflows."""
    out = os.environ.get("SPARK_JAX_SCREENSHOTS")
    for width in (WIDE, NARROW):
        p = Page(browser, width)
        try:
            for name, url in (
                ("run", _url(base, "run", RUN)),
                ("benchmark", _url(base, "benchmark", BENCH)),
                ("comparison", _url(base, "compare", CMP)),
            ):
                p.open(url)
                assert p.overflow()[0] <= p.overflow()[1], (name, width)
                if out:
                    pathlib.Path(out).mkdir(parents=True, exist_ok=True)
                    p.page.screenshot(path=f"{out}/{name}-{width}.png", full_page=True)
            assert p.errors == []
        finally:
            p.context.close()


def _figure(page, selector: str) -> dict:
    """A paper figure as drawn: our bars and the published bars (label, value, source,
    protocol), the legend and the source line."""
    return page.evaluate(
        """sel => {
          const box = document.querySelector(sel);
          const bar = (r) => ({title: r.querySelector('title').textContent,
            source: r.dataset.source || null, protocol: r.dataset.protocol || null});
          return {
            ours: [...box.querySelectorAll('rect.ours-bar')].map(bar),
            published: [...box.querySelectorAll('rect.paper-bar')].map(bar),
            legend: box.querySelector('.legend').innerText,
            source: box.querySelector('p.source').innerText,
          };
        }""",
        selector,
    )


def _table1(task: str) -> dict[str, float]:
    """Table 1's OOD accuracy (%) per method for one task, from the shipped CSV."""
    return {r.method: r.values[task] for r in reference.clrs_10task() if r.metric == "ood_acc"}


def _expected_bars(kind: str, tasks: list[str]) -> list[tuple[str, str, str]]:
    """(value as drawn, source, protocol) of each published bar, from the shipped CSVs."""
    if kind == "family":  # CartPole: the appendix row of the non-CLRS benchmarks
        row = next(
            r
            for r in reference.extra_benchmarks()
            if r.benchmark == "cartpole_v1" and r.metric == "test_return"
        )
        source = "SPARK paper, appendix table of the non-CLRS benchmarks"
        return [(f"{v:.2f} ·", source, "paper") for v in row.values.values() if v is not None]
    out = []
    for task in tasks:
        table1 = _table1(task)
        methods = ("CLRS", "OE", "Ours") if kind == "benchmark" else tuple(table1)
        for m in methods:
            cited = reference.source_of("10-task", m)
            protocol = "paper" if m != "EP" else "EvoPrompting's own (no preset of ours)"
            out.append((f"{table1[m]:.2f} % ·", cited.label(), protocol))
    return out


@pytest.mark.parametrize(
    "kind, path, box",
    [
        ("benchmark", BENCH, "#c-bench-paper"),
        ("compare", CMP, "#c-cmp-paper"),
        ("run", RUN, "#c-run-paper"),
        ("family", CARTPOLE, "#c-run-paper"),
    ],
)
def test_the_papers_figures_are_drawn_beside_ours(base, narrow, kind, path, box):
    """Table 1's per-task bars (the non-CLRS appendix row for CartPole) beside ours, never
    among them: each published bar carries its true source and protocol and the CSV's value;
    our bars are the page's own numbers."""
    page_kind = "run" if kind == "family" else kind
    narrow.open(_url(base, page_kind, path))
    page = narrow.page
    api = page.evaluate(
        f"fetch(location.href.replace('/{page_kind}?', '/api/{page_kind}?')).then(r => r.json())"
    )
    data = (api["outcome"] if page_kind == "run" else api)["paper_figure"]
    drawn = _figure(page, box)
    expected = _expected_bars(kind, [g["label"] for g in data["groups"]])
    assert len(drawn["published"]) == len(expected) > 0
    for bar, (value, source, protocol) in zip(drawn["published"], expected):
        assert bar["title"].startswith("published, not measured here: ")
        assert value in bar["title"]
        assert bar["source"] == source and bar["protocol"] == protocol
    assert "published, protocol `paper`" in drawn["legend"]
    assert "smoke protocol" in drawn["source"]
    assert ("Table 1" if kind != "family" else "non-CLRS benchmarks") in drawn["source"]
    # ours: the page's own numbers, in bars of their own
    assert drawn["ours"] and all(b["title"].startswith("ours: ") for b in drawn["ours"])
    assert all(b["source"] is None for b in drawn["ours"])
    if kind == "benchmark":
        means = [
            f"{c['mean']:.2f} %" for ti in range(10) for c in (r["cells"][ti] for r in api["table"])
        ]
        assert len(drawn["ours"]) == len(means) == 20
        assert all(m in b["title"] for m, b in zip(means, drawn["ours"]))
    if kind == "compare":
        spark = next(r for r in api["rows"] if r["name"] == "spark")
        assert f"{spark['test_best_pct']['mean']:.2f} %" in drawn["ours"][0]["title"]
    if kind == "family":  # the return, no percent sign
        assert [b["title"].split(": ")[-1] for b in drawn["ours"]] == ["432.38", "500.00"]
    assert narrow.overflow()[0] <= narrow.overflow()[1]
    assert narrow.errors == []
