"""What the player and the exports of an audio overview cost: the page's size against the audio's
length (the audio travels inside the player as a data: URL), and the time to build the player,
the Markdown transcript, and the MP3 and WAV downloads, each against the seconds of audio.

    .venv/bin/python benchmarks/audio_player.py [--length default]

A notebook of one corpus source (a Wikipedia page in Markdown) gets the read-aloud brief (no
model); the figures are for that overview. The machine's load is printed: other work on its
cores slows every figure, so compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("KNOWNOTE_EMBEDDING_MODEL", "all-MiniLM-L6-v2-int8")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.answer.ranges import SpanLinks
from knownote.index.embedders import get_embedder
from knownote.pipeline.ingest import import_file
from knownote.serve.tools import make_overview
from knownote.settings import Settings
from knownote.show.audio_player import audio_source, player_html
from knownote.show.audio_transcript import transcript_markdown
from knownote.show.excerpt import card_html
from knownote.store.db import Store
from knownote.voice.encode import decode, encode

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
PAGE = CORPUS / "docs/web_text/md_wikipedia_gravity_hill.md"


def timed(call):
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--length", default="default", choices=["short", "default", "long"])
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings().with_(home=Path(folder))
        store = Store.open(settings.db_path)
        embedder = get_embedder(settings.embedding_model)
        notebook = store.create_notebook("Bench", embedder.name, embedder.dim)
        import_file(
            store, notebook, PAGE.name, PAGE.read_bytes(), settings=settings, embedder=embedder
        )
        (overview, _), made = timed(
            lambda: make_overview(store, settings, notebook.name, length=args.length)
        )
        audio = store.read_file(overview.audio_sha256 or "")
        text = store.document_text(overview.cites[0].document_id) if overview.cites else ""

        def page() -> str:
            cards = {
                c.n: card_html(
                    message_id=overview.id or 0, n=c.n, title=c.title, document_id=c.document_id,
                    start=c.start, end=c.end, page_start=c.page, page_end=c.page,
                    passage_text=c.quote, document_text=text,
                )
                for c in overview.cites
            }  # fmt: skip
            return player_html(overview, audio_source(audio), cards)

        html, built = timed(page)
        markdown, written = timed(
            lambda: transcript_markdown(overview, SpanLinks("http://localhost:8501", notebook.id))
        )
        samples, decoded = timed(lambda: decode(audio))
        mp3, to_mp3 = timed(lambda: encode(samples, "mp3"))
        wav, to_wav = timed(lambda: encode(samples, "wav"))
        store.close()
    seconds = overview.seconds
    print(
        f"read-aloud brief ({args.length}): {len(overview.lines)} lines, {seconds:.1f} s of audio,"
    )
    print(f"  made in {made:.1f} s ({seconds / made:.1f}x real time, script and speech)")
    print(f"Ogg/Opus: {len(audio):,} bytes ({len(audio) * 8 / seconds / 1000:.1f} kbit/s)")
    print(
        f"player page: {len(html):,} bytes ({len(html) / len(audio):.2f}x the audio), "
        f"built in {built * 1000:.0f} ms"
    )
    print(f"transcript: {len(markdown):,} characters, written in {written * 1000:.1f} ms")
    print(
        f"MP3 download: {len(mp3):,} bytes, decode {decoded:.2f} s + encode {to_mp3:.2f} s = "
        f"{seconds / (decoded + to_mp3):.0f}x real time"
    )
    print(f"WAV download: {len(wav):,} bytes, encode {to_wav:.3f} s")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
