"""Word headings (heading styles, Title, outline levels) and PowerPoint slide titles."""

from __future__ import annotations

import io
import warnings
import zipfile

import pytest

from knownote.errors import UnreadableFile
from knownote.read.extract import extract
from knownote.read.sections import Heading, heading_text
from tests.conftest import corpus_file


def read(relative: str):
    path = corpus_file(relative)
    return extract(path.read_bytes(), path.name)


def test_word_heading_styles_are_headings_with_their_level():
    extracted = read("docs/office/docx_en_rag_intro.docx")
    assert extracted.headings == (Heading(0, 32, 1), Heading(392, 415, 1), Heading(857, 888, 1))
    assert extracted.text[392:415] == "LangChain and LangGraph"


def test_a_long_paragraph_in_a_heading_style_is_not_a_heading():
    extracted = read("docs/office/docx_en_rag_intro.docx")
    # The second "Heading 1" paragraph is a whole paragraph of body text.
    assert not any(extracted.text[h.start :].startswith("To maximize") for h in extracted.headings)


def test_word_heading_levels_nest():
    extracted = read("docs/office/docx_doj_ch13_trustee_handbook_long.docx")
    text = extracted.text
    first = [(heading_text(text, h), h.level) for h in extracted.headings[:3]]
    assert first == [
        ("CHAPTER 1 – INTRODUCTION", 1),
        ("A. PURPOSE", 2),
        ("B. ROLE OF THE UNITED STATES TRUSTEE", 2),
    ]
    assert {h.level for h in extracted.headings} == {1, 2, 3}


def test_slide_titles_are_headings_on_their_slides():
    extracted = read("docs/office/pptx_sample_presentation_4slides.pptx")
    assert [(h.start, h.end, h.level) for h in extracted.headings] == [
        (0, 11, 1),
        (30, 61, 1),
        (204, 236, 1),
        (443, 472, 1),
    ]
    for page, heading in zip(extracted.pages, extracted.headings, strict=True):
        assert page.start <= heading.start < heading.end <= page.end
    assert extracted.text[30:61] == "This is the first content slide"


def test_a_title_placeholder_holding_a_whole_list_is_not_a_heading():
    assert read("docs/office/pptx_nasa_science_directorate_1slide.pptx").headings == ()


def _swapped_parts(relative: str, parts: dict[str, str], drop: str | None = None) -> bytes:
    """The file with parts renamed (old name -> new name), one part left out."""
    out = io.BytesIO()
    with zipfile.ZipFile(corpus_file(relative)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            if info.filename != drop:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # a duplicate name
                    target.writestr(parts.get(info.filename, info.filename), source.read(info))
    return out.getvalue()


def test_a_part_of_another_kind_under_a_known_name_is_a_damaged_file():
    for relative in ("docs/office/docx_en_rag_intro.docx",
                     "docs/office/pptx_sample_presentation_4slides.pptx"):  # fmt: skip
        data = _swapped_parts(relative, {"_rels/.rels": "[Content_Types].xml"},
                              drop="[Content_Types].xml")  # fmt: skip
        with pytest.raises(UnreadableFile, match="is damaged"):
            extract(data, relative.rsplit("/", 1)[1])
        twice = _swapped_parts(relative, {"_rels/.rels": "[Content_Types].xml"})
        with pytest.raises(UnreadableFile, match=r"holds its part \[Content_Types\].xml twice"):
            extract(twice, relative.rsplit("/", 1)[1])
