"""Citation excerpts: exactly [start, end) highlighted, everything escaped, honest ellipses."""

from __future__ import annotations

import html
import re

import pytest

from knownote.show.excerpt import (
    STALE,
    answer_html,
    card_html,
    chars_label,
    citation_header,
    escape_markdown,
    excerpt,
    excerpt_html,
    is_stale,
    page_label,
    text_with_page_markers,
)


def marked(fragment: str) -> str:
    (inside,) = re.findall(r"<mark>(.*?)</mark>", fragment, flags=re.S)
    return inside


def card(text: str, start: int, end: int, **changes: object) -> str:
    fields = dict(
        message_id=7,
        n=2,
        title="doc.pdf",
        document_id=3,
        start=start,
        end=end,
        page_start=14,
        page_end=14,
        passage_text=text[start:end],
        document_text=text,
    )
    fields.update(changes)
    return card_html(**fields)


# --- labels -------------------------------------------------------------------------------


def test_page_label_single_page():
    assert page_label(14, 14) == "p. 14"


def test_page_label_page_end_missing():
    assert page_label(3, None) == "p. 3"


def test_page_label_range():
    assert page_label(14, 15) == "pp. 14–15"


def test_page_label_no_pages():
    assert page_label(None, None) == ""


def test_chars_label_has_thousands_separators():
    assert chars_label(8120, 8247) == "chars 8,120–8,247"


def test_header_as_in_the_issue():
    header = citation_header(2, "freeculture.pdf", 14, 14, 8120, 8247)
    assert header == "[2] freeculture.pdf · p. 14 · chars 8,120–8,247"


def test_header_with_a_section_as_in_the_issue():
    header = citation_header(2, "paper.pdf", 14, 14, 8120, 8247, "3 Method › 3.2 Training")
    assert header == "[2] paper.pdf · §3.2 Training · p. 14 · chars 8,120–8,247"


def test_section_in_card_header_is_escaped():
    html = card("text", 0, 4, section="Intro › <img src=x onerror=alert(5)>")
    assert "<img" not in html
    assert "· §&lt;img src=x onerror=alert(5)&gt; · p. 14" in html


def test_header_without_pages_leaves_the_page_out():
    assert citation_header(1, "notes.txt", None, None, 0, 10) == "[1] notes.txt · chars 0–10"


# --- the excerpt --------------------------------------------------------------------------


def test_excerpt_marks_exactly_the_range():
    text = "alpha beta gamma delta"
    assert marked(excerpt_html(text, 6, 10)) == "beta"


def test_excerpt_whole_text_has_no_ellipsis():
    html = excerpt_html("short text", 0, 10)
    assert marked(html) == "short text"
    assert "…" not in html


def test_excerpt_at_start_of_text():
    part = excerpt("abc def ghi", 0, 3)
    assert (part.before, part.passage, part.cut_before) == ("", "abc", False)


def test_excerpt_at_end_of_text():
    part = excerpt("abc def ghi", 8, 11)
    assert (part.passage, part.after, part.cut_after) == ("ghi", "", False)


def test_empty_range_is_allowed():
    assert marked(excerpt_html("abc", 1, 1)) == ""


def test_range_outside_text_is_an_error():
    with pytest.raises(ValueError):
        excerpt("abc", 2, 5)


def test_reversed_range_is_an_error():
    with pytest.raises(ValueError):
        excerpt("abc", 2, 1)


def test_long_context_is_cut_with_ellipses():
    text = "word " * 200 + "TARGET" + " word" * 200
    start = text.index("TARGET")
    html = excerpt_html(text, start, start + 6, context=50)
    assert html.startswith('<div class="kn-excerpt" tabindex="0">…')
    assert html.endswith("…</div>")
    assert marked(html) == "TARGET"


def test_context_is_bounded():
    text = "x" * 1000 + "HIT" + "y" * 1000
    part = excerpt(text, 1000, 1003, context=100)
    assert len(part.before) == 100 and len(part.after) == 100


def test_context_does_not_cut_a_word_when_a_space_is_near():
    text = "abcdefghij klmno TARGET pqrst uvwxyzabcd"
    start = text.index("TARGET")
    part = excerpt(text, start, start + 6, context=12)
    assert part.before == "klmno "
    assert part.after == " pqrst"


def test_cjk_context_without_spaces():
    text = "これは日本語の文章です。" * 50
    start, end = 120, 132
    part = excerpt(text, start, end, context=30)
    assert part.passage == text[start:end]
    assert len(part.before) == 30 and part.cut_before


def test_cjk_passage_is_marked_exactly():
    text = "前文。引用される文。後文。"
    assert marked(excerpt_html(text, 3, 10)) == "引用される文。"


def test_passage_with_newlines_is_kept_as_is():
    text = "one\n\ntwo\nthree"
    assert marked(excerpt_html(text, 0, len(text))) == "one\n\ntwo\nthree"


# --- escaping -----------------------------------------------------------------------------


def test_script_tag_in_passage_is_escaped():
    text = "before <script>alert(1)</script> after"
    html = excerpt_html(text, 0, len(text))
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_img_onerror_in_context_is_escaped():
    text = '<img src=x onerror="alert(2)"> the passage'
    html = excerpt_html(text, text.index("the"), len(text))
    assert "<img" not in html
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in html


def test_closing_mark_in_text_cannot_end_the_highlight():
    text = "a</mark><b>b</b>c"
    html = excerpt_html(text, 0, len(text))
    assert html.count("</mark>") == 1
    assert marked(html) == "a&lt;/mark&gt;&lt;b&gt;b&lt;/b&gt;c"


def test_ampersand_is_escaped():
    assert marked(excerpt_html("R&D", 0, 3)) == "R&amp;D"


def test_title_in_card_header_is_escaped():
    html = card("text", 0, 4, title="<img src=x onerror=alert(3)>.pdf")
    assert "<img" not in html
    assert "&lt;img src=x onerror=alert(3)&gt;.pdf" in html


def test_quotes_in_title_cannot_break_out_of_the_card():
    html = card("text", 0, 4, title='" onmouseover="alert(4)')
    assert 'onmouseover="' not in html


# --- cards --------------------------------------------------------------------------------


def test_card_has_anchor_and_offsets():
    html = card("hello world", 6, 11)
    assert 'id="cite-7-2"' in html
    assert 'data-document="3" data-start="6" data-end="11"' in html
    assert "[2] doc.pdf · p. 14 · chars 6–11" in html
    assert marked(html) == "world"


def test_card_with_changed_document_is_stale_and_not_highlighted():
    html = card("hello world", 6, 11, passage_text="earth")
    assert STALE in html
    assert "<mark>" not in html
    assert "earth" in html


def test_card_for_deleted_document_is_stale():
    html = card("hello world", 6, 11, document_text=None)
    assert STALE in html and "<mark>" not in html


def test_card_marked_stale_by_caller_is_not_highlighted():
    assert "<mark>" not in card("hello world", 6, 11, stale=True)


def test_is_stale_when_range_is_past_the_end():
    assert is_stale("short", 3, 50, "rt and more")


def test_is_not_stale_when_text_matches():
    assert not is_stale("hello world", 6, 11, "world")


# --- the answer ---------------------------------------------------------------------------


def test_answer_marks_become_links():
    html = answer_html("Fact [1].", 12, [1])
    assert '<a class="kn-cite" href="#cite-12-1">1</a>' in html


def test_answer_grouped_marks_link_each_number():
    html = answer_html("Fact [1, 3].", 5, [1, 3])
    assert 'href="#cite-5-1"' in html and 'href="#cite-5-3"' in html


def test_answer_unknown_number_stays_text():
    html = answer_html("Fact [9].", 5, [1])
    assert "[9]" in html and "href" not in html


def test_answer_without_message_id_has_no_links():
    assert "href" not in answer_html("Fact [1].", None, [1])


def test_answer_text_is_escaped_before_linking():
    html = answer_html("<script>alert(1)</script> [1]", 4, [1])
    assert "<script>" not in html
    assert "&lt;script&gt;" in html and 'href="#cite-4-1"' in html


def test_answer_html_in_brackets_is_not_a_link():
    html = answer_html("[<b>1</b>]", 4, [1])
    assert "href" not in html and "<b>" not in html


def test_answer_paragraphs_and_line_breaks():
    html = answer_html("one\ntwo\n\nthree", 1, [])
    assert html == '<div class="kn-answer"><p>one<br>two</p><p>three</p></div>'


# --- markdown labels and the text view ----------------------------------------------------


def test_escape_markdown_specials():
    assert escape_markdown("*a* _b_ [c](d) #") == r"\*a\* \_b\_ \[c\]\(d\) \#"


def test_escape_markdown_html_and_dollars():
    assert escape_markdown("<b>$x$</b>") == r"\<b\>\$x\$\</b\>"


def test_escape_markdown_joins_lines():
    assert escape_markdown("a\n\nb") == "a b"


def test_page_markers_before_each_page():
    text = "first page\nsecond page"
    shown = text_with_page_markers(text, [(1, 0, 10), (2, 11, 22)])
    assert shown.startswith("── page 1 · chars 0–10 ──\nfirst page")
    assert "── page 2 · chars 11–22 ──\nsecond page" in shown


def test_page_markers_without_pages_is_the_text():
    assert text_with_page_markers("plain", []) == "plain"


def test_page_markers_for_a_window_of_pages_only():
    text = "one\n\ntwo\n\nthree"
    shown = text_with_page_markers(text, [(2, 5, 8)], whole=False)
    assert shown == "── page 2 · chars 5–8 ──\ntwo"


def test_a_card_of_text_read_by_ocr_carries_an_ocr_label():
    assert 'class="kn-ocr"' not in card("hello world", 6, 11)
    html = card("hello world", 6, 11, ocr=True)
    assert '<span class="kn-ocr" title="Read by OCR from a page image' in html
    assert marked(html) == "world"


# --- support spans ------------------------------------------------------------------------


def support(**changes):
    from knownote.answer.cite import Support

    fields = dict(sentence=0, sentence_start=0, sentence_end=12, n=2, document_id=3, start=10,
                  end=15, text="", score=0.9, suggested=False, weak=False)  # fmt: skip
    fields.update(changes)
    return Support(**fields)


def test_a_support_span_gets_the_stronger_mark_inside_the_passage():
    from knownote.show.excerpt import card_spans, span_anchors

    text = "0123456789<b>&x</b>rest of it"
    s = support(start=10, end=15, text=text[10:15])
    html_ = card(text, 5, 25, spans=card_spans(span_anchors(7, [s]), 2))
    inner = re.search(r'<mark class="kn-span" id="span-7-2-10-15" data-start="10" '
                      r'data-end="15">(.*?)</mark>', html_)  # fmt: skip
    assert inner and inner.group(1) == "&lt;b&gt;&amp;x"
    assert "<b>" not in html_


def test_the_mark_of_a_sentence_links_to_its_span_and_a_weak_one_gets_a_note():
    text = "Rolls uphill [2]. Penguins fly [2]."
    strong = support(sentence_end=17, text="it seems to roll uphill")
    weak = support(sentence=1, sentence_start=18, sentence_end=35, start=40, end=50, weak=True)
    out = answer_html(text, 7, [2], [strong, weak])
    assert '<a class="kn-cite" href="#span-7-2-10-15" title="Leans on “it seems' in out
    assert '<a class="kn-cite" href="#cite-7-2">2</a>]. <span class="kn-weak"' in out
    assert out.count("no close match in the cited passages") == 1
    assert out.index("Penguins") < out.index("no close match")


def test_an_unmarked_sentence_links_to_its_labelled_suggestion():
    out = answer_html("It rolls.", 7, [], [support(sentence_end=9, suggested=True)])
    assert 'class="kn-suggest" href="#span-7-2-10-15"' in out and ">suggested [2]</a>" in out


def test_stale_supports_are_neither_drawn_nor_linked():
    from knownote.show.excerpt import span_anchors

    s = support(stale=True)
    assert span_anchors(7, [s]) == {}
    assert "span-" not in answer_html("Rolls uphill [2].", 7, [2], [s])


COLUMN = (
    "A dense retriever maps every passage of the collection to a\n"
    "vector, and the passages nearest to the question's own vec-\n"
    "tor are read first, as described.\n"
    "3.1\n"
    "Overview\n"
    "Our dense passage retriever uses a dense encoder which maps\n"
    "any text passage to a real-valued vector of fixed dimension.\n"
)


def test_a_pdf_excerpt_reflows_wrapped_lines_and_keeps_real_breaks():
    start = COLUMN.index("the passages nearest")
    end = COLUMN.index("which maps")
    shown = excerpt_html(COLUMN, start, end, reflow=True)
    assert 'class="kn-excerpt kn-reflow"' in shown
    assert "of the collection to a\nvector" in shown  # a wrap: the newline shows as a space
    assert 'vec-<span class="kn-wrap">\n</span>tor' in shown  # a hyphenated word shows whole
    assert "as described.\n<br>3.1\n<br>Overview\n<br>Our dense" in shown  # a heading breaks
    mark = re.search(r"<mark>(.*)</mark>", shown, re.S).group(1)
    assert html.unescape(re.sub(r"<[^>]+>", "", mark)) == COLUMN[start:end]  # every character


def test_other_excerpts_keep_every_line_as_it_is():
    shown = excerpt_html(COLUMN, 0, 40)
    assert "kn-reflow" not in shown and "<br>" not in shown and "kn-wrap" not in shown


def test_a_range_opened_from_a_link_has_no_number_in_its_header():
    assert citation_header(0, "notes.txt", None, None, 0, 10) == "notes.txt · chars 0–10"
