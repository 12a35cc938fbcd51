"""Speed and fidelity of ONNX variants of the packaged model, against sentence-transformers.

    .venv/bin/python benchmarks/embed_variants.py [--passages 300]

Builds, in a temp folder, from the cached fp32 graph: onnxruntime's transformer optimiser's
fused graph, and dynamic int8 quantisations of it (per-channel signed weights) restricted to
different operators. Embeds the same real corpus passages (English book, Chinese and Japanese
question-set contexts) with each and with the torch path, back to back, and prints passages per
second, the speed ratio to torch, and the mean and minimum cosine to the torch vectors.
KnowNote ships the last one (`onnx_export.quantize`): see the README for what these figures decided.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from knownote.index.embed import SentenceTransformerEmbedder
from knownote.index.embed_onnx import OnnxEmbedder, packaged_onnx_embedder
from knownote.index.onnx_export import quantize
from knownote.index.split import split
from knownote.measure.retrieval import load_squad
from knownote.read.extract import extract
from knownote.settings import PACKAGED_MODEL

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
BOOK = CORPUS / "docs/pdf/book_free_culture_lessig_352p.pdf"


def passages(n: int) -> list[str]:
    text = extract(BOOK.read_bytes(), BOOK.name).text
    texts = [text[s.start : s.end] for s in split(text)][200 : 200 + n]
    for name in ("qa_zh/cmrc2018_dev.json", "qa_ja/jsquad-valid-v1.3.json"):
        for context in load_squad(CORPUS / name, max_questions=300).contexts[: n // 8]:
            texts.extend(context.text[s.start : s.end] for s in split(context.text))
    return texts


def variants(model_folder: Path, fp32: Path, folder: Path) -> dict[str, Path]:
    """The graphs to compare, by name."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    fused = folder / "fused.onnx"
    optimize_model(str(fp32), model_type="bert", num_heads=12, hidden_size=384).save_model_to_file(
        str(fused)
    )
    nodes = onnx.load(str(fused)).graph.node
    matmuls = [n.name for n in nodes if n.op_type == "MatMul"]
    attention = [n.name for n in nodes if n.op_type == "Attention"]
    ffn_in = [n for n in matmuls if "intermediate" in n]
    ffn_out = [n for n in matmuls if "/output/dense" in n and "attention" not in n]
    attention_out = [n for n in matmuls if "attention/output" in n]
    chosen = {
        "int8 every operator": None,
        "int8 attention (QKV)": attention,
        "int8 FFN in": ffn_in,
        "int8 attention + FFN in": attention + ffn_in,
        "int8 FFN in + out": ffn_in + ffn_out,
        "int8 all MatMul": ffn_in + ffn_out + attention_out,
    }
    graphs = {"fp32 (exported)": fp32, "fp32 fused (optimiser)": fused}
    for i, (name, nodes_to_quantize) in enumerate(chosen.items()):
        target = folder / f"int8_{i}.onnx"
        quantize_dynamic(
            str(fused),
            str(target),
            per_channel=True,
            weight_type=QuantType.QInt8,
            nodes_to_quantize=nodes_to_quantize,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        graphs[name] = target
    shipped = folder / "shipped-int8.onnx"
    quantize(fp32, shipped, num_heads=12, hidden_size=384)
    graphs["int8 shipped (all but 1 MatMul)"] = shipped
    return graphs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=300, help="book passages (+ CJK ones)")
    args = parser.parse_args()
    default = packaged_onnx_embedder(PACKAGED_MODEL)
    default.embed_query("make sure the fp32 graph is exported")
    texts = passages(args.passages)
    torch_path = SentenceTransformerEmbedder(default.name)
    torch_path.embed_passages(texts[:32])
    t = time.perf_counter()
    reference = torch_path.embed_passages(texts)
    torch_s = time.perf_counter() - t
    print(f"{len(texts)} real passages; load average {os.getloadavg()[0]:.1f}")
    print(f"{'torch (sentence-transformers)':30s} {len(texts) / torch_s:7.1f} passages/s")
    with tempfile.TemporaryDirectory(prefix="knownote-variants-") as folder:
        for name, graph in variants(default.model_folder, default.graph, Path(folder)).items():
            embedder = OnnxEmbedder(default.name, default.model_folder, graph)
            embedder.embed_passages(texts[:32])
            t = time.perf_counter()
            vectors = embedder.embed_passages(texts)
            seconds = time.perf_counter() - t
            cosines = (vectors * reference).sum(axis=1)
            print(
                f"{name:30s} {len(texts) / seconds:7.1f} passages/s  {torch_s / seconds:5.2f}x "
                f"torch  cosine to torch mean {float(np.mean(cosines)):.5f} "
                f"min {float(np.min(cosines)):.5f}  ({graph.stat().st_size / 1e6:.0f} MB)"
            )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
