"""The first paint of a notebook of 20 sources, in CPU seconds (the machine's load does not
inflate them, unlike wall-clock time): a visitor sees the page without waiting on the model."""

from __future__ import annotations

import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from knownote.measure.retrieval import import_text
from knownote.settings import Settings
from knownote.show.excerpt import escape_markdown
from knownote.store.db import Store
from tests.ui.test_app import APP, TIMEOUT, home, texts

__all__ = ["home"]  # the fixture
FIRST_PAINT_CPU_SECONDS = 2.0


def twenty_sources(home: Path, embedder) -> None:
    store = Store.open(Settings().with_(home=home).db_path)
    try:
        notebook = store.create_notebook("Library", embedder.name, embedder.dim)
        for i in range(20):
            text = f"Source {i} is about topic {i}.\n\n" + f"Paragraph {i} of reading. " * 40
            import_text(store, notebook.id, embedder, f"source-{i:02}.txt", text)
    finally:
        store.close()


def painted(view: str) -> tuple[AppTest, float]:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["view"] = view
    started = time.process_time()
    at.run()
    spent = time.process_time() - started
    assert not at.exception, at.exception
    return at, spent


def test_a_notebook_of_twenty_sources_paints_in_under_two_cpu_seconds(home: Path, embedder):
    twenty_sources(home, embedder)
    _, cold = painted("Chat")  # the first session pays the imports of the app's modules once
    print(f"first paint of the first session: {cold:.2f} s of CPU")
    assert cold < FIRST_PAINT_CPU_SECONDS, f"first session: {cold:.2f} s of CPU"
    for view in ("Chat", "Sources", "Notes"):
        at, spent = painted(view)
        assert "Library" in [h.value for h in at.header]
        assert spent < FIRST_PAINT_CPU_SECONDS, f"{view}: {spent:.2f} s of CPU"
        print(f"first paint of {view}: {spent:.2f} s of CPU")
        if view == "Sources":
            shown = texts(at)
            assert all(f"**{escape_markdown(f'source-{i:02}.txt')}**" in shown for i in range(20))
