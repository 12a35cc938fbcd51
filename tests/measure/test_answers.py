"""Answer evaluation: SQuAD-style scores (CJK-aware) and the command on real question sets."""

import json

import pytest

from knownote.cli import main
from knownote.measure.answers import (
    REFUSAL,
    contains,
    exact_match,
    first_quote,
    token_f1,
    tokens,
)
from tests.conftest import corpus_file
from tests.ollama_standin import free_port


def test_exact_match_ignores_case_punctuation_articles_and_marks():
    assert exact_match("The Denver Broncos. [1]", ("Denver Broncos",)) == 1.0
    assert exact_match("Denver", ("Denver Broncos",)) == 0.0


def test_f1_counts_shared_words():
    assert token_f1("the Broncos won", ("Denver Broncos",)) == pytest.approx(0.5)
    assert token_f1("nothing", ("Denver Broncos",)) == 0.0


def test_cjk_is_compared_character_by_character():
    assert tokens("北京大学。") == ["北", "京", "大", "学"]
    assert token_f1("北京", ("北京大学",)) == pytest.approx(2 * 1 * 0.5 / 1.5)


def test_the_best_gold_answer_counts():
    assert token_f1("1889年", ("1887", "1889年")) == 1.0
    assert contains("它建于1889年。[2]", ("1889年",))


def test_the_first_quote_is_what_comes_before_the_first_mark():
    text = "(English) Carolina lost the game. [2] Denver won it. [1]"
    assert first_quote(text) == "Carolina lost the game. "
    assert not contains(first_quote(text), ("English",))  # the language marker is no quote
    assert contains(text, ("Denver",)) and not contains(first_quote(text), ("Denver",))
    assert first_quote("没有标记的句子。") == "没有标记的句子。"


@pytest.mark.parametrize(
    "text",
    [
        "The passages do not say.",
        "This is not mentioned in the passages.",
        "文中没有提到这一点。",
        "資料には記載されていません。",
    ],
)
def test_refusals_are_recognised(text):
    assert REFUSAL.search(text)


def test_an_answer_is_not_a_refusal():
    assert not REFUSAL.search("The Broncos defeated the Panthers 24–10 [1].")


def test_eval_answers_quoted_on_real_questions(tmp_path, capsys, monkeypatch):
    dataset = corpus_file("qa_en/xquad.en.json")
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    code = main(["--db", str(tmp_path / "x.duckdb"), "eval-answers", str(dataset), "--quoted",
                 "--max-questions", "4", "-k", "4", "--json"])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["model"] == "quoted" and report["questions"] == 4
    figures = report["figures"]
    assert figures["no_mark"] == 0.0  # quotes always carry their marks
    assert figures["model_failed"] == 0.0  # no model was asked
    assert 0.0 <= figures["first_quote_holds"] <= figures["contains_gold"]
    assert figures["citation_precision"] is not None
    assert 0 <= figures["f1"] <= 1 and figures["first_token_s"] > 0


def test_eval_answers_without_a_model_says_to_use_quoted(tmp_path, capsys, monkeypatch):
    dataset = corpus_file("qa_en/xquad.en.json")
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    monkeypatch.delenv("KNOWNOTE_OPENAI_BASE_URL", raising=False)
    code = main(["eval-answers", str(dataset), "--max-questions", "2"])
    assert code == 1
    assert "--quoted" in capsys.readouterr().err


@pytest.mark.engine
def test_eval_answers_with_the_real_engine(llama_server, tmp_path, capsys, monkeypatch):
    dataset = corpus_file("qa_en/xquad.en.json")
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("KNOWNOTE_OPENAI_BASE_URL", llama_server.url)
    monkeypatch.setenv("KNOWNOTE_OPENAI_CONTEXT", "4096")
    monkeypatch.setenv("KNOWNOTE_MAX_ANSWER_TOKENS", "32")
    code = main(["eval-answers", str(dataset), "--model", "openai:smollm2",
                 "--max-questions", "2", "-k", "3", "--json"])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["model"] == "openai:smollm2"
    assert report["figures"]["first_token_s"] > 0
    assert len(report["examples"]) == 2


def test_eval_answers_imports_the_contexts_no_question_is_asked_of(tmp_path, capsys, monkeypatch):
    data = {"data": [
        {"title": "Asked", "paragraphs": [{"context": "Denver won Super Bowl 50 in 2016.", "qas": [
            {"id": "1", "question": "Who won Super Bowl 50?",
             "answers": [{"text": "Denver", "answer_start": 0}]},
            {"id": "2", "question": "When was Super Bowl 50?",
             "answers": [{"text": "2016", "answer_start": 28}]}]}]},
        {"title": "Rest",
         "paragraphs": [{"context": "Die Kirche wurde 1784 gegründet.", "qas": []}]},
    ]}  # fmt: skip
    path = tmp_path / "set.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    code = main(["eval-answers", str(path), "--quoted", "--skip", "1"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "imported 2 contexts" in err  # the one asked of, and the rest of the notebook
    assert "1 questions, k=8" in out and "first 1 questions left out" in out
    assert "first_quote_holds" in out
