"""Issue 30's `serve` faults, each reproduced: odd requests are answered (never dropped), a
`run.db` symlink out of the root is refused, reading writes no -wal/-shm file, and a server
started in the background (SIGINT ignored) still stops on SIGINT."""

from __future__ import annotations

import contextlib
import http.client
import json
import signal
import subprocess
import sys
import threading

import pytest
import serve_fixtures

from spark_jax.serve import make_server


@contextlib.contextmanager
def _serving(root):
    server = make_server(root, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _get(server, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=30)
    conn.request("GET", path)
    resp = conn.getresponse()  # RemoteDisconnected here: the connection was dropped
    body = resp.read()
    conn.close()
    return resp.status, body


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    serve_fixtures.make_run(root / "r1")
    return root


@pytest.mark.parametrize(
    "path",
    [
        "/api/run?path=" + "a" * 256,
        "/api/run?path=r1/" + "b" * 300,
        "/run?path=" + "c" * 1000,
        "/api/proposal?path=r1&attempt=" + str(2**63),
        "/api/proposal?path=r1&attempt=" + str(-(2**63) - 1),
        "/api/proposal?path=r1&attempt=" + "9" * 400,
        "/api/proposal?path=r1&attempt=x",
    ],
)
def test_odd_requests_get_a_4xx_with_one_line(root, path):
    with _serving(root) as server:
        status, body = _get(server, path)
    assert 400 <= status < 500, (path, status, body[:200])
    if path.startswith("/api/"):
        message = json.loads(body)["error"]
        assert message and "\n" not in message and len(message) < 200


def test_largest_attempt_is_an_ordinary_404(root):
    with _serving(root) as server:
        assert _get(server, f"/api/proposal?path=r1&attempt={2**63 - 1}")[0] == 404


def test_run_db_symlink_out_of_the_root_is_refused(tmp_path):
    outside = serve_fixtures.make_run(tmp_path / "outside")
    root = tmp_path / "root"
    (root / "trap").mkdir(parents=True)
    (root / "trap" / "run.db").symlink_to(outside / "run.db")
    with _serving(root) as server:
        status, _ = _get(server, "/api/run?path=trap")
        listing = json.loads(_get(server, "/api/runs")[1])
    assert status == 403
    assert listing["runs"] == []


def test_reading_a_finished_run_writes_no_wal_or_shm(tmp_path):
    run_dir = serve_fixtures.make_run(tmp_path / "root" / "r1")
    before = sorted(p.name for p in run_dir.iterdir())
    assert not [n for n in before if n.endswith(("-wal", "-shm"))]
    with _serving(tmp_path / "root") as server:
        for path in ("/api/runs", "/api/run?path=r1", "/api/proposal?path=r1&attempt=1"):
            assert _get(server, path)[0] == 200
    assert sorted(p.name for p in run_dir.iterdir()) == before


def test_serve_in_the_background_stops_on_sigint(root):
    def ignore_sigint():  # what a non-interactive shell's `&` does
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen(
        [sys.executable, "-m", "spark_jax.cli", "serve", str(root)],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=ignore_sigint,
    )
    try:
        assert "http://" in proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_run_view_names_the_reports_best_and_attempt_indices(root):
    from spark_jax.report import tables

    with _serving(root) as server:
        status, body = _get(server, "/api/run?path=r1")
    assert status == 200
    data = json.loads(body)
    paths = tables.write_report(root / "r1")
    acc = paths.accounting
    cand = acc.best_candidate
    assert data["best_candidate_ood"] == (cand["ood_score"] if cand else None)
    assert data["best_candidate_attempt"] == (cand["proposal_attempt"] if cand else None)
    curves = data["curves"]
    assert curves["attempt_x"][:2] == [-1, 0] and len(curves["attempt_x"]) == acc.attempts + 1
    assert curves["rate_x"][0] == 0
