"""Cutting a streamed answer where a small model starts to loop."""

from knownote.answer.repetition import RepetitionCut


def feed(text: str, step: int = 7) -> RepetitionCut | None:
    cut = RepetitionCut()
    for end in range(step, len(text) + step, step):
        if cut.repeated(text[:end]):
            return cut
    return None


def test_an_answer_without_repetition_runs_to_the_end():
    text = "Gravity hills are optical illusions [1]. Cars seem to roll uphill [2]. " * 1
    assert feed(text) is None


def test_a_sentence_said_again_is_cut_before_the_repeat():
    sentence = "The passages say that the hill only looks like it rises [1]. "
    cut = feed("Yes. " + sentence * 5)
    assert cut is not None
    assert cut.text == "Yes. " + sentence.strip()


def test_a_repeat_with_other_marks_is_still_a_repeat():
    cut = feed("Cars seem to roll uphill on it [1]. Cars seem to roll uphill on it [2]. More.")
    assert cut is not None
    assert cut.text == "Cars seem to roll uphill on it [1]."


def test_short_sentences_may_repeat():
    assert feed("Yes [1]. No [2]. Yes [1]. No [2]. The end of the answer is here.") is None


def test_a_phrase_looping_without_punctuation_is_cut_after_one_copy():
    cut = feed("答案是 " + "the road the road the hill " * 10)
    assert cut is not None
    assert cut.text.startswith("答案是 the road")
    assert len(cut.text) < 60


def test_table_borders_are_not_a_loop():
    assert feed("| a | b |\n" + "|" + "-" * 200 + "|\n") is None


def test_cjk_sentences_repeat_too():
    sentence = "检索增强生成把检索到的段落交给模型来回答问题。"
    cut = feed(sentence * 3)
    assert cut is not None
    assert cut.text == sentence
