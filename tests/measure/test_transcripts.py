from knownote.measure.transcripts import character_error_rate, edits, word_error_rate


def test_word_errors_count_substitutions_deletions_and_insertions_per_word_said():
    assert word_error_rate("The hill looks uphill.", "the hill looks up hill") == 2 / 4
    assert word_error_rate("", "") == 0.0
    assert word_error_rate("", "noise") == 1.0


def test_japanese_is_compared_by_its_characters_without_punctuation():
    assert character_error_rate("交響曲を聴く。", "高強曲を聴く") == 2 / 6
    assert character_error_rate("こんにちは", "こんにちは。") == 0.0


def test_edits_are_the_levenshtein_distance():
    assert edits("kitten", "sitting") == 3
    assert edits([], ["a", "b"]) == 2
