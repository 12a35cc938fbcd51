"""Cloze cards without a model: central sentences of real sources, the weightiest term blanked,
every range an exact slice of the stored text."""

from __future__ import annotations

from knownote.study.cards import BLANK, CLOZE, NAME, NUMBER, SENTENCES, WORD, cards
from knownote.study.cloze import (
    CARDS_PER_SOURCE,
    answer_kind,
    blankable,
    cloze_cards,
    preference,
    term_weights,
    tokens,
)


def test_every_cloze_card_is_an_exact_sentence_with_its_term_blanked(studied):
    store, notebook, documents = studied
    made = cards(store, notebook.id)
    assert {c.document_id for c in made} == set(documents.values())
    for card in made:
        text = store.document_text(card.document_id)
        assert card.kind == CLOZE and card.made_by == SENTENCES and card.supported
        assert card.start <= card.answer_start < card.answer_end <= card.end
        assert text[card.answer_start : card.answer_end] == card.answer
        assert BLANK in card.front and card.answer not in card.front.split(BLANK)
        assert card.front.replace(BLANK, card.answer) == card.back


def test_a_source_gets_at_most_its_share_of_cards_each_blanking_another_term(studied):
    store, notebook, documents = studied
    for document_id in documents.values():
        answers = [
            c.answer.casefold() for c in cards(store, notebook.id) if c.document_id == document_id
        ]
        assert 3 <= len(answers) <= CARDS_PER_SOURCE
        assert len(set(answers)) == len(answers)


def test_the_book_s_cards_say_their_page(studied):
    store, notebook, documents = studied
    book = [c for c in cards(store, notebook.id) if c.document_id == documents["book"]]
    pages = store.pages(documents["book"])
    for card in book:
        page = next(p for p in pages if p.start <= card.start < p.end)
        assert card.page == page.number and f"p. {page.number}" in card.where


def test_the_term_blanked_is_the_weightiest_of_its_sentence_not_asked_already(studied, embedder):
    store, _, documents = studied
    document = store.document(documents["gravity"])
    made = cloze_cards(store, embedder, document.id)
    answers = {c.answer.casefold() for c in made}
    for card in made:
        sentence = store.document_text(document.id)[card.start : card.end]
        terms = {t.term for t in tokens(sentence) if blankable(t, "en")}
        weights = term_weights(store, document, terms)
        others = [weights[t] for t in terms - answers if t in weights]
        assert weights[card.answer.casefold()] >= max(others, default=0.0)


def test_stop_words_and_short_words_are_never_blanked(studied):
    store, notebook, _ = studied
    for card in cards(store, notebook.id):
        assert card.answer.casefold() not in {"the", "and", "that", "with", "this", "from"}
        assert len(card.answer) >= 2


def test_tokens_are_exact_ranges_of_the_sentence_and_cjk_runs_give_pairs():
    sentence = "Lessig wrote 2004's “Free Culture”; 自由文化 too."
    found = tokens(sentence)
    assert [sentence[t.start : t.end] for t in found] == [
        "Lessig", "wrote", "2004", "s", "Free", "Culture", "自由", "由文", "文化", "too",
    ]  # fmt: skip
    assert found[0].term == "lessig"


def test_answers_are_sorted_into_numbers_names_and_words():
    assert answer_kind("1,200") == NUMBER
    assert answer_kind("in 2004") == NUMBER
    assert answer_kind("Lessig") == NAME
    assert answer_kind("Walt Disney") == NAME
    assert answer_kind("Copyright", sentence_start=True) == WORD
    assert answer_kind("property") == WORD


def test_words_of_link_targets_and_addresses_are_not_terms():
    sentence = "Like the [Ames room](https://en.wikipedia.org/wiki/Ames_room), see https://x.org/a."
    assert [sentence[t.start : t.end] for t in tokens(sentence)] == [
        "Like",
        "the",
        "Ames",
        "room",
        "see",
    ]


def test_numbers_are_preferred_and_short_words_weigh_less():
    assert preference("2004") > preference("gravity") == preference("illusion") == 1.0
    assert preference("also") < preference("gravity")
    assert preference("自由") == 1.0


def test_a_chinese_source_s_cards_blank_character_pairs_at_exact_ranges(
    store, notebook, settings, embedder
):
    from tests.conftest import corpus_file
    from tests.study.conftest import import_into

    path = corpus_file("docs/web_text/md_zh_distributed_training_notes.md")
    document_id = import_into(store, notebook, settings, embedder, path.name, path.read_bytes())
    made = cloze_cards(store, embedder, document_id)
    text = store.document_text(document_id)
    assert len(made) >= 3
    for card in made:
        assert len(card.answer) == 2 and text[card.answer_start : card.answer_end] == card.answer
        assert BLANK in card.front and card.language == "zh"


# --- roles: cards from body text --------------------------------------------------------------

NOTES = (
    "# Tardigrades\n\n"
    "Tardigrades survive drying by turning into a dormant barrel called a tun for decades. "
    "Their cells make protective proteins that hold membranes together without any water. "
    "Some species survived ten days of open space on a satellite in low orbit.\n\n"
    "## References\n\n"
    "Jönsson, K. 2008. Tardigrades survive exposure to space in low Earth orbit. Current "
    "Biology 18.\n"
    "Hashimoto, T. 2016. Extremotolerant tardigrade genome and improved radiotolerance of "
    "cultured human cells. Nature Communications 7.\n"
    "Boothby, T. 2017. Tardigrades use intrinsically disordered proteins to survive "
    "desiccation. Molecular Cell 65.\n"
)


def test_cards_are_made_from_body_text_not_from_a_reference_list(
    store, notebook, settings, embedder
):
    from knownote.read.roles import RoleRange, Roles
    from tests.study.conftest import import_into

    document_id = import_into(store, notebook, settings, embedder, "notes.md", NOTES.encode())
    text = store.document_text(document_id)
    start = text.index("Jönsson")
    references = Roles([RoleRange(start, len(text), "reference")])
    assert [
        c for c in cloze_cards(store, embedder, document_id, roles=Roles(())) if c.start >= start
    ]
    made = cloze_cards(store, embedder, document_id, roles=references)
    assert len(made) >= 2 and all(c.end <= start for c in made)


def test_a_page_header_inside_a_card_s_sentence_is_shown_as_an_ellipsis_and_never_blanked(
    store, notebook, settings, embedder
):
    from knownote.read.roles import RoleRange, Roles
    from tests.study.conftest import import_into

    data = (
        "分布式训练把一个大模型的参数和梯度切分到多台机器上，\n\n机器学习讲义 第十二页\n\n"
        "每台机器只保存其中一部分参数并与其他机器同步梯度。"
        "数据并行在每台机器上复制完整的模型，再把一批数据平均分给各台机器进行计算。"
    )
    document_id = import_into(store, notebook, settings, embedder, "zh.txt", data.encode())
    text = store.document_text(document_id)
    header = RoleRange(text.index("机器学习讲义"), text.index("第十二页") + 4, "page_header")
    made = cloze_cards(store, embedder, document_id, roles=Roles([header]))
    crossing = [c for c in made if c.start < header.start and header.end < c.end]
    assert crossing, [c.back for c in made]
    for card in crossing:
        assert " … " in card.back and "讲义" not in card.back and "讲义" not in card.front
        assert not header.start <= card.answer_start < header.end
        assert text[card.answer_start : card.answer_end] == card.answer
