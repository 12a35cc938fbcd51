"""The dictionary judge: Tesseract's word lists know a good reading's words, not a misread one's."""

from __future__ import annotations

from knownote.read import tesseract, wordlist
from tests.read.test_ocr import needs_tesseract

GOOD = "Desiring to keep you posted on the membership of the society, we write to you in 2021."
POOR = "Eeairing to keep you poated on the aieiabership of the aociety, we wrlte to you in 2021."


@needs_tesseract("eng")
def test_the_dictionary_knows_a_good_reading_better_than_a_misread_one():
    vocabulary = wordlist.words("eng")
    assert len(vocabulary) > 100_000
    good, poor = wordlist.known_share(GOOD, vocabulary), wordlist.known_share(POOR, vocabulary)
    assert good.counted == poor.counted == 16  # words of two letters or more; 2021 is no word
    assert good.share == 1.0
    assert poor.share < 0.8


@needs_tesseract("chi_sim")
def test_chinese_counts_the_characters_dictionary_words_cover():
    vocabulary = wordlist.words("chi_sim")
    right = wordlist.known_share("会计师事务所关于年度报告的说明", vocabulary)
    wrong = wordlist.known_share("会汁帅事务折关干年庋报吿的说朋", vocabulary)  # look-alikes
    assert right.counted == wrong.counted == 15
    assert right.share > 0.7 > wrong.share


def test_without_tesseract_there_is_no_dictionary(monkeypatch):
    monkeypatch.setattr(tesseract, "binary", lambda: None)
    assert wordlist.words("eng+chi_sim") == frozenset()
    assert wordlist.known_share(GOOD, frozenset()).share == 0.0
