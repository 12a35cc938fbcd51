"""Ollama through the official client: list models, size the context, stream a chat.

Every failure becomes a `ModelError` subclass whose message says what to do. The rule for a
stream: a failure before any text arrived raises `LLMUnavailable`, `ModelNotInstalled`,
`LLMTimeout` or `ModelError`; a failure after some text raises `StreamInterrupted`, and the caller
keeps what it received.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence

import httpx
import ollama

from knownote.errors import (
    LLMTimeout,
    LLMUnavailable,
    ModelError,
    ModelNotInstalled,
    StreamInterrupted,
)
from knownote.settings import Settings

EXAMPLE_MODEL = "llama3.2"
MIN_CONTEXT = 2048
ANSWER_ROOM = 1024  # tokens kept free for the answer
_METADATA_TIMEOUT = 5.0  # listing models must not hang the app on an unreachable host

# Scripts where one character is roughly one token (Han, kana, Hangul, full-width forms).
_CJK = re.compile(
    "[\u1100-\u11ff\u3000-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0002fa1f]"
)


def estimate_tokens(text: str) -> int:
    """A generous token estimate: one per CJK character, one per three other characters."""
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 3)


def num_ctx_for(
    messages: Sequence[Mapping[str, str]],
    answer_tokens: int = ANSWER_ROOM,
    limit: int | None = None,
    estimate: Callable[[str], int] = estimate_tokens,
) -> int:
    """Context window for a prompt plus room for the answer: a multiple of 1024, at least 2048,
    at most `limit` (the model's own context length) when known."""
    need = sum(estimate(m["content"]) + 8 for m in messages) + answer_tokens
    size = max(MIN_CONTEXT, math.ceil(need / 1024) * 1024)
    return min(size, limit) if limit else size


def timed_out(model: str, seconds: float) -> LLMTimeout:
    """The error for a model that sent nothing for `seconds`, whichever server it runs on."""
    return LLMTimeout(
        f"The model {model} did not answer within {seconds:g} seconds. A model that is still "
        "loading can be slow the first time: try again, or raise the ollama_timeout setting "
        "(KNOWNOTE_OLLAMA_TIMEOUT)."
    )


class OllamaChat:
    """One Ollama server. Safe to share between threads."""

    def __init__(self, host: str, timeout: float) -> None:
        self.host = host
        self.timeout = timeout
        self._client = ollama.Client(host=host, timeout=timeout)
        self._meta = ollama.Client(host=host, timeout=min(timeout, _METADATA_TIMEOUT))
        self._context_lengths: dict[str, int | None] = {}
        self._lock = threading.Lock()

    # --- messages users read ----------------------------------------------------------------

    def _unavailable(self) -> LLMUnavailable:
        return LLMUnavailable(
            f"No Ollama server answers at {self.host}. Start it with `ollama serve` (and install "
            f"a model with `ollama pull {EXAMPLE_MODEL}`), or set OLLAMA_HOST to its address."
        )

    def _timeout(self, model: str) -> LLMTimeout:
        return timed_out(model, self.timeout)

    def _response_error(self, e: ollama.ResponseError, model: str) -> ModelError:
        if e.status_code == 404:
            return ModelNotInstalled(
                f"The model {model} is not installed on the Ollama server at {self.host}. "
                f"Install it with `ollama pull {model}`, or choose an installed model."
            )
        return ModelError(f"The Ollama server could not answer with {model}: {e.error}")

    # --- calls ------------------------------------------------------------------------------

    def models(self) -> list[str]:
        """Names of the installed models, sorted."""
        try:
            listed = self._meta.list()
        except (ConnectionError, httpx.TransportError) as e:
            raise self._unavailable() from e
        except (ollama.ResponseError, json.JSONDecodeError, ValueError) as e:
            raise LLMUnavailable(
                f"Something answers at {self.host}, but not as an Ollama server does ({e}). "
                "Check OLLAMA_HOST."
            ) from e
        return sorted(m.model for m in listed.models if m.model)

    def context_length(self, model: str) -> int | None:
        """The model's maximum context in tokens, from /api/show; None when not reported."""
        with self._lock:
            if model in self._context_lengths:
                return self._context_lengths[model]
        try:
            info = self._meta.show(model).modelinfo or {}
        except (ConnectionError, httpx.TransportError, ollama.ResponseError, ValueError):
            return None  # the chat call that follows reports the failure properly
        arch = info.get("general.architecture")
        value = info.get(f"{arch}.context_length") if arch else None
        if value is None:
            value = next((v for k, v in info.items() if k.endswith(".context_length")), None)
        length = int(value) if isinstance(value, int | float) and value > 0 else None
        with self._lock:
            self._context_lengths[model] = length
        return length

    def stream(self, model: str, messages: list[dict], num_ctx: int) -> Iterator[str]:
        """Yield the answer's text as it arrives. See the module docstring for failures."""
        received = False
        parts = None
        try:
            parts = self._client.chat(
                model=model, messages=messages, stream=True, options={"num_ctx": num_ctx}
            )
            for part in parts:
                piece = part.message.content or ""
                if piece:
                    received = True
                    yield piece
                if part.done:
                    if part.done_reason == "length":
                        raise StreamInterrupted(
                            f"The answer reached the length limit of {model} and was cut off."
                        )
                    return
            raise StreamInterrupted("The Ollama server closed the answer before it was finished.")
        except ollama.ResponseError as e:
            if received:
                raise StreamInterrupted(f"The model stopped with an error: {e.error}") from e
            raise self._response_error(e, model) from e
        except httpx.ConnectTimeout as e:
            raise self._unavailable() from e
        except httpx.TimeoutException as e:
            if received:
                raise StreamInterrupted(
                    f"The model {model} stopped sending for {self.timeout:g} seconds."
                ) from e
            raise self._timeout(model) from e
        except (ConnectionError, httpx.ConnectError) as e:
            raise self._unavailable() from e
        except (httpx.TransportError, json.JSONDecodeError) as e:
            if received:
                raise StreamInterrupted(
                    f"The connection to the Ollama server at {self.host} dropped mid-answer."
                ) from e
            raise LLMUnavailable(
                f"The connection to the Ollama server at {self.host} failed ({e}). "
                "Check that `ollama serve` is running."
            ) from e
        finally:
            if parts is not None:
                parts.close()

    def complete(self, model: str, messages: list[dict], num_ctx: int) -> str:
        """The whole reply to a short, non-streamed chat."""
        try:
            reply = self._client.chat(
                model=model, messages=messages, stream=False, options={"num_ctx": num_ctx}
            )
        except ollama.ResponseError as e:
            raise self._response_error(e, model) from e
        except httpx.ConnectTimeout as e:
            raise self._unavailable() from e
        except httpx.TimeoutException as e:
            raise self._timeout(model) from e
        except (ConnectionError, httpx.TransportError) as e:
            raise self._unavailable() from e
        return reply.message.content or ""


def connect(settings: Settings) -> tuple[OllamaChat | None, list[str], str | None]:
    """Reach the Ollama server in the settings.

    Returns:
        (client, installed model names, status line for the user). The client is None when no
        server answers; with a server but no models, the client is returned with an empty list
        and a status line saying how to install one. The status is None when all is well.
    """
    client = OllamaChat(settings.ollama_host, settings.ollama_timeout)
    try:
        models = client.models()
    except LLMUnavailable as e:
        return None, [], str(e)
    if not models:
        return (
            client,
            [],
            f"Ollama runs at {settings.ollama_host} but has no models. Install one with "
            f"`ollama pull {EXAMPLE_MODEL}`, then reload.",
        )
    return client, models, None
