"""The errors a user can cause. Each message says what happened and what to do next."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openai import APIStatusError


class KnowNoteError(Exception):
    """Base class: the message is meant to be shown to the user as it is."""


class UnsupportedFile(KnowNoteError):
    """The file is not a format KnowNote can read."""


class UnreadableFile(KnowNoteError):
    """The file is empty, truncated or damaged."""


class PasswordRequired(KnowNoteError):
    """The PDF is encrypted and no password (or a wrong one) was given."""


class NoTextLayer(KnowNoteError):
    """The file has no text to import (for example a scan without OCR)."""


class PageMismatch(KnowNoteError):
    """A PDF page no longer reads as the text stored at import, so it cannot be highlighted."""


class FileTooLarge(KnowNoteError):
    """The file, or what it unpacks to, is over a configured limit."""


class NotFound(KnowNoteError):
    """A notebook, document or chat that does not exist was asked for."""


class DatabaseInUse(KnowNoteError):
    """Another KnowNote process holds the database file."""


class ModelError(KnowNoteError):
    """The embedding or answer model could not be loaded or reached."""


class LLMUnavailable(ModelError):
    """No Ollama server answers at the configured address."""


class ModelNotInstalled(ModelError):
    """The Ollama server does not have the requested model."""


class LLMTimeout(ModelError):
    """The answer model did not respond within the configured time."""


class StreamInterrupted(ModelError):
    """The answer stopped before it was finished; the caller keeps what arrived."""


class DamagedArchive(KnowNoteError):
    """A notebook archive is not one KnowNote wrote, or it was damaged or altered since."""


class DiskFull(KnowNoteError):
    """The disk ran out of space; what was being written was not kept."""


class ExtractionTimeout(UnreadableFile):
    """Reading the file took longer than the time limit (it may be built to hang readers)."""


class ReaderFailed(UnreadableFile):
    """A reader met something in the file that it does not handle: a fault in KnowNote, shown
    as a damaged file (the fuzzer counts it as a fault to mend)."""


class ReaderCrashed(UnreadableFile):
    """The reading process stopped without an answer (a library crashed on the file)."""


class EmbeddingUnavailable(ModelError):
    """The notebook's embedding server cannot embed text right now."""


def error_text(e: APIStatusError) -> str:
    """What the server said in its error body, without the client's wrapping."""
    body = e.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            inner = inner.get("message") or inner.get("detail") or inner
        return str(inner)[:500]
    return str(body or e.message)[:500]


class FetchFailed(KnowNoteError):
    """A web address could not be fetched: not found, an error page, too large or too slow."""


class AddressRefused(FetchFailed):
    """A web address of this machine or a private network, refused unless the setting allows it."""


class NoSpeech(NoTextLayer):
    """A recording in which no words were recognised (silent, music only, or another language)."""


class ModelMissing(ModelError):
    """The speech recognition model is not on this machine."""


class NoVoice(KnowNoteError):
    """No voice on this machine speaks the language an audio overview was asked in."""
