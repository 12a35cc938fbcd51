"""An OpenAI-compatible answer server through the official `openai` client.

llama.cpp's llama-server, LM Studio, vLLM, LocalAI and Ollama's `/v1` all speak this API. The
client has the same interface and the same failure rule as
`knownote.answer.ollama_chat.OllamaChat`: a failure before any text arrived raises
`LLMUnavailable`, `ModelNotInstalled`, `LLMTimeout` or `ModelError`; a failure after some text
raises `StreamInterrupted`, and the caller keeps what it received. The API key goes to that
server only: it is never part of a message, a log line or anything stored.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import httpx
import httpx2

from knownote.answer.ollama_chat import MIN_CONTEXT, timed_out
from knownote.errors import (
    LLMTimeout,
    LLMUnavailable,
    ModelError,
    ModelNotInstalled,
    StreamInterrupted,
    error_text,
)
from knownote.settings import Settings

# `openai` is imported by the methods that use it: 0.7 s that the app's start need not pay.
if TYPE_CHECKING:
    import openai

PREFIX = "openai:"  # how the answer code names this server's models beside Ollama's
_METADATA_TIMEOUT = 5.0
MIN_ANSWER_TOKENS = 64
# Fields in which servers report a model's context size in /v1/models (vLLM, LM Studio, others).
_CONTEXT_FIELDS = ("max_model_len", "context_length", "max_context_length", "context_window")


def upper_tokens(text: str) -> int:
    """A token count no tokenizer exceeds in practice: a third of the ASCII characters, and every
    UTF-8 byte of the others (a byte-level tokenizer built for English spends up to three tokens
    on a Chinese character, and these servers fail, rather than truncate, when the prompt is too
    long)."""
    ascii_chars = sum(1 for c in text if c < "\x80")
    other = len(text.encode("utf-8")) - ascii_chars
    return -(-ascii_chars // 3) + other


class OpenAIChat:
    """One OpenAI-compatible server. Safe to share between threads."""

    def __init__(
        self,
        base_url: str,
        api_key: str = "",
        timeout: float = 120.0,
        context: int = 0,
        max_tokens: int = 1024,
    ) -> None:
        import openai

        self.host = base_url.rstrip("/")
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.answer_room = max_tokens
        self._context = context
        key = api_key or "none"  # the client insists on a key; local servers ignore it
        self._client = openai.OpenAI(
            base_url=self.host,
            api_key=key,
            # openai 3's transport is httpx2: its timeouts are httpx2's (openai.Timeout).
            timeout=openai.Timeout(timeout, connect=min(timeout, _METADATA_TIMEOUT)),
            max_retries=0,  # a retry would hide a server that is down behind minutes of waiting
        )
        self._meta = self._client.with_options(timeout=min(timeout, _METADATA_TIMEOUT))
        self._listed: dict[str, dict] = {}
        self._context_lengths: dict[str, int | None] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIChat:
        return cls(
            settings.openai_base_url,
            settings.openai_api_key,
            settings.ollama_timeout,
            settings.openai_context,
            settings.max_answer_tokens,
        )

    # --- messages users read ----------------------------------------------------------------

    def _unavailable(self, detail: str = "") -> LLMUnavailable:
        return LLMUnavailable(
            f"No OpenAI-compatible server answers at {self.host}{detail}. Start it (for example "
            "`llama-server -m MODEL.gguf`) or set KNOWNOTE_OPENAI_BASE_URL to its address, "
            "ending in /v1."
        )

    def _timeout(self, model: str) -> LLMTimeout:
        return timed_out(model, self.timeout)

    def _status_error(self, e: openai.APIStatusError, model: str) -> ModelError:
        said = error_text(e)
        if e.status_code == 404 or (e.status_code == 400 and "model" in said.lower()):
            return ModelNotInstalled(
                f"The server at {self.host} has no model {model} ({said}). Choose one of the "
                "models it lists."
            )
        if e.status_code in (401, 403):
            return ModelError(
                f"The server at {self.host} refused the request ({e.status_code}: {said}). "
                "Check KNOWNOTE_OPENAI_API_KEY."
            )
        return ModelError(
            f"The server at {self.host} could not answer with {model} ({e.status_code}: {said})."
        )

    # --- calls ------------------------------------------------------------------------------

    def models(self) -> list[str]:
        """Names of the served models, sorted."""
        import openai

        try:
            listed = list(self._meta.models.list())
        except openai.APITimeoutError as e:
            raise LLMUnavailable(
                f"The server at {self.host} did not list its models within "
                f"{_METADATA_TIMEOUT:g} seconds: it may be busy with another answer (some "
                "servers answer one request at a time). Try again in a moment."
            ) from e
        except openai.APIConnectionError as e:
            raise self._unavailable() from e
        except openai.APIStatusError as e:
            raise LLMUnavailable(
                f"The server at {self.host} did not list its models ({e.status_code}: "
                f"{error_text(e)}). Check KNOWNOTE_OPENAI_BASE_URL (it usually ends in /v1) and "
                "KNOWNOTE_OPENAI_API_KEY."
            ) from e
        except (ValueError, TypeError, openai.APIResponseValidationError) as e:
            raise LLMUnavailable(
                f"Something answers at {self.host}, but not as an OpenAI-compatible server does "
                f"({type(e).__name__}). Check KNOWNOTE_OPENAI_BASE_URL."
            ) from e
        with self._lock:
            self._listed = {m.id: m.model_dump() for m in listed if m.id}
            return sorted(self._listed)

    def context_length(self, model: str) -> int:
        """The context size in tokens: the setting, else what the server reports (its model
        list, or llama.cpp's /props), else 2048, which any server offers."""
        if self._context > 0:
            return self._context
        with self._lock:
            if model in self._context_lengths:
                return self._context_lengths[model] or MIN_CONTEXT
            entry = self._listed.get(model, {})
        found = (
            next(
                (int(entry[f]) for f in _CONTEXT_FIELDS if isinstance(entry.get(f), int | float)),
                None,
            )
            or self._props_context()
        )
        with self._lock:
            self._context_lengths[model] = found
        return found or MIN_CONTEXT

    def _props_context(self) -> int | None:
        """llama.cpp's llama-server reports the context it was started with at /props."""
        root = self.host.removesuffix("/v1")
        try:
            reply = httpx.get(f"{root}/props", timeout=_METADATA_TIMEOUT)
            props = reply.json() if reply.status_code == 200 else {}
        except (httpx.HTTPError, ValueError):
            return None
        settings = props.get("default_generation_settings") if isinstance(props, dict) else None
        for value in (
            settings.get("n_ctx") if isinstance(settings, dict) else None,
            props.get("n_ctx") if isinstance(props, dict) else None,
        ):
            if isinstance(value, int) and value > 0:
                return value
        return None

    def _answer_tokens(self, messages: Sequence[Mapping[str, str]], num_ctx: int) -> int:
        """Room left for the answer in the context, at most the max_answer_tokens setting."""
        prompt = sum(upper_tokens(m["content"]) + 8 for m in messages)
        return max(MIN_ANSWER_TOKENS, min(self.max_tokens, num_ctx - prompt))

    def stream(self, model: str, messages: list[dict], num_ctx: int) -> Iterator[str]:
        """Yield the answer's text as it arrives. See the module docstring for failures."""
        import openai

        received = False
        parts = None
        try:
            parts = self._client.chat.completions.create(
                model=model,
                messages=messages,
                stream=True,
                max_tokens=self._answer_tokens(messages, num_ctx),
            )
            for part in parts:
                choice = part.choices[0] if part.choices else None
                if choice is None:
                    continue
                piece = (choice.delta.content if choice.delta else None) or ""
                if piece:
                    received = True
                    yield piece
                if choice.finish_reason:
                    if choice.finish_reason == "length":
                        raise StreamInterrupted(
                            f"The answer reached the length limit of {model} and was cut off."
                        )
                    return
            if received:  # the body ended without a finish reason
                raise self._dropped()
            raise ModelError(
                f"The server at {self.host} closed the answer before it began (a server that "
                "answers one request at a time may drop an answer when another request arrives)."
            )
        except openai.APITimeoutError as e:
            if received:
                raise StreamInterrupted(
                    f"The model {model} stopped sending for {self.timeout:g} seconds."
                ) from e
            raise self._timeout(model) from e
        except openai.APIConnectionError as e:
            if received:
                raise self._dropped() from e
            raise self._unavailable() from e
        except openai.APIStatusError as e:
            raise self._status_error(e, model) from e
        except openai.APIError as e:  # an error event inside the stream
            if received:
                raise StreamInterrupted(f"The model stopped with an error: {e.message}") from e
            raise ModelError(f"The server at {self.host} failed to answer: {e.message}") from e
        except httpx2.TimeoutException as e:
            if received:
                raise StreamInterrupted(
                    f"The model {model} stopped sending for {self.timeout:g} seconds."
                ) from e
            raise self._timeout(model) from e
        except (httpx2.TransportError, ValueError) as e:  # dropped, or garbled, mid-stream
            if received:
                raise self._dropped() from e
            raise self._unavailable(f" as it should ({type(e).__name__})") from e
        finally:
            if parts is not None:
                parts.close()

    def _dropped(self) -> StreamInterrupted:
        return StreamInterrupted(f"The connection to the server at {self.host} dropped mid-answer.")

    def complete(self, model: str, messages: list[dict], num_ctx: int) -> str:
        """The whole reply to a short, non-streamed chat."""
        import openai

        try:
            reply = self._client.chat.completions.create(
                model=model,
                messages=messages,
                stream=False,
                max_tokens=min(256, self._answer_tokens(messages, num_ctx)),
            )
        except openai.APITimeoutError as e:
            raise self._timeout(model) from e
        except openai.APIConnectionError as e:
            raise self._unavailable() from e
        except openai.APIStatusError as e:
            raise self._status_error(e, model) from e
        except (httpx2.TransportError, ValueError) as e:
            raise self._unavailable(f" as it should ({type(e).__name__})") from e
        if not reply.choices:
            return ""
        return reply.choices[0].message.content or ""
