"""`spark-jax serve` in a real headless browser: Playwright driving the OS's Chromium package
(Debian's `chromium`, `apt-get install -y chromium`; never a browser download) against a run
directory that a tiny search (configs/tiny.yaml, offline editor) is writing; that run is the
`spark` member of a comparison laid out as `spark-jax compare` writes it. The search is held
at its start until the live-chart test has its page open (`LiveSearch`): on a slow or busy
machine it could otherwise land every attempt before the page opened, leaving nothing to see.

Skipped, with the reason, when Playwright or /usr/bin/chromium (or $SPARK_JAX_CHROMIUM) is
missing. With $SPARK_JAX_SCREENSHOTS set, full-page screenshots are written there.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from urllib.parse import urlencode

import pytest
import serve_fixtures

from spark_jax.serve import make_server

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("SPARK_JAX_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SEARCH_WAIT_MS = 600_000  # a guard for a slow machine, not a timing check
LIVE = "cmp/spark/seed-0"  # the live search: the `spark` member (seed 0) of comparison `cmp`
ODD_COMPARISON = "odd<img src=x onerror=window.__pwned=3>"

playwright_sync = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (pip install -e '.[test]')"
)
if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(
        f"no Chromium at {CHROMIUM}: install the OS package (apt-get install -y chromium) "
        "or point SPARK_JAX_CHROMIUM at one",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    serve_fixtures.make_run(root / "fixed")
    serve_fixtures.make_benchmark(root / "bench")
    fixed = {("fixed-act-sar", 0): [None, 0.45], ("fixed-act-sar", 1): [0.5]}
    serve_fixtures.make_comparison(root / "cmp", fixed, ("spark", "fixed-act-sar"), (0, 1))
    serve_fixtures.make_comparison(root / ODD_COMPARISON, {("spark", 0): [0.5]}, ("spark",), (0,))
    return root


class LiveSearch:
    """The live search, held at its start: stopped (SIGSTOP, itself and its workers) as soon as
    its database can be read, before any attempt lands, so that a page opened while it is held
    is sure to see attempts still to come however slow the machine. Held, it still holds its
    lock, so the runs list shows it running. `resume()` lets it go on (again: no-op)."""

    def __init__(self, proc: subprocess.Popen, run_db: pathlib.Path) -> None:
        self.proc, self.run_db, self._held = proc, run_db, []

    def hold(self) -> None:
        deadline = time.monotonic() + SEARCH_WAIT_MS / 1000
        while self._attempts() is None:
            assert self.proc.poll() is None, "the live search ended before its database existed"
            assert time.monotonic() < deadline, "the live search made no database"
            time.sleep(0.05)
        # The search first (it starts no process once stopped), then its workers, until none
        # is left running.
        self._held = [self.proc.pid]
        os.kill(self.proc.pid, signal.SIGSTOP)
        while fresh := [p for p in _descendants(self.proc.pid) if p not in self._held]:
            for pid in fresh:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
            self._held += fresh
        assert self._attempts() == 0, "the live search was held too late: attempts had landed"

    def resume(self) -> None:
        for pid in self._held:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        self._held = []

    def poll(self):
        return self.proc.poll()

    def _attempts(self) -> int | None:
        """The attempts its database holds; None until it can be read."""
        if not self.run_db.exists():
            return None
        try:
            uri = f"file:{self.run_db}?mode=ro"
            with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=30)) as conn:
                [(n,)] = conn.execute("SELECT COUNT(*) FROM proposals").fetchall()
            return n
        except sqlite3.Error:  # not created yet, or its schema is still being written
            return None


@pytest.fixture(scope="module")
def search(root):
    """A tiny search writing root/LIVE, in its own process group (ended with it), held at its
    start until a test resumes it (`LiveSearch`)."""
    log = (root / "search.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "spark_jax.cli", "search", "--config", "configs/tiny.yaml"]
        + ["--run-dir", str(root / LIVE), "--no-progress"],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    live = LiveSearch(proc, root / LIVE / "run.db")
    try:
        live.hold()
        yield live
    finally:
        live.resume()  # a stopped process would not see the SIGINT below
        # Its workers run in sessions of their own: note them before stopping the search, and
        # end any that outlive it (by id), so that no process of this test is left behind.
        workers = _descendants(proc.pid)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # the search's own clean stop: it shuts its workers
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        log.close()


def _descendants(pid: int) -> list[int]:
    """Every living descendant of `pid` (Linux /proc)."""
    parents = {}
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
    out, frontier = [], [pid]
    while frontier:
        kids = [c for c, p in parents.items() if p in frontier]
        out += kids
        frontier = kids
    return out


@pytest.fixture(scope="module")
def base(root, search):
    server = make_server(root, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with playwright_sync.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


def _shot(page, name: str) -> None:
    out = os.environ.get("SPARK_JAX_SCREENSHOTS")
    if out:
        pathlib.Path(out).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(pathlib.Path(out) / f"{name}.png"), full_page=True)


def test_llm_answer_with_markup_is_shown_as_text(base, page):
    page.goto(base + "proposal?path=fixed&attempt=0")
    answer = page.locator("pre.response")
    answer.wait_for()
    assert answer.inner_text() == serve_fixtures.HOSTILE_ANSWER
    assert page.locator("#directive").inner_text() == serve_fixtures.HOSTILE_DIRECTIVE
    assert page.evaluate("window.__pwned") is None  # neither the <script> nor onerror ran
    assert page.locator("script").count() == 2  # the page's own two, nothing injected
    assert page.locator("main img, main b").count() == 0
    page.locator("details", has_text="reasoning").locator("summary").click()
    assert "<script>alert(1)</script>" in page.locator("details[open] pre").inner_text()
    _shot(page, "proposal-hostile-llm-answer")


def test_paths_outside_the_root_are_refused(base, page):
    resp = page.goto(base + "run?path=../..")
    assert resp.status == 403 and "outside the served root" in page.inner_text("body")
    _shot(page, "refused-path")
    assert page.request.get(base + "api/run?path=..%2F..%2Fetc").status == 403
    assert page.request.get(base + "api/proposal?path=fixed/../..&attempt=0").status == 403
    assert page.goto(base + "static/../../../etc/passwd").status == 404  # normalized by the browser


def test_benchmark_table_page(base, page):
    page.goto(base + "benchmark?path=bench")
    page.get_by_text("OOD accuracy (%) by task").wait_for()
    row = page.locator("table.bench-table tr", has_text="dfs")  # one row per task
    cells = row.inner_text().split("\t")  # task, the programs, mine's verdict vs the baseline
    assert cells[2:] == ["70.00 (1 failed)", "cannot tell"]
    _shot(page, "benchmark-table")


def test_runs_list_shows_the_live_run(base, page, search):
    page.goto(base)
    live_row = page.locator("table.runs tr", has_text=LIVE)
    live_row.wait_for(timeout=SEARCH_WAIT_MS)  # listed once the search created its database
    assert "bfs" in live_row.inner_text() and "tiny" in live_row.inner_text()
    assert "fixed" in page.locator("table.runs").first.inner_text()  # not in a comparison
    # the live search is the comparison's member: listed under it, not among the lone runs
    assert LIVE in page.locator(".comparison", has_text="cmp").first.inner_text()
    page.wait_for_function(
        "p => [...document.querySelectorAll('table.runs tr')].some("
        "r => r.innerText.includes(p) && r.innerText.includes('running'))",
        arg=LIVE,
    )
    _shot(page, "runs-list")


def test_best_so_far_chart_gains_points_while_the_search_runs(base, page, search):
    page.goto(base + "run?" + urlencode({"path": LIVE}))
    chart = page.locator("#c-best")
    chart.locator("canvas").wait_for()
    before = int(chart.get_attribute("data-points"))
    assert search.poll() is None, "the search ended before the page was open"
    search.resume()  # held until now: its attempts are all still to come
    page.wait_for_function(
        "n => +document.getElementById('c-best').dataset.points > n",
        arg=before,
        timeout=SEARCH_WAIT_MS,
    )  # no reload: the page polls
    after = int(chart.get_attribute("data-points"))
    assert after > before
    page.get_by_text("best-so-far OOD accuracy vs attempt (selection set)").wait_for()
    _shot(page, "run-live")


def test_proposal_page_shows_diff_and_directive(base, page, search):
    search.resume()  # (when run alone: the chart test resumes it otherwise)
    page.goto(base + "run?" + urlencode({"path": LIVE}))
    page.locator("#attempts a", has_text="#0").wait_for(timeout=SEARCH_WAIT_MS)
    page.locator("#attempts a", has_text="#0").click()
    page.wait_for_url("**/proposal?**attempt=0")
    page.locator("#diff pre").wait_for()
    diff = page.locator("#diff pre").inner_text()
    assert diff.startswith("--- parent\n+++ child") and "\n+" in diff
    assert page.locator("#diff .add").count() >= 1
    directive = page.locator("#directive").inner_text()
    assert directive and directive != "(none)"
    assert page.get_by_text("Feasibility report").count() == 1
    _shot(page, "proposal-live-diff")


def test_comparison_page_from_the_index(root, base, page, search):
    page.goto(base)
    page.locator(".comparisons").get_by_role("link", name="cmp", exact=True).click()
    page.wait_for_url("**/compare?path=cmp")
    rows = page.locator("table.methods tbody tr")
    rows.first.wait_for()
    assert rows.count() == 2
    spark, fixed = rows.nth(0).inner_text(), rows.nth(1).inner_text()
    assert spark.startswith("spark (Full SPARK)")
    assert "\t2\t47.50 ± 3.54\t1.0 ± 0.0\t" in fixed and "/2 reached)" in fixed
    tested = page.locator("table.test-table tbody tr")  # the first table: the test set
    assert "offline analogue" in tested.nth(0).inner_text()
    assert "offline analogue, not an LLM result" in tested.nth(1).inner_text()
    for chart in ("#c-cmp-best", "#c-cmp-valid"):
        page.locator(chart + " canvas").wait_for()
    assert "3 of 4" in page.locator("#cmp-summary").inner_text()  # spark seed 1: no run yet
    members = page.locator("table.members")
    assert members.get_by_role("link", name=LIVE).get_attribute("href") == "/run?" + urlencode(
        {"path": LIVE}
    )
    assert "not started" in members.locator("tr", has_text="cmp/spark/seed-1").inner_text()
    # Another member search starts writing: the open page shows it without a reload.
    serve_fixtures.make_member(root / "cmp" / "spark" / "seed-1", [0.6, 0.65], finished=False)
    page.locator("#cmp-summary", has_text="4 of 4").wait_for()
    assert "spark (n=2)" in page.locator("#c-cmp-best").inner_text()
    assert "running" in members.locator("tr", has_text="cmp/spark/seed-1").inner_text()
    _shot(page, "comparison")


def test_comparison_name_with_markup_is_shown_as_text(base, page):
    page.goto(base)
    link = page.locator(".comparisons").get_by_role("link", name=ODD_COMPARISON, exact=True)
    link.click()
    page.locator("table.methods tbody tr").first.wait_for()
    assert page.locator("h1").inner_text() == "Comparison " + ODD_COMPARISON
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main img").count() == 0
