"""Our sentence splitter against pysbd (char_span=True), on a gold set of sentence ends.

    .venv/bin/python benchmarks/sentences.py [PYSBD_FOLDER]

The gold set (sentences_gold.json) names contexts of the corpus's QA sets (English, German,
Russian: xquad; Chinese: cmrc2018; Japanese: JSQuAD) and the offsets where a sentence ends (the
last one, the text's end, left out). It was made by pooling: the ends both splitters found were
read through, and every end only one of them found was decided by hand. Prints boundary
precision, recall and F1 per language and the time per context for each splitter. pysbd is
looked for where it is installed or in PYSBD_FOLDER (`pip install --target DIR pysbd`).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.sentences import sentence_spans

CORPUS = Path(__file__).resolve().parents[2] / "shared/corpus"
GOLD = Path(__file__).with_name("sentences_gold.json")


def contexts(file: str) -> list[str]:
    seen: dict[str, None] = {}
    for article in json.loads((CORPUS / file).read_text(encoding="utf-8"))["data"]:
        for paragraph in article["paragraphs"]:
            seen.setdefault(paragraph["context"], None)
    return list(seen)


def ours(text: str, language: str) -> set[int]:
    return {b for _, b in sentence_spans(text)}


def pysbd_ends(text: str, language: str) -> set[int]:
    import pysbd

    ends = set()
    for span in pysbd.Segmenter(language=language, clean=False, char_span=True).segment(text):
        end = span.end
        while end > span.start and text[end - 1].isspace():
            end -= 1
        ends.add(end)
    return ends


def main() -> None:
    if len(sys.argv) > 1:
        sys.path.insert(0, sys.argv[1])
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    texts = {f: contexts(f) for f in {g["file"] for g in gold}}
    splitters = {"ours": ours}
    try:
        import pysbd  # noqa: F401

        splitters["pysbd"] = pysbd_ends
    except ImportError:
        print("pysbd is not installed: only ours is measured")
    for name, split in splitters.items():
        print(f"{name}:")
        for language in dict.fromkeys(g["language"] for g in gold):
            found = expected = right = 0
            seconds = 0.0
            items = [g for g in gold if g["language"] == language]
            for g in items:
                text = texts[g["file"]][g["context"]]
                t = time.perf_counter()
                ends = split(text, language) - {len(text.rstrip())}
                seconds += time.perf_counter() - t
                found += len(ends)
                expected += len(g["ends"])
                right += len(ends & set(g["ends"]))
            p, r = right / max(found, 1), right / max(expected, 1)
            f1 = 2 * p * r / max(p + r, 1e-9)
            print(
                f"  {language}  ends {expected:3d}  precision {p:.3f}  recall {r:.3f}  "
                f"F1 {f1:.3f}  {1000 * seconds / len(items):.2f} ms/context"
            )


if __name__ == "__main__":
    main()
