"""Settings in one place, each with a description; read from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"


def _home() -> Path:
    return Path(os.environ.get("KNOWNOTE_HOME") or Path.home() / ".knownote").expanduser()


@dataclass(frozen=True)
class Settings:
    home: Path = field(
        default_factory=_home,
        metadata={"help": "Data folder: the database and the original files (env KNOWNOTE_HOME)."},
    )
    ollama_host: str = field(
        default_factory=lambda: os.environ.get("OLLAMA_HOST") or "http://127.0.0.1:11434",
        metadata={"help": "Address of the Ollama server (env OLLAMA_HOST)."},
    )
    ollama_timeout: float = field(
        default_factory=lambda: float(os.environ.get("KNOWNOTE_OLLAMA_TIMEOUT") or 120.0),
        metadata={
            "help": "Seconds to wait for the answer model's next words before giving up "
            "(env KNOWNOTE_OLLAMA_TIMEOUT)."
        },
    )
    embedding_model: str = field(
        default_factory=lambda: (
            os.environ.get("KNOWNOTE_EMBEDDING_MODEL") or DEFAULT_EMBEDDING_MODEL
        ),
        metadata={"help": "sentence-transformers model name or local path used for new notebooks."},
    )
    passage_size: int = field(
        default=500, metadata={"help": "Target passage length in characters."}
    )
    passage_overlap: int = field(
        default=50, metadata={"help": "Characters shared by consecutive passages."}
    )
    k: int = field(default=8, metadata={"help": "Passages retrieved and shown to the model."})
    max_file_mb: int = field(
        default=200, metadata={"help": "Largest file accepted for import, in MB."}
    )
    max_text_chars: int = field(
        default=20_000_000, metadata={"help": "Largest extracted text accepted, in characters."}
    )
    max_pages: int = field(
        default=5000, metadata={"help": "Most pages (or slides, chapters) per file."}
    )

    ocr_dpi: int = field(
        default_factory=lambda: int(os.environ.get("KNOWNOTE_OCR_DPI") or 200),
        metadata={
            "help": "Resolution at which PDF pages without a text layer are read by OCR "
            "(env KNOWNOTE_OCR_DPI)."
        },
    )
    ocr_threads: int = field(
        default_factory=lambda: int(os.environ.get("KNOWNOTE_OCR_THREADS") or 2),
        metadata={"help": "CPU threads the OCR engine uses (env KNOWNOTE_OCR_THREADS)."},
    )
    max_ocr_pages: int = field(
        default_factory=lambda: int(os.environ.get("KNOWNOTE_MAX_OCR_PAGES") or 200),
        metadata={
            "help": "Most pages (or image frames) read by OCR per file; 0 switches OCR off "
            "(env KNOWNOTE_MAX_OCR_PAGES)."
        },
    )
    max_image_megapixels: int = field(
        default_factory=lambda: int(os.environ.get("KNOWNOTE_MAX_IMAGE_MEGAPIXELS") or 100),
        metadata={
            "help": "Largest image accepted for OCR, in megapixels, checked before decoding "
            "(env KNOWNOTE_MAX_IMAGE_MEGAPIXELS)."
        },
    )

    @property
    def db_path(self) -> Path:
        return self.home / "knownote.duckdb"

    def with_(self, **changes: object) -> Settings:
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise TypeError(f"unknown settings: {', '.join(sorted(unknown))}")
        return replace(self, **changes)
