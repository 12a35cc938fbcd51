"""Every reachable answer server behind the one interface the answer code uses.

Ollama's models keep their plain names; the OpenAI-compatible server's are named
`openai:NAME`, so a saved answer says which server wrote it and one picker can list both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from knownote.answer.ollama_chat import ANSWER_ROOM, OllamaChat, estimate_tokens
from knownote.answer.ollama_chat import connect as connect_ollama
from knownote.answer.openai_chat import PREFIX, OpenAIChat, upper_tokens
from knownote.errors import LLMUnavailable, ModelError, ModelNotInstalled
from knownote.settings import Settings


class AnswerServers:
    """The Ollama server and the OpenAI-compatible one, either of which may be absent."""

    def __init__(self, ollama: OllamaChat | None, openai: OpenAIChat | None) -> None:
        self.ollama = ollama
        self.openai = openai
        self.host = " and ".join(s.host for s in (ollama, openai) if s is not None)
        self.answer_room = ANSWER_ROOM

    def _server(self, model: str) -> tuple[OllamaChat | OpenAIChat, str]:
        if model.startswith(PREFIX):
            if self.openai is None:
                raise LLMUnavailable(
                    f"The model {model} is on an OpenAI-compatible server, and none is set up or "
                    "answering. Set KNOWNOTE_OPENAI_BASE_URL, or choose another model."
                )
            return self.openai, model.removeprefix(PREFIX)
        if self.ollama is None:
            raise ModelNotInstalled(
                f"No Ollama server answers, so the model {model} cannot be used. Start Ollama, "
                f"or choose a model of the OpenAI-compatible server ({PREFIX}NAME)."
            )
        return self.ollama, model

    def room(self, model: str) -> int:
        """Tokens to keep free for the answer with this model."""
        if model.startswith(PREFIX) and self.openai is not None:
            return self.openai.answer_room
        return ANSWER_ROOM

    def estimator(self, model: str) -> Callable[[str], int]:
        """How prompts are counted for this model: Ollama cuts a prompt that is too long, an
        OpenAI-compatible server may fail on it, so those prompts are counted generously."""
        return upper_tokens if model.startswith(PREFIX) else estimate_tokens

    def label(self, model: str) -> str:
        """The model with the server it runs on, for the picker."""
        if model.startswith(PREFIX):
            return f"{model.removeprefix(PREFIX)} · OpenAI-compatible server"
        return f"{model} · Ollama"

    def context_length(self, model: str) -> int | None:
        try:
            server, name = self._server(model)
        except (LLMUnavailable, ModelNotInstalled):
            return None  # the chat call that follows reports it
        return server.context_length(name)

    def stream(self, model: str, messages: list[dict], num_ctx: int) -> Iterator[str]:
        server, name = self._server(model)
        return server.stream(name, messages, num_ctx)

    def complete(self, model: str, messages: list[dict], num_ctx: int) -> str:
        server, name = self._server(model)
        return server.complete(name, messages, num_ctx)


def resolve_model(name: str | None, models: list[str]) -> str | None:
    """The listed model a person meant by `name` (None: the first listed, or None). A bare name
    that only the OpenAI-compatible server lists is that server's model. Raises ModelError when
    both servers list it."""
    if not name:
        return models[0] if models else None
    if name.startswith(PREFIX) or PREFIX + name not in models:
        return name
    if name in models:
        raise ModelError(
            f"Both Ollama and the OpenAI-compatible server list {name}. Choose {name} for "
            f"Ollama's, or {PREFIX}{name} for the other server's."
        )
    return PREFIX + name


def connect(settings: Settings) -> tuple[AnswerServers | None, list[str], str | None]:
    """Reach every configured answer server, as `ollama_chat.connect` does for Ollama.

    Returns:
        (servers, model names, status line). The servers are None when none answers. Models of
        the OpenAI-compatible server carry the `openai:` prefix. The status says what is wrong
        (no model can be used, or one of the servers is down) and is None when all is well.
    """
    ollama, models, status = connect_ollama(settings)
    if not settings.openai_base_url:
        return (AnswerServers(ollama, None) if ollama else None), models, status
    other = OpenAIChat.from_settings(settings)
    try:
        models = models + [PREFIX + name for name in other.models()]
    except LLMUnavailable as e:
        if ollama is None:
            return None, [], f"{status} {e}"
        return AnswerServers(ollama, None), models, str(e)  # Ollama's models stay usable
    if not models:
        return (
            AnswerServers(ollama, other),
            [],
            (f"The server at {other.host} lists no models. Load one there, then reload."),
        )
    return AnswerServers(ollama, other), models, None
