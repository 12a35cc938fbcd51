"""The languages of documents and questions, read from samples of the text."""

from __future__ import annotations

import json

import pytest

from knownote.index.language import SAMPLE_CHARS, SAMPLES, document_languages, language_of
from knownote.read.extract import extract
from tests.conftest import corpus_file


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("Wann wurde der Eiffelturm fertiggestellt?", "de"),
        ("¿Qué produce la fotosíntesis en las plantas?", "es"),
        ("Через сколько стран течёт Нил?", "ru"),
        ("尼罗河流入哪个海？", "zh"),
        ("ノルマン人はどこに定住しましたか？", "ja"),
        ("노르만인은 어디에 정착했나요?", "ko"),
        ("How are questions and passages encoded?", "en"),
    ],
)
def test_a_question_is_read_in_its_language(question, language):
    assert language_of(question) == language


@pytest.mark.parametrize("question", ["DPR?", "42", "", "   "])
def test_a_question_of_a_few_letters_has_no_language(question):
    assert language_of(question) is None


@pytest.mark.parametrize(
    ("name", "languages"),
    [
        ("docs/pdf/paper_dpr_2004.04906_2col.pdf", ("en",)),
        ("docs/pdf/cjk_zh_textbook_credits.pdf", ("zh",)),
        ("docs/pdf/cjk_ja_miyazawa_preface_vertical.pdf", ("ja",)),
        ("docs/pdf/cjk_ko_card_terms_tables.pdf", ("ko",)),
        ("docs/web_text/md_zh_distributed_training_notes.md", ("zh",)),
        ("docs/office/epub_winter_sports.epub", ("en",)),
    ],
)
def test_corpus_documents_are_read_in_their_language(name, languages):
    path = corpus_file(name)
    assert document_languages(extract(path.read_bytes(), path.name).text) == languages


def test_a_document_in_two_languages_has_both_main_one_first():
    german = "Die Normannen waren Nachkommen nordischer Seefahrer aus Skandinavien. "
    english = "The Normans were descendants of Norse raiders who settled in northern France. "
    text = german * 150 + english * 60
    assert len(text) > SAMPLES * SAMPLE_CHARS
    assert document_languages(text) == ("de", "en")


def test_a_few_english_lines_in_a_chinese_text_are_not_a_second_language():
    chinese = "诺曼人是定居在法国北部的北欧海盗的后裔，他们在十世纪建立了诺曼底公国。" * 200
    assert document_languages(chinese + "Copyright 2020. All rights reserved.") == ("zh",)


def test_figures_without_words_have_no_language():
    assert document_languages("12 345 678\n" * 500) == ()
    assert document_languages("") == ()


def _contexts(name: str, n: int) -> list[str]:
    data = json.loads(corpus_file(name).read_text(encoding="utf-8"))["data"]
    return [p["context"] for article in data for p in article["paragraphs"]][:n]


def test_the_model_loads_from_a_restricted_copy_that_reads_as_py3langid_s_own(
    tmp_path, monkeypatch
):
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    from knownote.index import language

    monkeypatch.setenv("KNOWNOTE_MODEL_CACHE", str(tmp_path))
    language.identifier.cache_clear()
    try:
        ours = language.identifier()
        assert sorted(p.suffix for p in tmp_path.glob("py3langid-*")) == [".npy", ".npy", ".npz"]
        # Mapped read-only: scoring that wrote to the matrix would raise below.
        assert not ours.nb_ptc.flags.writeable
        theirs = LanguageIdentifier.from_model_file(MODEL_FILE)
        theirs.set_languages(language._read_here(theirs.labels))
        assert ours.nb_classes == theirs.nb_classes
        path = corpus_file("docs/pdf/cjk_ko_card_terms_tables.pdf")
        korean = extract(path.read_bytes(), path.name).text
        files = [
            "docs/web_text/md_zh_distributed_training_notes.md",
            "docs/web_text/md_codeblocks.md",
        ]
        sets = [
            "qa_zh/cmrc2018_dev.json",
            "qa_en/xquad.en.json",
            "qa_ja/jsquad-valid-v1.3.json",
            "qa_xx/xquad.de.json",
        ]
        samples = [
            *(corpus_file(name).read_text(encoding="utf-8")[:2000] for name in files),
            *(context for name in sets for context in _contexts(name, 3)),
            korean[:2000],
            korean[-600:],
            "ノルマン人はどこに定住しましたか？",
            "Wann wurde der Eiffelturm fertiggestellt?",
            "노르만인은 어디에 정착했나요?",
            "12 345 678",
        ]
        for text in samples:
            assert ours.rank(text) == theirs.rank(text)
            assert ours.classify(text) == theirs.classify(text)
        assert {ours.classify(text)[0] for text in samples} >= {"zh", "en", "ja", "de", "ko"}
        language.identifier.cache_clear()  # a second process reads the copy
        assert language.identifier().rank(samples[0]) == theirs.rank(samples[0])
    finally:
        language.identifier.cache_clear()
