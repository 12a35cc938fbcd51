"""Token alignment across languages: how well the words of one text find their counterparts in
another, read from the multilingual model's per-token states.

The pooled vector of a short sentence says little across languages: between a German question
and the English sentences of its answer's paragraph, e5-small's cosines differ by less than its
translation noise. Its token states align better (BERTScore, Zhang et al. 2020; ColBERT's MaxSim,
Khattab & Zaharia 2020): each token of the question is matched with its closest token of a
sentence, and the mean of those closest cosines says how much of the question the sentence
holds. Middle layers align across languages better than the last, which is trained for the
pooled vector (docs/benchmarks.md: on held-out questions layer ALIGN_LAYER did best).

One run of the graph gives both: the last layer for the pooled vector (the same vector as the
embedder's, one text a run) and layer ALIGN_LAYER for the alignment. The graph is the embedder's,
loaded a second time with that layer as an extra output.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from knownote.index.embed import Embedder
from knownote.index.embed_onnx import E5Embedder, embed_workers, mean_pool

ALIGN_LAYER = 9  # of e5-small's 12 (0-based); chosen on held-out questions
_OUTPUT = "encoder/layer.{}/output/LN_out"

_sessions: dict[tuple[Path, int], object] = {}
_lock = threading.Lock()


def _session(graph: Path, layer: int):
    """The embedder's graph with the states of `layer` as a second output (loaded once); None
    when the graph has no such layer (made some other way)."""
    with _lock:
        if (graph, layer) not in _sessions:
            import onnx
            import onnxruntime

            model = onnx.load(str(graph))
            if not any(_OUTPUT.format(layer) in node.output for node in model.graph.node):
                _sessions[graph, layer] = None
                return None
            model.graph.output.append(
                onnx.helper.make_tensor_value_info(
                    _OUTPUT.format(layer), onnx.TensorProto.FLOAT, None
                )
            )
            options = onnxruntime.SessionOptions()
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.intra_op_num_threads = 1  # the texts run side by side instead
            _sessions[graph, layer] = onnxruntime.InferenceSession(
                model.SerializeToString(), options, providers=["CPUExecutionProvider"]
            )
        return _sessions[graph, layer]


class TokenEncoder:
    """Pooled vectors and per-token states of texts, from an E5Embedder's graph."""

    def __init__(self, embedder: E5Embedder, session) -> None:
        self.embedder = embedder
        tokenize, _ = embedder._load()  # makes the graph and tokenizer files if need be
        self._tokenize = tokenize
        self._session = session
        # Tokens the prefixes ("query: ", "passage: ") take after the first token.
        self._skip = {
            prefix: len(tokenize([prefix.strip()])[0]) - 2
            for prefix in (embedder.query_prefix, embedder.passage_prefix)
        }

    def encode(self, texts: Sequence[str], prefix: str) -> tuple[np.ndarray, list[np.ndarray]]:
        """Unit pooled vectors of `prefix + text` (as the embedder's), and each text's token
        states at the alignment layer, unit length, without the prefix and special tokens."""
        encodings = self._tokenize([(prefix + t).strip() for t in texts])
        skip = 1 + self._skip.get(prefix, 0)
        pooled = np.empty((len(texts), self.embedder.dim), dtype=np.float32)
        states: list[np.ndarray] = [np.zeros((0, 0), np.float32)] * len(texts)

        def run(i: int) -> None:
            ids = np.array([encodings[i]], dtype=np.int64)
            mask = np.ones_like(ids)
            last, layer = self._session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": mask * 0}
            )
            pooled[i] = mean_pool(last, mask)[0]
            tokens = layer[0, skip:-1]
            if not len(tokens):  # an empty text: its special tokens stand for it
                tokens = layer[0]
            states[i] = tokens / np.maximum(np.linalg.norm(tokens, axis=1, keepdims=True), 1e-6)

        workers = min(embed_workers(), len(texts))
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:
                list(pool.map(run, range(len(texts))))
        else:
            for i in range(len(texts)):
                run(i)
        return pooled, states


def token_encoder(embedder: Embedder | None) -> TokenEncoder | None:
    """A TokenEncoder for the multilingual e5 model run here (its graph loads once a process,
    a few seconds); None for any other embedder."""
    if not isinstance(embedder, E5Embedder):
        return None
    embedder._load()  # makes the graph if this machine has not yet
    session = _session(embedder.graph, ALIGN_LAYER)
    return TokenEncoder(embedder, session) if session is not None else None


def recall(question: np.ndarray, sentences: Sequence[np.ndarray]) -> np.ndarray:
    """For each sentence, the mean over the question's tokens of the closest cosine among the
    sentence's tokens (BERTScore's recall, unweighted)."""
    out = np.zeros(len(sentences))
    for i, tokens in enumerate(sentences):
        if len(tokens) and len(question):
            out[i] = float((question @ tokens.T).max(axis=1).mean())
    return out


def weighted_recall(question: np.ndarray, sentences: Sequence[np.ndarray]) -> np.ndarray:
    """`recall`, each of the question's tokens weighted by how far its closest cosine in its best
    sentence stands above its mean over all `sentences` (square root): a token that every
    sentence matches alike (the topic's words that all of them share, the question restated in
    each) says nothing about which one holds it, as a word in every document counts for little
    in idf. Plain recall where there are fewer than two sentences."""
    held = [i for i, tokens in enumerate(sentences) if len(tokens)]
    if len(held) < 2 or not len(question):
        return recall(question, sentences)
    closest = np.stack([(question @ sentences[i].T).max(axis=1) for i in held], axis=1)
    weights = np.sqrt(np.maximum(closest.max(axis=1) - closest.mean(axis=1), 0.0))
    if weights.sum() <= 0:
        return recall(question, sentences)
    out = np.zeros(len(sentences))
    out[held] = (weights / weights.sum()) @ closest
    return out
