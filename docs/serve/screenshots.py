"""Screenshots of `spark-jax serve`'s run, benchmark and comparison pages over a copy of the
committed `results/` folders, at 1400 and 800 px wide, in the OS's headless Chromium.

    python docs/serve/screenshots.py OUT_DIR PREFIX

writes OUT_DIR/PREFIX-{page}-{width}.png (full page) for the pages in PAGES.
"""

from __future__ import annotations

import pathlib
import shutil
import sys
import tempfile
import threading
from urllib.parse import urlencode

from playwright.sync_api import sync_playwright

from spark_jax.serve import make_server

REPO = pathlib.Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
FOLDERS = ("default-search", "llm-trained", "compare-offline")
PAGES = {
    "index": ("", ""),
    "run": ("run", "default-search"),
    "benchmark": ("benchmark", "default-search"),
    "comparison": ("compare", "llm-trained/data"),
}
WIDTHS = (1400, 800)


def main(out: str, prefix: str) -> None:
    out_dir = pathlib.Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for name in FOLDERS:
            shutil.copytree(REPO / "results" / name, root / name)
        server = make_server(root, port=0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
                )
                for width in WIDTHS:
                    ctx = browser.new_context(viewport={"width": width, "height": 900})
                    page = ctx.new_page()
                    page.on("console", lambda m: m.type == "error" and print("console:", m.text))
                    page.on("pageerror", lambda e: print("page error:", e))
                    for name, (kind, path) in PAGES.items():
                        url = (
                            server.url + kind + (("?" + urlencode({"path": path})) if kind else "")
                        )
                        page.goto(url)
                        page.locator("#live", has_text="live ·").wait_for(timeout=120_000)
                        page.wait_for_timeout(500)
                        shot = out_dir / f"{prefix}-{name}-{width}.png"
                        page.screenshot(path=str(shot), full_page=True)
                        sw = page.evaluate("document.documentElement.scrollWidth")
                        print(f"{shot}: scrollWidth {sw} at {width} px")
                    ctx.close()
                browser.close()
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
