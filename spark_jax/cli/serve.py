"""`spark-jax serve [ROOT] [--host H] [--port P]`: a read-only live view, in the browser, of
the run directories (run.db) and benchmark directories (benchmark.db) under ROOT (default:
`runs`, a run directory itself works too). Port 0 picks a free port; the URL is printed.

Exit codes: 0 stopped with Ctrl-C, SIGINT or SIGTERM (in the background too), 2 ROOT is not a directory or the address is unusable.
"""

from __future__ import annotations

import argparse
import signal
import sys

from spark_jax.cli.errors import EXIT_OK, fail

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `serve` subcommand to `sub`."""
    p = sub.add_parser("serve", help="watch runs and benchmarks in the browser (read-only)")
    p.add_argument("root", nargs="?", default="runs", help="a run directory or a folder of them")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port (default 0: pick a free one)")
    p.add_argument("--verbose", action="store_true", help="log every request to stderr")
    return p


def run(args: argparse.Namespace) -> int:
    """Runs `serve` until interrupted; returns the exit code."""
    from spark_jax.serve import NotFound, make_server

    try:
        server = make_server(args.root, args.host, args.port, quiet=not args.verbose)
    except NotFound as e:
        return fail(str(e))
    except OSError as e:
        return fail(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}")
    try:
        _stop_on_signals()  # before the URL line: whoever reads it may signal at once
        print(f"serving {server.root.path} (read-only) at {server.url}", flush=True)
        if args.host not in ("127.0.0.1", "localhost", "::1"):
            print(f"warning: bound to {args.host}: reachable from other machines", file=sys.stderr)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return EXIT_OK


def _stop_on_signals() -> None:
    """SIGINT and SIGTERM stop the server. SIGINT is set explicitly: a server started in the
    background of a non-interactive shell inherits an ignored SIGINT, and `kill -INT` must
    still stop it."""

    def on_signal(signum, frame):
        raise KeyboardInterrupt

    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, on_signal)
