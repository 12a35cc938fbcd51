"""Our splitter against LangChain's RecursiveCharacterTextSplitter(500, 50), measured in one run.

    .venv/bin/python benchmarks/split.py [PDF]

Extracts the text of the PDF (default: the Free Culture book from ../shared/corpus) with
PyMuPDF, pages joined by a blank line, then times both splitters on it: median of 5 runs each,
interleaved so that machine load hits both alike. Prints both times, passage counts, mean
passage lengths and the ratio ours / LangChain (target: below 1).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.split import split

BOOK = (
    Path(__file__).resolve().parents[2] / "shared/corpus/docs/pdf/book_free_culture_lessig_352p.pdf"
)
RUNS = 5


def pdf_text(path: Path) -> str:
    import pymupdf

    with pymupdf.open(path) as doc:
        return "\n\n".join(page.get_text() for page in doc)


def _timed(run: Callable[[], list]) -> tuple[float, list]:
    t = time.perf_counter()
    result = run()
    return time.perf_counter() - t, result


def splitter_ratio(text: str) -> dict:
    """Median seconds of each splitter on ``text``, their passage counts and mean lengths, and
    ``ratio`` = ours / LangChain."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    theirs = RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=50)
    our_times, their_times = [], []
    for _ in range(RUNS):
        seconds, spans = _timed(lambda: split(text, 500, 50))
        our_times.append(seconds)
        seconds, chunks = _timed(lambda: theirs.split_text(text))
        their_times.append(seconds)
    ours_s, theirs_s = statistics.median(our_times), statistics.median(their_times)
    return {
        "ours_s": ours_s,
        "langchain_s": theirs_s,
        "ours_passages": len(spans),
        "langchain_passages": len(chunks),
        "ours_mean_len": statistics.mean(s.end - s.start for s in spans) if spans else 0.0,
        "langchain_mean_len": statistics.mean(map(len, chunks)) if chunks else 0.0,
        "ratio": ours_s / theirs_s,
    }


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else BOOK
    if not path.exists():
        sys.exit(f"{path} is absent: pass a PDF, or put the shared corpus next to the repo")
    text = pdf_text(path)
    r = splitter_ratio(text)
    print(f"{path.name}: {len(text):,} characters; median of {RUNS} runs each")
    print(
        f"ours      {r['ours_s'] * 1000:8.2f} ms  {r['ours_passages']:5d} passages"
        f"  mean {r['ours_mean_len']:.0f} chars"
    )
    print(
        f"langchain {r['langchain_s'] * 1000:8.2f} ms  {r['langchain_passages']:5d} passages"
        f"  mean {r['langchain_mean_len']:.0f} chars"
    )
    print(f"ratio ours/langchain: {r['ratio']:.2f}  (target < 1)")


if __name__ == "__main__":
    main()
