"""The Study view through AppTest: cards made in the queue, a review, a quiz, the card list."""

from __future__ import annotations

import re
from pathlib import Path

from knownote.study.cards import cards
from knownote.study.review import schedule
from tests.conftest import corpus_file
from tests.ui.test_app import (
    HOSTILE,
    all_html,
    create_notebook,
    home,
    settle,
    start,
    store_for,
    texts,
    upload,
)

__all__ = ["home"]  # the fixture


def studying(home: Path):
    at = create_notebook(start(home))
    gravity = corpus_file("docs/web_text/md_wikipedia_gravity_hill.md")
    upload(at, (gravity.name, gravity.read_bytes(), "text/markdown"),
           ("hostile.txt", HOSTILE.encode(), "text/plain"))  # fmt: skip
    at.radio(key="view").set_value("Study").run()
    assert "Make cards for 2 new sources" in [b.label for b in at.button]
    at.button(key="make_cards").click().run()
    return settle(at)


def test_cards_are_made_listed_and_escaped(home: Path):
    at = studying(home)
    store = store_for(home)
    made = cards(store, store.notebooks()[0].id)
    assert made and "make_cards" not in [b.key for b in at.button]
    at.radio(key="study_part").set_value("Cards").run()
    html = all_html(at)
    assert html.count('class="kn-card-front"') == len(made)
    assert "&lt;img src=x onerror=alert(2)&gt;" in html  # a card of the hostile source, as text
    assert "<script" not in html and "<img" not in html
    assert any(c.answer in html for c in made)


def test_a_review_rates_a_card_and_keeps_its_schedule(home: Path):
    at = studying(home)
    store = store_for(home)
    first = cards(store, store.notebooks()[0].id)[0]
    at.button(key="start_review").click().run()
    assert "Card 1 of" in texts(at)
    at.button(key="reveal").click().run()
    at.button(key="rate_good").click().run()
    assert not at.exception and "Card 2 of" in texts(at)
    assert schedule(store, first.id).reviews == 1


def test_a_quiz_is_answered_and_its_result_names_spans_to_reread(home: Path):
    at = studying(home)
    at.radio(key="study_part").set_value("Quiz").run()
    at.button(key="new_quiz").click().run()
    radios = [r for r in at.radio if str(r.key).startswith("quiz_")]
    assert radios
    for radio in radios:
        radio.set_value(0)
    at.run()
    at.button(key="check_quiz").click().run()
    assert not at.exception
    [score] = [m.value for m in at.markdown if m.value.endswith(" right.**")]
    right, total = (int(n) for n in re.findall(r"\d+", score))
    assert total == len(radios)
    assert len([b for b in at.button if str(b.key).startswith("open_quiz_")]) == total - right


def test_the_cards_download_for_anki_and_as_csv_to_this_page_only(home: Path):
    import csv
    import io
    import zipfile

    from knownote.ui.download import unpack

    at = studying(home)
    at.radio(key="study_part").set_value("Cards").run()
    at.button(key="download_anki").click().run()
    (saver,) = at.get("bidi_component")
    head, package = unpack(saver.proto.bytes)
    assert head["name"].endswith(".apkg")
    assert "collection.anki2" in zipfile.ZipFile(io.BytesIO(package)).namelist()
    at.button(key="download_csv").click().run()
    (saver,) = at.get("bidi_component")
    head, table = unpack(saver.proto.bytes)
    rows = list(csv.DictReader(io.StringIO(table.decode())))
    store = store_for(home)
    assert head["name"].endswith(".csv") and len(rows) == len(cards(store, store.notebooks()[0].id))


def test_a_model_that_fails_making_cards_is_said(home: Path, monkeypatch):
    from tests.ollama_standin import OllamaStandIn

    with OllamaStandIn(models={"llama3.2": 8192}, reply="Q: Which?\nA: none") as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        at = studying(home)
        server.models = {}  # the model goes away before its cards are written
        at.button(key="write_cards").click().run()
        settle(at)
    assert "Making cards stopped" in texts(at)
