"""A notebook's shown cards for other programs: an Anki package (genanki) and CSV.

One deck per notebook. Its id, the note types' ids and each note's guid are stable: the deck's
comes from when the notebook was made (kept by archives), a note's from its source's bytes
(sha256), its range and its maker, so exporting again (or from an imported archive) updates the
same notes in Anki instead of adding copies. Every note carries its citation: the source's
title, page or time and character range, and the app's link that opens the range.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import os
import tempfile
from pathlib import Path

import genanki

from knownote.answer.cite import page_label, time_label
from knownote.answer.ranges import SpanLinks
from knownote.store.db import Store
from knownote.study.cards import BLANK, CLOZE, Card, cards

FIELDS = [{"name": n} for n in ("Text", "Back", "Citation", "Link")]
CSS = ".card { font-family: sans-serif; font-size: 20px; } .citation { font-size: 14px; }"
_CITATION = '<div class="citation">{{Citation}}<br><a href="{{Link}}">{{Link}}</a></div>'
CLOZE_MODEL = genanki.Model(
    1_714_202_601,  # fixed forever: Anki knows a note type by its id
    "KnowNote cloze",
    fields=FIELDS,
    templates=[{"name": "Cloze", "qfmt": "{{cloze:Text}}",
                "afmt": "{{cloze:Text}}<hr>" + _CITATION}],
    css=CSS,
    model_type=genanki.Model.CLOZE,
)  # fmt: skip
QA_MODEL = genanki.Model(
    1_714_202_602,
    "KnowNote question",
    fields=FIELDS,
    templates=[{"name": "Card", "qfmt": "{{Text}}",
                "afmt": "{{FrontSide}}<hr id=answer>{{Back}}<hr>" + _CITATION}],
    css=CSS,
)  # fmt: skip
CSV_COLUMNS = ["kind", "front", "back", "answer", "source", "page", "time", "start", "end",
               "made_by", "citation", "link"]  # fmt: skip


def _field(text: str) -> str:
    """Document text as an Anki field: HTML-escaped, braces as entities (no cloze, no field
    reference can hide in it)."""
    return html.escape(text).replace("{", "&#123;").replace("}", "&#125;")


def _cell(text: str) -> str:
    """Document text as a CSV cell a spreadsheet shows and never runs as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _stable_id(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return (1 << 30) + int.from_bytes(digest[:4], "big") % (1 << 30)


def deck_id(store: Store, notebook_id: int) -> int:
    with store.lock:
        (created,) = store.db.execute(
            "SELECT created_at FROM notebooks WHERE id = ?", [notebook_id]
        ).fetchall()[0]
    return _stable_id("knownote deck", created.isoformat())


def _note(card: Card, sha256: str, link: str) -> genanki.Note:
    if card.kind == CLOZE:
        text = _field(card.front).replace(BLANK, "{{c1::" + _field(card.answer) + "}}")
        model, back = CLOZE_MODEL, ""
    else:
        text, model, back = _field(card.front), QA_MODEL, _field(card.back)
    return genanki.Note(
        model=model,
        fields=[text, back, _field(card.citation), _field(link)],
        guid=genanki.guid_for(sha256, card.start, card.end, card.kind, card.made_by),
        tags=["knownote", card.kind],
    )


def anki_package(store: Store, notebook_id: int, app_url: str) -> bytes:
    """The notebook's shown cards as an Anki package (.apkg): one deck named after it."""
    notebook = store.notebook(notebook_id)
    deck = genanki.Deck(deck_id(store, notebook_id), f"KnowNote::{notebook.name}")
    links = SpanLinks(app_url, notebook_id)
    hashes: dict[int, str] = {}
    for card in cards(store, notebook_id):
        if card.document_id not in hashes:
            hashes[card.document_id] = store.document(card.document_id).sha256
        link = links.link(card.document_id, card.start, card.end)
        deck.add_note(_note(card, hashes[card.document_id], link))
    # genanki writes to a path only; the file is read back and removed at once.
    handle, path = tempfile.mkstemp(suffix=".apkg")
    os.close(handle)
    try:
        genanki.Package(deck).write_to_file(path)
        return Path(path).read_bytes()
    finally:
        Path(path).unlink(missing_ok=True)


def csv_text(store: Store, notebook_id: int, app_url: str) -> str:
    """The notebook's shown cards as CSV (a header row, then one row per card)."""
    links = SpanLinks(app_url, notebook_id)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for c in cards(store, notebook_id):
        writer.writerow([
            c.kind, _cell(c.front), _cell(c.back), _cell(c.answer), _cell(c.title),
            page_label(c.page, c.page), time_label(c.seconds), c.start, c.end, c.made_by,
            _cell(c.citation),
            links.link(c.document_id, c.start, c.end),
        ])  # fmt: skip
    return out.getvalue()
