"""KnowNote in the browser: notebooks, sources, questions, and each answer beside its passages.

Layout and widgets only (the views are in `knownote/ui/`). Every action calls one `knownote`
function; no SQL and no prompt is written here. Run with `streamlit run app.py`.
"""

from __future__ import annotations

import math
import os
import time

import streamlit as st

from knownote.access import GUESSES, expected_password, password_matches
from knownote.answer.ollama_chat import EXAMPLE_MODEL
from knownote.answer.servers import AnswerServers, connect
from knownote.errors import KnowNoteError, NotFound
from knownote.index.embed import Embedder
from knownote.index.embedders import get_embedder
from knownote.notebooks import delete_notebook
from knownote.pipeline.worker import ImportWorker
from knownote.search.retrieve import MODES
from knownote.serve.background import Serving, serve_in_background
from knownote.settings import Settings
from knownote.show.excerpt import STYLE, escape_markdown
from knownote.store.db import Notebook, Store
from knownote.store.jobs import JobQueue
from knownote.ui.archive import archive_sidebar
from knownote.ui.common import ALREADY_DELETED, ask_before_deleting, set_confirm
from knownote.ui.download import deliver
from knownote.ui.opened import follow_link, opened_range
from knownote.ui.uploads import admit_uploads, guard_uploads

st.set_page_config(page_title="KnowNote", page_icon="📓", layout="wide")

BASE = Settings()
MODE_LABELS = {
    "hybrid": "Hybrid (meaning + keywords)",
    "vector": "Meaning only",
    "keyword": "Keywords only",
}


@st.cache_resource(show_spinner="Opening the database (one an older KnowNote wrote is upgraded)")
def open_store(path: str) -> Store:
    """One store (one DuckDB connection) per database file and process."""
    return Store.open(path)


@st.cache_resource(show_spinner=False)
def cached_embedder(name: str) -> Embedder:
    """The embedder object; its model loads only when an import or a question first needs it."""
    return get_embedder(name)


@st.cache_resource(show_spinner=False)
def import_worker(path: str) -> ImportWorker:
    """The one import worker of this process (DuckDB has one writer); it starts with the app."""
    return ImportWorker(JobQueue(open_store(path)), BASE, cached_embedder).start()


@st.cache_resource(show_spinner=False)
def mcp_server(path: str, _password: str | None) -> Serving:
    """The app's MCP server for assistants, started once per process over the app's own store:
    while the app holds the database no other process can open it (`knownote mcp` relays here)."""
    return serve_in_background(open_store(path), with_secrets(BASE), _password)


def start_mcp() -> Serving | None:
    """Before the password form: the server asks each request for the password itself. A
    database that cannot be opened is said after sign-in, where the store is opened again."""
    try:
        return mcp_server(str(BASE.db_path), expected_password(os.environ, app_secrets()))
    except KnowNoteError:
        return None


def mcp_status(serving: Serving | None) -> None:
    """Where assistants reach this app over MCP, or in words why they cannot."""
    if serving is None:
        return
    if serving.url is None:
        if serving.problem:
            st.caption(serving.problem)
        return
    with st.expander("Assistants (MCP)"):
        st.caption(
            f"Assistants and desktop clients reach this notebook over MCP at `{serving.url}`."
            + (" The app's password is the bearer token." if serving.password else "")
            + (
                " They may add sources and save notes."
                if serving.writes
                else " They may read only (KNOWNOTE_MCP_ALLOW_WRITES=1 lets them write)."
            )
            + " A client configured with `knownote mcp` is relayed here while the app runs."
        )


@st.cache_resource(ttl=60, show_spinner=False)
def ollama(
    host: str, _settings: Settings, base_url: str = ""
) -> tuple[AnswerServers | None, list[str], str | None]:
    """The answer model servers, looked up at most once a minute (or on "Check again")."""
    return connect(_settings)


def with_secrets(settings: Settings) -> Settings:
    """The OpenAI-compatible server's address and key may come from Streamlit secrets too."""
    secrets = app_secrets()
    changes = {
        name: str(secrets[key])
        for key, name in (
            ("KNOWNOTE_OPENAI_BASE_URL", "openai_base_url"),
            ("KNOWNOTE_OPENAI_API_KEY", "openai_api_key"),
        )
        if not getattr(settings, name) and secrets.get(key)
    }
    return settings.with_(**changes) if changes else settings


def app_secrets() -> dict[str, object]:
    if not st.secrets.load_if_toml_exists():
        return {}
    return {key: st.secrets[key] for key in st.secrets}


def password_gate() -> None:
    """Stop here until the visitor gives the password, when one is set."""
    guard_uploads(BASE)  # once per process: who may upload, and how much memory uploads take
    expected = expected_password(os.environ, app_secrets())
    if expected is None or st.session_state.get("signed_in"):
        admit_uploads()  # a session that has not signed in may upload nothing
        return
    st.title("KnowNote")
    with st.form("sign_in"):
        given = st.text_input("Password", type="password", key="password")
        submitted = st.form_submit_button("Open")
    if submitted:
        address = st.context.ip_address
        address = address if isinstance(address, str) and address else "unknown"
        waiting = GUESSES.wait(address)
        if waiting > 0:
            st.error(
                f"Too many wrong passwords from your address: try again in {math.ceil(waiting)} s."
            )
            st.stop()
        if password_matches(given, expected):
            GUESSES.succeeded(address)
            st.session_state["signed_in"] = True
            st.rerun()
        time.sleep(1)  # slows down guessing
        GUESSES.failed(address)  # the wait it earns starts when the answer goes out
        st.error("That password is not right.")
    st.stop()


def flash() -> None:
    """Show (once) the message an action left for the next run."""
    message = st.session_state.pop("flash", None)
    if message:
        kind, text = message
        {"error": st.error, "success": st.success, "info": st.info}[kind](text)


def notebook_sidebar(store: Store, settings: Settings) -> Notebook | None:
    """Pick, create, rename and delete notebooks."""
    notebooks = {n.id: n for n in store.notebooks()}
    if "pending_notebook" in st.session_state:
        st.session_state["notebook"] = st.session_state.pop("pending_notebook")
    if st.session_state.get("notebook") not in notebooks:
        st.session_state["notebook"] = next(iter(notebooks), None)

    st.title("KnowNote")
    if notebooks:
        st.selectbox(
            "Notebook",
            list(notebooks),
            key="notebook",
            format_func=lambda i: notebooks[i].name,
        )
    current = notebooks.get(st.session_state.get("notebook"))

    with st.expander("New notebook", expanded=not notebooks):
        st.text_input("Name", key="new_notebook_name", placeholder="e.g. Thesis reading")
        st.button(
            "Create notebook",
            key="create_notebook",
            on_click=create_notebook,
            args=(store, settings),
        )

    if current is not None:
        with st.expander("Rename or delete"):
            st.text_input("New name", key="rename_to", placeholder=current.name)
            st.button(
                "Rename", key="rename_notebook", on_click=rename_notebook, args=(store, current)
            )
            ask_before_deleting(
                st,
                ("notebook", current.id),
                key="notebook",
                label="Delete notebook…",
                warning=f"Delete this notebook with its {current.documents} sources and all its "
                "chats? This cannot be undone.",
                on_delete=remove_notebook,
                args=(store, current),
                narrow=True,
            )
    archive_sidebar(store, settings, current)
    return current


def create_notebook(store: Store, settings: Settings) -> None:
    name = st.session_state.get("new_notebook_name", "").strip()
    if not name:
        st.session_state["flash"] = ("error", "Give the new notebook a name.")
        return
    if store.notebook_by_name(name) is not None:
        shown = escape_markdown(name)  # flash messages are Markdown; names show as typed
        st.session_state["flash"] = ("error", f"A notebook called “{shown}” already exists.")
        return
    try:
        with st.spinner("Loading the embedding model…"):
            notebook = store.create_notebook(
                name, settings.embedding_model, cached_embedder(settings.embedding_model).dim
            )
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))
        return
    st.session_state["pending_notebook"] = notebook.id
    st.session_state["new_notebook_name"] = ""
    st.session_state["view"] = "Sources"


def rename_notebook(store: Store, notebook: Notebook) -> None:
    try:
        store.rename_notebook(notebook.id, st.session_state.get("rename_to", ""))
    except KnowNoteError as e:
        st.session_state["flash"] = ("error", escape_markdown(str(e)))
        return
    st.session_state["rename_to"] = ""


def remove_notebook(store: Store, notebook: Notebook) -> None:
    set_confirm(None)
    try:
        delete_notebook(store, notebook.id)
    except NotFound:  # deleted meanwhile, in another window
        st.session_state["flash"] = ("info", ALREADY_DELETED.format(what="notebook"))
        return
    import_worker(str(BASE.db_path)).queue.forget_notebook(notebook.id)
    shown = escape_markdown(notebook.name)
    st.session_state["flash"] = ("info", f"Deleted the notebook “{shown}”.")


def model_sidebar(settings: Settings) -> tuple[AnswerServers | None, str | None]:
    """The answer model: a picker when a server answers, else how to start one."""
    st.subheader("Answer model", anchor=False)
    settings = with_secrets(settings)
    client, models, status = ollama(settings.ollama_host, settings, settings.openai_base_url)
    if client is not None and models:
        label = "Ollama model" if client.openai is None else "Model"
        model = st.selectbox(label, models, key="model", format_func=client.label)
        st.caption(f"Connected to {client.host}")  # addresses only: the key is never shown
        if status:
            st.caption(status)
        return client, model
    if client is None:
        st.write("Not connected: answering with quoted passages")
        st.caption(f"Start Ollama with `ollama serve` and `ollama pull {EXAMPLE_MODEL}`")
    else:
        st.write("Connected, but no models are installed: answering with quoted passages")
        st.caption(status or "")
    st.button("Check again", key="check_ollama", on_click=ollama.clear)
    return client, None  # a server without models: the answer says to pull one


def settings_sidebar() -> tuple[Settings, str]:
    """The settings for this session, and the retrieval mode."""
    with st.expander("Settings"):
        mode = st.selectbox(
            "Retrieval", MODES, key="mode", format_func=lambda m: MODE_LABELS.get(m, m)
        )
        k = st.slider("Passages per answer", 1, 20, BASE.k, key="k")
        size = st.number_input(
            "Passage size for new imports (characters)",
            min_value=200,
            max_value=4000,
            value=BASE.passage_size,
            step=50,
            key="passage_size",
        )
        model = st.text_input(
            "Embedding model for new notebooks",
            value=BASE.embedding_model,
            key="embedding_model",
            help="A sentence-transformers model name or folder, or a model on a server: "
            "ollama:NAME or openai:NAME. Each notebook keeps the model it was created with.",
        )
        translate = st.toggle(
            "Also search translated questions",
            value=BASE.translate_questions,
            key="translate_questions",
            help="With an answer model: a question is also searched translated into the other "
            "languages of the notebook's sources (shown under the answer).",
        )
    settings = BASE.with_(
        k=int(k),
        passage_size=int(size),
        embedding_model=model.strip() or BASE.embedding_model,
        translate_questions=translate,
    )
    return settings, mode


def main() -> None:
    serving = start_mcp()
    password_gate()
    st.html(STYLE)
    try:
        store = open_store(str(BASE.db_path))
        worker = import_worker(str(BASE.db_path))
    except KnowNoteError as e:
        st.error(str(e))
        st.stop()

    link = follow_link(store)  # before the sidebar: a link chooses its notebook
    # Filled out of order: the settings are read before the notebooks use them.
    notebooks_box, model_box, settings_box = (st.sidebar.container() for _ in range(3))
    with settings_box:
        settings, mode = settings_sidebar()
        mcp_status(serving)
    with notebooks_box:
        notebook = notebook_sidebar(store, settings)
    with model_box:
        st.divider()
        llm, model = model_sidebar(settings)

    flash()
    deliver()  # a file a button prepared in this run, to this session's page only
    if notebook is None:
        if link is not None:
            opened_range(store, notebook, link)
        st.header("Welcome", anchor=False)
        st.write(
            "Ask questions of your own documents. Every answer is shown beside the passages "
            "it was built from, highlighted in the extracted text."
        )
        st.info("Create a notebook in the sidebar to begin.")
        return

    st.header(escape_markdown(notebook.name), anchor=False)
    if link is not None:
        opened_range(store, notebook, link)
    st.session_state.setdefault("view", "Chat" if notebook.documents else "Sources")
    view = st.radio(
        "View",
        ["Chat", "Sources", "Notes", "Overview", "Study", "Mind map"],
        key="view",
        horizontal=True,
        label_visibility="collapsed",
    )
    # The views import the extraction and answer libraries; the first paint does not wait.
    if view == "Sources":
        from knownote.ui.sources import sources_view

        sources_view(store, notebook, settings, worker, (llm, model) if llm and model else None)
    elif view == "Overview":
        from knownote.ui.overview import overview_view

        overview_view(
            store, notebook, lambda: cached_embedder(notebook.embedding_model), llm, model, worker
        )
    elif view == "Mind map":
        from knownote.ui.mindmap import mind_map_view

        mind_map_view(store, notebook, llm, model, worker, settings.app_url)
    elif view == "Study":
        from knownote.ui.study import study_view

        study_view(store, notebook, settings.app_url, worker, llm, model)
    elif view == "Notes":
        from knownote.ui.notes import notes_view

        notes_view(store, notebook, settings, worker)
    else:
        from knownote.ui.chat import chat_view

        chat_view(
            store,
            notebook,
            settings,
            embedder=lambda: cached_embedder(notebook.embedding_model),
            llm=llm,
            model=model,
            mode=mode,
        )


main()
