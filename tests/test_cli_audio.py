"""`knownote overview-audio`: a read-aloud brief of a Chinese source made without a model (said
on stderr; espeak-ng speaks Chinese, fast enough for the suite), its audio written by the file's
suffix, its transcript, the JSON of each line's time and citations; and `knownote show --json`
giving a recording's passages their times."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np

from knownote.index.context import NewPassage
from knownote.read.extracted import Timed
from knownote.store.db import Store
from knownote.voice.encode import duration
from tests.test_cli import run
from tests.ui.test_app_reports import chinese_paragraph


def test_a_read_aloud_brief_of_a_chinese_source_is_written_with_times_and_ranges(
    capsys, db_path: Path, tmp_path: Path
):
    source = tmp_path / "戚务生.txt"
    source.write_text(chinese_paragraph(), encoding="utf-8")
    assert run(capsys, "--db", db_path, "import", "中文", source)[0] == 0
    out, transcript = tmp_path / "brief.mp3", tmp_path / "brief.md"
    code, printed, err = run(
        capsys, "--db", db_path, "overview-audio", "中文", "--length", "short",
        "--out", out, "--transcript", transcript, "--json",
    )  # fmt: skip
    assert code == 0, err
    assert "No model was named, so this is the read-aloud brief" in err
    made = json.loads(printed)
    assert made["format"] == "read-aloud" and made["language"] == "zh"
    assert made["voices"] and made["audio"] == str(out)
    lines = made["lines"]
    cited = [c for line in lines for c in line["cites"]]
    assert cited, lines
    store = Store.open(db_path)
    try:
        for c in cited:  # every citation is an exact slice of its source's text
            assert store.document_text(c["document_id"])[c["start"] : c["end"]] == c["quote"]
            assert set(c) >= {"document_id", "start", "end", "link", "uri"}
    finally:
        store.close()
    times = [(line["start_s"], line["end_s"]) for line in lines]
    assert times[0][0] == 0 and all(a < b for a, b in times)
    assert all(b <= c for (_, b), (c, _) in itertools.pairwise(times))
    data = out.read_bytes()
    assert data[:3] == b"ID3" or data[0] == 0xFF  # an MP3, by the suffix
    assert abs(duration(data) - made["seconds"]) < 0.2
    text = transcript.read_text(encoding="utf-8")
    assert text.startswith("# ") and "**\\[00:00\\] Host 1:**" in text and "[^1]:" in text


def test_an_audio_file_it_cannot_write_is_said_before_anything_is_made(capsys, db_path: Path):
    code, _, err = run(
        capsys, "--db", db_path, "overview-audio", "Nothing", "--out", db_path.parent / "a.flac"
    )
    assert code == 1 and "does not end in .ogg, .opus, .mp3 or .wav" in err


def add_recording(store: Store, notebook_id: int, dim: int) -> int:
    """A recording's transcript of two Japanese sentences, each word's time as faster-whisper
    would give it (two passages)."""
    text = "重力の丘は目の錯覚です。車が坂を上るように見えます。"
    middle = text.index("車")
    ranges = ((0, middle), (middle, len(text)))
    times = [Timed(0, 5, 1.0, 1.8), Timed(5, middle, 1.9, 3.2), Timed(middle, len(text), 4.0, 6.5)]
    return store.add_document(
        notebook_id=notebook_id, title="録音", filename="録音.m4a", kind="audio", sha256="rec",
        text=text, pages=[], vectors=np.ones((2, dim), dtype=np.float32),
        passages=[NewPassage(a, b, None, None, {"x": 1}) for a, b in ranges],
        languages=["ja"], times=times,
    )  # fmt: skip


def test_show_json_gives_a_recordings_passages_their_times_and_others_none(
    capsys, db_path: Path, store: Store, notebook
):
    recording = add_recording(store, notebook.id, notebook.embedding_dim)
    store.close()
    code, out, _ = run(capsys, "--db", db_path, "show", recording, "--json")
    assert code == 0
    assert [p["seconds"] for p in json.loads(out)["passages"]] == [[1.0, 3.2], [4.0, 6.5]]
