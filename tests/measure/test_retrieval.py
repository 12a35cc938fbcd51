import json

import pytest

from knownote.cli import main
from knownote.errors import KnowNoteError
from knownote.measure.retrieval import (
    DatasetError,
    ScratchIndex,
    evaluate,
    import_text,
    load_squad,
    reanchor,
)
from knownote.search.retrieve import TUNED, Tuning
from tests.conftest import corpus_file

CONTEXTS = [
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
    "Mount Fuji is the highest mountain in Japan, at 3,776 metres.",
    "Python was created by Guido van Rossum and first released in 1991.",
]
QUESTIONS = [
    ("When was the Eiffel Tower completed?", 0, "1889"),
    ("How high is Mount Fuji?", 1, "3,776 metres"),
    ("Who created Python?", 2, "Guido van Rossum"),
]


def squad(tmp_path, contexts=CONTEXTS, questions=QUESTIONS, offsets=None):
    paragraphs = [{"context": c, "qas": []} for c in contexts]
    for n, (question, i, answer) in enumerate(questions):
        start = contexts[i].index(answer)
        if offsets is not None and offsets[n] is not None:
            start = offsets[n]
        answers = [{"text": answer, "answer_start": start}]
        paragraphs[i]["qas"].append({"id": str(n), "question": question, "answers": answers})
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": paragraphs}]}))
    return path


def test_every_question_is_found_first_on_a_tiny_set(tmp_path, embedder):
    report = evaluate(load_squad(squad(tmp_path)), embedder)
    assert report.questions == 3 and report.passages == 3
    for figures in report.modes.values():
        assert figures == {"recall@1": 1.0, "recall@5": 1.0, "recall@10": 1.0, "mrr@10": 1.0}


def test_max_questions_keeps_only_the_contexts_asked_about(tmp_path):
    dataset = load_squad(squad(tmp_path), max_questions=2)
    assert len(dataset.questions) == 2 and len(dataset.contexts) == 2


def test_contexts_holding_no_question_are_kept_as_the_rest_of_the_notebook(tmp_path):
    distractor = "The Great Wall of China is a series of fortifications built over centuries."
    path = squad(tmp_path, contexts=[*CONTEXTS, distractor])
    assert [c.text for c in load_squad(path).contexts] == [*CONTEXTS, distractor]
    # Cut short or with a held-out part left out, a set keeps its distractors too.
    assert [c.text for c in load_squad(path, max_questions=1).contexts] == [CONTEXTS[0], distractor]
    assert [c.text for c in load_squad(path, skip=2).contexts] == [CONTEXTS[2], distractor]
    assert [c.text for c in load_squad(path, article=True).contexts] == [
        "\n\n".join([*CONTEXTS, distractor])
    ]


def test_negative_offsets_are_skipped(tmp_path):
    dataset = load_squad(squad(tmp_path, offsets=[-1, None, None]))
    assert dataset.skipped == 1
    assert [q.text for q in dataset.questions] == ["How high is Mount Fuji?", "Who created Python?"]


def test_offsets_a_few_characters_off_are_reanchored(tmp_path):
    dataset = load_squad(squad(tmp_path, questions=QUESTIONS[:1], offsets=[30]))
    q = dataset.questions[0]
    assert CONTEXTS[0][q.start : q.end] == "1889"


@pytest.mark.parametrize(
    ("text", "answer", "start", "expected"),
    [
        ("abc abc abc", "abc", 4, 4),
        ("abc abc abc", "abc", 5, 4),
        ("abc abc abc", "abc", 7, 8),
        ("no answer here", "xyz", 3, None),
        ("x" * 100 + "far", "far", 0, None),
    ],
)
def test_reanchor_picks_the_nearest_exact_occurrence(text, answer, start, expected):
    assert reanchor(text, answer, start) == expected


def test_jsquad_title_prefix_becomes_a_heading_line(tmp_path):
    context = "梅雨 [SEP] 梅雨は、北海道と小笠原諸島を除く日本でみられる。"
    questions = [("どこを除く？", 0, "小笠原諸島"), ("何の話？", 0, "梅雨")]
    offsets = [context.index("小笠原諸島"), 0]
    dataset = load_squad(squad(tmp_path, [context], questions, offsets))
    text = dataset.contexts[0].text
    assert text == "梅雨\n梅雨は、北海道と小笠原諸島を除く日本でみられる。"
    assert dataset.contexts[0].title == "梅雨"
    assert [text[q.start : q.end] for q in dataset.questions] == ["小笠原諸島", "梅雨"]


def test_a_file_that_is_not_squad_is_a_clear_error(tmp_path):
    path = tmp_path / "x.json"
    path.write_text("[1, 2]")
    with pytest.raises(DatasetError, match="not a SQuAD-format"):
        load_squad(path)


def test_unknown_mode_is_refused(tmp_path, embedder):
    with pytest.raises(KnowNoteError, match="Unknown search mode"):
        evaluate(load_squad(squad(tmp_path)), embedder, modes=["bm42"])


def test_eval_command_prints_json_figures_per_mode(tmp_path, capsys):
    db = tmp_path / "home" / "k.duckdb"
    assert main(["--db", str(db), "eval", str(squad(tmp_path)), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["questions"] == 3 and out["passages"] == 3
    assert set(out["modes"]) == {"hybrid", "vector", "keyword"}
    assert set(out["modes"]["hybrid"]) == {"recall@1", "recall@5", "recall@10", "mrr@10"}
    assert not db.exists(), "eval works in a scratch database, never the user's"


def test_eval_command_shows_progress_on_stderr(tmp_path, capsys):
    db = tmp_path / "home" / "k.duckdb"
    assert main(["--db", str(db), "eval", str(squad(tmp_path)), "--mode", "keyword"]) == 0
    captured = capsys.readouterr()
    assert "keyword: 3/3 questions" in captured.err
    assert "keyword" in captured.out and "recall@5" in captured.out


def test_eval_on_a_real_question_set_subset(tmp_path, capsys):
    path = corpus_file("qa_en/xquad.en.json")
    db = tmp_path / "home" / "k.duckdb"
    assert main(["--db", str(db), "eval", str(path), "--max-questions", "40", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["questions"] == 40
    assert out["modes"]["hybrid"]["recall@10"] >= 0.9


def test_many_fusion_weights_score_as_many_hybrid_searches(embedder):
    dataset = load_squad(corpus_file("qa_en/xquad.en.json"), max_questions=30)
    tunings = [TUNED, Tuning(dense_weight=6.0, dense_floor=0.0), Tuning(coverage_power=3.0)]
    with ScratchIndex(dataset, embedder) as index:
        assert index.score_fusions(tunings) == [index.score("hybrid", 10, t) for t in tunings]
        with pytest.raises(ValueError, match="keyword weights"):
            index.score_fusions([TUNED, Tuning(k1=2.0)])


def test_search_command_prints_json_hits(tmp_path, capsys, embedder):
    from knownote.store.db import Store

    db = tmp_path / "home" / "k.duckdb"
    store = Store.open(db)
    notebook = store.create_notebook("Facts", embedder.name, embedder.dim)
    document_id = import_text(store, notebook.id, embedder, "facts", " ".join(CONTEXTS))
    store.close()
    assert main(["--db", str(db), "search", "Facts", "Who created Python?", "--json"]) == 0
    [hit] = json.loads(capsys.readouterr().out)
    assert hit["document_id"] == document_id and hit["title"] == "facts"
    assert {"passage_index", "start", "end", "page_start", "page_end", "score", "text"} <= set(hit)


def test_search_command_with_an_unknown_mode_fails(tmp_path, capsys):
    db = tmp_path / "home" / "k.duckdb"
    with pytest.raises(SystemExit):
        main(["--db", str(db), "search", "Facts", "q", "--mode", "fuzzy"])


def two_articles(tmp_path):
    paragraph = lambda text, question, answer: {  # noqa: E731
        "context": text,
        "qas": [
            {"id": question, "question": question,
             "answers": [{"text": answer, "answer_start": text.index(answer)}]}
        ],
    }  # fmt: skip
    data = {
        "data": [
            {"title": "Eiffel_Tower", "paragraphs": [
                paragraph(CONTEXTS[0], "When was it completed?", "1889"),
                paragraph("It is 330 metres tall.", "How tall is it?", "330 metres"),
            ]},
            {"title": "Mount_Fuji", "paragraphs": [
                paragraph(CONTEXTS[1], "How high is Mount Fuji?", "3,776 metres"),
            ]},
        ]
    }  # fmt: skip
    path = tmp_path / "articles.json"
    path.write_text(json.dumps(data))
    return path


def test_article_mode_joins_paragraphs_and_shifts_the_offsets(tmp_path):
    dataset = load_squad(two_articles(tmp_path), article=True)
    assert [c.title for c in dataset.contexts] == ["Eiffel Tower", "Mount Fuji"]
    assert dataset.contexts[0].text == CONTEXTS[0] + "\n\nIt is 330 metres tall."
    for q in dataset.questions:
        assert dataset.contexts[q.context].text[q.start : q.end] == q.answers[0]
    assert [q.context for q in dataset.questions] == [0, 0, 1]


def test_skip_leaves_out_the_first_questions_and_their_contexts(tmp_path):
    dataset = load_squad(two_articles(tmp_path), skip=2)
    assert [q.text for q in dataset.questions] == ["How high is Mount Fuji?"]
    assert [c.text for c in dataset.contexts] == [CONTEXTS[1]]
    assert dataset.questions[0].context == 0


def test_eval_compare_prints_before_and_after_in_one_run(tmp_path, capsys):
    db = tmp_path / "home" / "k.duckdb"
    path = two_articles(tmp_path)
    assert (
        main(["--db", str(db), "eval", str(path), "--article", "--compare", "--mode", "hybrid"])
        == 0
    )
    out = capsys.readouterr().out
    assert "(articles): 3 questions, 2 documents" in out
    assert "hybrid before" in out and "hybrid after" in out
