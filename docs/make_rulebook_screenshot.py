"""Regenerates docs/rulebook-phone.png: the Terrain entry of the exported rulebook at phone width.

    .venv/bin/python docs/make_rulebook_screenshot.py

Exports the rulebook from the shipped sources (``python -m bot export``) into a temporary folder and shoots
the entry's element with Debian's Chromium through Playwright, as the browser test does.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "rulebook-phone.png"


def main() -> None:
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([sys.executable, "-m", "bot", "export", work], check=True, cwd=ROOT)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
            page.goto(Path(work, "glossary.html").as_uri() + "#glossary:terrain")
            page.locator('[id="glossary:terrain"]').screenshot(path=str(OUT))
            browser.close()
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
