import json

from knownote.cli import main
from knownote.measure.support import answer_sentence, load_support_set
from tests.conftest import corpus_file

EXPMRC = "qa_zh/expmrc-cmrc2018-dev.json"


def test_the_answer_sentence_is_the_question_and_its_gold_answer():
    assert answer_sentence("Which team won?", "Denver Broncos") == "Which team won? Denver Broncos."
    assert answer_sentence("谁改编的？", "村雨城") == "谁改编的？村雨城。"


def test_annotated_evidence_is_placed_in_the_context():
    dataset = load_support_set(corpus_file(EXPMRC), max_questions=20)
    assert dataset.annotated and len(dataset.questions) == 20
    for q in dataset.questions:
        text = dataset.contexts[q.context]
        assert q.evidence and all(0 <= a < b <= len(text) for a, b in q.evidence)
        assert q.unambiguous  # annotated: the answer's position does not matter


def test_without_evidences_the_sentence_holding_the_answer_is_the_evidence():
    dataset = load_support_set(corpus_file("qa_en/xquad.en.json"), max_questions=5)
    assert not dataset.annotated
    for q in dataset.questions:
        text = dataset.contexts[q.context]
        assert any(q.answer in text[a:b] for a, b in q.evidence)


def test_eval_support_reports_accuracy_and_both_flag_rates(capsys):
    path = corpus_file(EXPMRC)
    assert main(["eval-support", str(path), "--max-questions", "12", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["questions"] == 12 and report["evidence"] == "annotated"
    assert report["accuracy@1"] >= 0.75
    assert report["questions_unambiguous"] == 12
    assert report["accuracy@1_unambiguous"] == report["accuracy@1"]
    assert report["flag_rate_supported"] <= 0.25 and report["flag_rate_unrelated"] >= 0.5


def test_skip_leaves_out_the_first_questions_and_their_contexts():
    path = corpus_file("qa_ja/jsquad-valid-v1.3.json")
    first = load_support_set(path, max_questions=30)
    later = load_support_set(path, max_questions=10, skip=20)
    assert [q.text for q in later.questions] == [q.text for q in first.questions[20:]]
    assert {later.contexts[q.context] for q in later.questions} == set(later.contexts)


def test_an_answer_occurring_twice_leaves_its_evidence_ambiguous(tmp_path):
    context = "Tokyo is a large city. Osaka is near Kyoto. Tokyo is old."
    qas = [
        {"question": "Which city is large?", "answers": [{"text": "Tokyo", "answer_start": 0}]},
        {"question": "What is near Kyoto?", "answers": [{"text": "Osaka", "answer_start": 23}]},
    ]
    path = tmp_path / "set.json"
    path.write_text(
        json.dumps({"data": [{"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]})
    )
    large, near = load_support_set(path).questions
    assert not large.unambiguous and near.unambiguous


def test_an_answer_only_in_the_title_before_the_context_leaves_its_evidence_ambiguous(tmp_path):
    context = "Tokyo [SEP] It is a large city. Osaka is near it."
    qas = [
        {"question": "Which city is large?", "answers": [{"text": "Tokyo", "answer_start": 0}]},
        {"question": "What is near?", "answers": [{"text": "Osaka", "answer_start": 32}]},
    ]
    path = tmp_path / "set.json"
    path.write_text(
        json.dumps({"data": [{"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]})
    )
    large, near = load_support_set(path).questions
    assert not large.unambiguous and near.unambiguous
