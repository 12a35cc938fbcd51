from knownote.index.tokenize import term_counts, tokenize


def test_latin_words_are_lower_cased():
    assert tokenize("Hello, World! It's 2024.") == ["hello", "world", "it", "s", "2024"]


def test_chinese_run_becomes_bigrams():
    assert tokenize("分布式训练") == ["分布", "布式", "式训", "训练"]


def test_single_cjk_character_stays_a_unigram():
    assert tokenize("a 水 b") == ["a", "水", "b"]


def test_japanese_mixed_with_latin_splits_at_script_change():
    assert tokenize("梅雨はJAPAN") == ["梅雨", "雨は", "japan"]


def test_korean_becomes_bigrams():
    assert tokenize("카드회원") == ["카드", "드회", "회원"]


def test_full_width_letters_are_normalised():
    assert tokenize("ＡＢＣ") == ["abc"]


def test_punctuation_breaks_cjk_runs():
    assert tokenize("中文。日本") == ["中文", "日本"]


def test_term_counts_counts_repeats():
    assert term_counts("the cat and the hat") == {"the": 2, "cat": 1, "and": 1, "hat": 1}
