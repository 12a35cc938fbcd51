"""Cards out of KnowNote: an Anki package read back as Anki reads it, and CSV."""

from __future__ import annotations

import csv
import io
import sqlite3
import zipfile
from dataclasses import replace

from knownote.study.cards import BLANK, cards, keep_cards
from knownote.study.export import CSV_COLUMNS, anki_package, csv_text, deck_id

APP = "http://notebook.lan:8501"


def anki_notes(package: bytes, tmp_path) -> tuple[list[tuple], dict]:
    """(guid, fields, tags) of every note, and the decks, from the package's SQLite collection."""
    with zipfile.ZipFile(io.BytesIO(package)) as zf:
        name = next(n for n in zf.namelist() if n.startswith("collection.anki2"))
        (tmp_path / "collection.anki2").write_bytes(zf.read(name))
    db = sqlite3.connect(tmp_path / "collection.anki2")
    try:
        notes = db.execute("SELECT guid, flds, tags FROM notes ORDER BY id").fetchall()
        (decks,) = db.execute("SELECT decks FROM col").fetchone()
    finally:
        db.close()
    import json

    return [(g, f.split("\x1f"), t.split()) for g, f, t in notes], json.loads(decks)


def test_the_anki_deck_holds_every_card_with_its_citation(studied, tmp_path):
    store, notebook, documents = studied
    shown = cards(store, notebook.id)
    notes, decks = anki_notes(anki_package(store, notebook.id, APP), tmp_path)
    assert len(notes) == len(shown)
    assert decks[str(deck_id(store, notebook.id))]["name"] == f"KnowNote::{notebook.name}"
    for (_, fields, tags), card in zip(notes, shown, strict=True):
        text, back, citation, link = fields
        assert "{{c1::" in text and BLANK not in text and back == ""
        assert citation.startswith(card.title.replace("&", "&amp;"))
        assert f"chars {card.start:,}–{card.end:,}" in citation
        query = (
            f"notebook={notebook.id}&source={card.document_id}&start={card.start}&end={card.end}"
        )
        assert link == f"{APP}/?{query}".replace("&", "&amp;")
        assert tags == ["knownote", "cloze"]
    book = store.document(documents["book"]).title
    cited = [f[2] for _, f, _ in notes if f[2].startswith(book)]
    assert cited and all(" · p. " in c for c in cited)


def test_exporting_again_gives_the_same_deck_and_note_ids(studied, tmp_path):
    store, notebook, _ = studied
    first, _ = anki_notes(anki_package(store, notebook.id, APP), tmp_path)
    again, _ = anki_notes(anki_package(store, notebook.id, APP), tmp_path)
    assert [n[0] for n in first] == [n[0] for n in again]
    assert len({n[0] for n in first}) == len(first)


def test_document_text_cannot_make_markup_or_clozes_in_anki(store, notebook, gravity, tmp_path):
    card = cards(store, notebook.id)[0]
    hostile = replace(
        card, front="<script>alert(1)</script> {{c2::x}} " + BLANK, answer="<b>x</b>", kind="cloze"
    )
    keep_cards(store, gravity, "hostile", [hostile_card(hostile)], written=0)
    notes, _ = anki_notes(anki_package(store, notebook.id, APP), tmp_path)
    text = next(f[0] for _, f, _ in notes if "alert" in f[0])
    assert "<script>" not in text and "{{c2::" not in text
    assert text.endswith("{{c1::&lt;b&gt;x&lt;/b&gt;}}")


def hostile_card(card):
    from knownote.study.cards import NewCard

    return NewCard(card.document_id, card.start, card.end, card.kind, card.front, card.back,
                   card.answer, card.answer_kind, card.language, "hostile")  # fmt: skip


def test_the_csv_has_a_row_per_card_with_its_citation_and_link(studied):
    store, notebook, _ = studied
    shown = cards(store, notebook.id)
    rows = list(csv.DictReader(io.StringIO(csv_text(store, notebook.id, APP))))
    assert list(rows[0]) == CSV_COLUMNS and len(rows) == len(shown)
    for row, card in zip(rows, shown, strict=True):
        assert (row["front"], row["answer"], row["source"]) == (card.front, card.answer, card.title)
        assert (int(row["start"]), int(row["end"])) == (card.start, card.end)
        assert row["link"].endswith(f"source={card.document_id}&start={card.start}&end={card.end}")
        assert row["page"] == (f"p. {card.page}" if card.page else "")


def test_a_csv_cell_never_starts_a_formula(store, notebook, gravity):
    card = cards(store, notebook.id)[0]
    keep_cards(store, gravity, "hostile", [hostile_card(replace(card, front="=HYPERLINK(1)"))], 0)
    rows = list(csv.DictReader(io.StringIO(csv_text(store, notebook.id, APP))))
    assert "'=HYPERLINK(1)" in [r["front"] for r in rows]
