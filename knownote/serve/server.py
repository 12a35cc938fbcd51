"""The MCP server: KnowNote's tools and range resources for desktop clients and agents.

Built with the official SDK's `MCPServer`; each tool's description says what it returns and how
its ranges resolve, and its parameters' descriptions make the JSON schema. Errors a client can
cause come back as tool errors (or resource errors) in words; the server keeps serving.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from knownote.answer.ranges import READ_LIMIT
from knownote.errors import KnowNoteError, NotFound
from knownote.serve import tools
from knownote.settings import Settings
from knownote.store.db import Store

T = TypeVar("T")

INSTRUCTIONS = (
    "KnowNote holds the user's notebooks of documents (PDFs, Word, web pages saved as files, "
    "notes). Every passage, hit, citation and support span is a range [start, end) of a "
    "source's stored text: text[start:end] is exactly the quoted text. Quote from these "
    "ranges, and give the user the `link` of each one you rely on: it opens the range "
    "highlighted in the KnowNote app. Start with list_notebooks, then search or ask; read the "
    "text around a hit to quote more context."
)

Notebook = Annotated[
    str, Field(description="The notebook's name as list_notebooks gives it (or its id).")
]
Asked = Annotated[
    str,
    Field(
        description="The notebook's name as list_notebooks gives it (or its id); “all” asks "
        "every notebook in the library (in_library), or name several separated by commas. "
        "Across notebooks each hit and citation names its `notebook`."
    ),
]
Question = Annotated[str, Field(description="The question or keywords, in any language.")]
K = Annotated[
    int, Field(description="How many passages to return (1 to 50).", ge=1, le=tools.MAX_K)
]
Sources = Annotated[
    list[int] | None,
    Field(description="Only these sources (ids from list_sources); leave out for all."),
]

SEARCH = (
    "Find the passages of a notebook that match a question: the best first, each with its "
    "source (document_id, title), pages (page_start, page_end; null for formats without "
    "pages), section, start and end (the range of the source's stored text: text[start:end] "
    "is `text` exactly), score (comparable within one search only), `link` (opens the range "
    "highlighted in the KnowNote app) and `uri` (a knownote:// resource that reads it back)."
)
ASK = (
    "Answer a question from a notebook's sources with citations, as the KnowNote app does, and "
    "save it as a chat there. With an answer model (Ollama or an OpenAI-compatible server) the "
    "answer is written, each sentence marked [n] with the passages it used; with quoted=true, "
    "or when no model is reachable, it is sentences quoted from the passages (`notice` says "
    "why). Returns the answer text, `citations` (the cited passages with their ranges), "
    "`passages` (all put in front of the model), and `supports`: for each answer sentence the "
    "range of the passage it leans on most (weak=true: nothing came close). Every range has "
    "start and end into the source's stored text, a `link` that opens it highlighted in the "
    "app, and a knownote:// `uri`. A citation says what the answer had in front of it, not "
    "that a sentence is proven."
)
READ = (
    "Read a range of a source's stored text: characters [start, end), at most "
    f"{READ_LIMIT:,} at a time, e.g. a few hundred characters around a hit to quote its "
    "context. Returns the text, the source's total `length`, the pages the range lies on, "
    "`seconds` (a recording: [start, end] of when it was said; null for other sources), a "
    "`link` that opens it highlighted in the KnowNote app and its knownote:// `uri`."
)
AUDIO = (
    "Make an audio overview of a notebook (or of chosen sources) on this computer and keep it "
    "in the notebook, where the app plays it. With an answer model it is a conversation "
    "(format deep-dive or debate: two hosts; brief: one) written from the sources, each line "
    "marked [n] with the ranges it was written from; without a model (or with format "
    "read-aloud) it is a read-aloud brief of the sources' central sentences, quoted. It can take "
    "minutes. Returns each line's text, speaker (0 or 1), start_s and end_s (seconds into the "
    "audio) and `cites` (document_id, start, end, quote, page, `link`, `uri`), the overview's "
    "id, `audio` (where the audio file was written, when `out` was given) and `notes`."
)


def in_words(call: Callable[[], T]) -> T:
    """Run a tool; an error the client caused becomes a tool error carrying its message."""
    try:
        return call()
    except KnowNoteError as e:
        raise ToolError(str(e)) from None


def build_server(store: Store, settings: Settings, *, allow_writes: bool = False) -> MCPServer:
    """The MCP server over an open store; `allow_writes` adds the tools that change it."""
    server = MCPServer("KnowNote", instructions=INSTRUCTIONS)
    reading = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(
        description="List the notebooks: id, name, how many sources and passages each holds.",
        annotations=reading,
    )
    def list_notebooks() -> dict[str, object]:
        return in_words(lambda: tools.list_notebooks(store))

    @server.tool(
        description="List a notebook's sources: id (for search, read and links), title, file "
        "name, kind (pdf, docx, html, md, ...), pages, languages, passages, characters, and "
        "whether it is used in answers.",
        annotations=reading,
    )
    def list_sources(notebook: Notebook) -> dict[str, object]:
        return in_words(lambda: tools.list_sources(store, notebook))

    @server.tool(description=SEARCH, annotations=reading)
    def search(
        notebook: Asked,
        question: Question,
        k: K = 8,
        mode: Annotated[
            Literal["hybrid", "vector", "keyword"],
            Field(description="hybrid: meaning and keywords; vector: meaning; keyword: words."),
        ] = "hybrid",
        sources: Sources = None,
    ) -> dict[str, object]:
        return in_words(
            lambda: tools.search(
                store, settings, notebook, question, k=k, mode=mode, sources=sources
            )
        )

    @server.tool(description=ASK, annotations=ToolAnnotations(open_world_hint=False))
    def ask(
        notebook: Asked,
        question: Question,
        model: Annotated[
            str | None,
            Field(description="The answer model as the server lists it; leave out for the first."),
        ] = None,
        quoted: Annotated[
            bool, Field(description="Quote the passages instead of asking a model.")
        ] = False,
        k: K = 8,
        sources: Sources = None,
        chat: Annotated[
            int | None, Field(description="Continue this chat (its chat_id): a follow-up.")
        ] = None,
    ) -> dict[str, object]:
        return in_words(
            lambda: tools.ask(
                store,
                settings,
                notebook,
                question,
                model=model,
                quoted=quoted,
                k=k,
                sources=sources,
                chat=chat,
            )
        )

    @server.tool(description=READ, annotations=reading)
    def read(
        notebook: Notebook,
        source: Annotated[int, Field(description="The source's id (list_sources, a hit).")],
        start: Annotated[int, Field(description="First character, counted from 0.", ge=0)],
        end: Annotated[int, Field(description="One past the last character.", ge=0)],
    ) -> dict[str, object]:
        return in_words(lambda: tools.read(store, settings, notebook, source, start, end))

    @server.resource(
        "knownote://{notebook}/{document}#{start}-{end}",
        name="range",
        description="Characters [start, end) of a source's stored text (at most "
        f"{READ_LIMIT:,}), as search hits, citations and support spans give them.",
        mime_type="text/plain",
    )
    def read_resource(notebook: str, document: str, start: str, end: str) -> str:
        try:
            numbers = [int(document), int(start), int(end)]
        except ValueError:
            raise ResourceNotFoundError(
                "A range's address is knownote://NOTEBOOK/SOURCE#START-END, SOURCE, START and "
                "END numbers."
            ) from None
        try:
            return tools.read(store, settings, notebook, *numbers)["text"]
        except NotFound as e:
            raise ResourceNotFoundError(str(e)) from None
        except KnowNoteError as e:
            raise ResourceError(str(e)) from None

    if allow_writes:
        writing = ToolAnnotations(read_only_hint=False, destructive_hint=False)

        @server.tool(
            description="Add a file on this computer to a notebook as a source (PDF, Word, "
            "PowerPoint, EPUB, HTML, Markdown, text, images): it is read, split into passages "
            "and indexed before this returns. Give its absolute path. Web addresses are not "
            "supported yet. Returns the status (imported, duplicate or failed, with the error "
            "in words), the new source's id and its pages, passages and characters.",
            annotations=writing,
        )
        def add_source(
            notebook: Notebook,
            path: Annotated[str, Field(description="The file's absolute path.")],
        ) -> dict[str, object]:
            return in_words(lambda: tools.add_source(store, settings, notebook, path))

        @server.tool(
            description="Save a note (Markdown) in a notebook, where the app shows it under "
            "Notes. Returns its note_id.",
            annotations=writing,
        )
        def save_note(
            notebook: Notebook,
            title: Annotated[str, Field(description="The note's title; empty: its first line.")],
            body: Annotated[str, Field(description="The note's text, in Markdown.")],
        ) -> dict[str, object]:
            return in_words(lambda: tools.save_note(store, notebook, title, body))

        @server.tool(description=AUDIO, annotations=writing)
        def make_audio_overview(
            notebook: Notebook,
            format: Annotated[
                Literal["brief", "deep-dive", "debate", "read-aloud"] | None,
                Field(description="Leave out: deep-dive with a model named, else read-aloud."),
            ] = None,
            model: Annotated[
                str | None,
                Field(
                    description="The answer model as the server lists it; leave out for the "
                    "first (a written format) or none (read-aloud)."
                ),
            ] = None,
            focus: Annotated[str, Field(description="What the hosts should dwell on.")] = "",
            length: Annotated[
                Literal["short", "default", "long"],
                Field(description="About 2, 5 or 10 minutes."),
            ] = "default",
            language: Annotated[
                str | None,
                Field(description="A language code (en, ja, …); leave out for the sources'."),
            ] = None,
            sources: Sources = None,
            out: Annotated[
                str | None,
                Field(
                    description="An absolute path to write the audio at too (.ogg, .opus, "
                    ".mp3 or .wav)."
                ),
            ] = None,
        ) -> dict[str, object]:
            return in_words(
                lambda: tools.make_audio_overview(
                    store, settings, notebook, out=out, format=format, model=model, focus=focus,
                    length=length, language=language, sources=sources,
                )
            )  # fmt: skip

    return server


def serve_stdio(server: MCPServer) -> None:
    """Serve over stdin and stdout until the client closes them (a desktop client's way)."""
    server.run("stdio")
