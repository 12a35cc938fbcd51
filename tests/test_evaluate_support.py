import json

from knownote.cli import main
from knownote.evaluate_support import answer_sentence, load_support_set
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
    assert report["flag_rate_supported"] <= 0.25 and report["flag_rate_unrelated"] >= 0.5
