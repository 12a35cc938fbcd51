"""Make docs/screenshot.png, the README's picture, with the browser tests' harness.

A real `streamlit run app.py` and Debian's headless Chromium (tests/browser/harness.py): a new
notebook holding a paper from ../shared/corpus, a question, and the answer beside its cited
passages, so the picture always shows what the app does today.
Run: .venv/bin/python scripts/screenshot.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.harness import ask, chromium, new_notebook, settle, streamlit_server  # noqa: E402

PAPER = ROOT.parent / "shared" / "corpus" / "docs" / "pdf" / "paper_dpr_2004.04906_2col.pdf"
QUESTION = "How does dense passage retrieval encode questions and passages?"
OUT = ROOT / "docs" / "screenshot.png"


def main() -> int:
    if not PAPER.exists():
        print(f"needs the shared corpus ({PAPER} is absent)", file=sys.stderr)
        return 1
    with (
        tempfile.TemporaryDirectory() as tmp,
        chromium() as browser,
        streamlit_server(Path(tmp)) as server,
    ):
        page, _ = new_notebook(browser, server, "Retrieval papers", PAPER)
        page.locator('[data-testid="stRadio"] label').filter(has_text="Chat").click()
        ask(page, QUESTION)
        page.locator(".kn-card mark").first.wait_for(timeout=120_000)
        settle(page)
        page.get_by_text(QUESTION).last.scroll_into_view_if_needed()
        page.screenshot(path=str(OUT))
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
