"""A model's mind map: only what cites the passages it was given is kept, with exact ranges."""

from __future__ import annotations

import pytest

from knownote.answer.ollama_chat import OllamaChat
from knownote.errors import ModelError
from knownote.notebooks import delete_notebook
from knownote.pipeline.worker import ImportWorker
from knownote.settings import Settings
from knownote.store.archive import export_notebook, import_notebook
from knownote.store.check import orphan_rows
from knownote.store.jobs import FAILED, IMPORTED, JobQueue
from knownote.study.mindmap import (
    MAP_PASSAGES,
    load_mind_map,
    make_mind_map,
    map_passages,
    parse_map,
    resolve_map,
)
from tests.answer.test_overview import imported
from tests.ollama_standin import OllamaStandIn
from tests.study.conftest import copy_of

REPLY = """\
Here is the map:
- Gravity hills [1]
  - An optical illusion [2]
  - Not a real force [99]
    - under a dropped node [1]
- An idea without a citation
  - its child [2]
- Russian society [3]
LINKS:
- Gravity hills -> An optical illusion: explained by [2]
- Gravity hills -> Nowhere: nothing [1]
- Gravity hills -> Russian society: no citation
"""


@pytest.fixture
def settings(two_sources_home, tmp_path) -> Settings:
    return copy_of(two_sources_home, tmp_path)


@pytest.fixture
def notebook(store):
    (notebook,) = store.notebooks()
    return notebook


@pytest.fixture
def two_sources(store, notebook) -> list[int]:
    return [d.id for d in store.documents(notebook.id)]


def assert_exact(store, mind_map, given=None):
    """Every citation is a passage's range, exactly a slice of its document's text."""
    for item in (*mind_map.nodes, *mind_map.links):
        assert item.cites
        for cite in item.cites:
            passage = next(p for p in store.passages(cite.document_id) if p.id == cite.passage_id)
            text = store.document_text(cite.document_id)
            assert (passage.start, passage.end) == (cite.start, cite.end)
            assert text[cite.start : cite.end] == passage.text
            if given is not None:
                assert cite.passage_id in given


def test_the_passages_come_from_every_source_and_are_exact(store, notebook, two_sources):
    passages = map_passages(store, notebook.id)
    assert [p.n for p in passages] == list(range(1, len(passages) + 1))
    assert len(passages) == min(MAP_PASSAGES, sum(d.passages for d in store.documents(notebook.id)))
    assert {p.document_id for p in passages} == set(two_sources)
    for p in passages:
        assert store.document_text(p.document_id)[p.start : p.end] == p.text


def test_a_switched_off_source_gives_no_passage(store, notebook, two_sources):
    store.set_document_enabled(two_sources[1], False)
    assert {p.document_id for p in map_passages(store, notebook.id)} == {two_sources[0]}


def test_only_what_cites_a_given_passage_is_kept(store, notebook, two_sources):
    passages = map_passages(store, notebook.id, k=3)
    made = resolve_map(parse_map(REPLY, 3), passages, "T", "m")
    assert [(n.label, n.parent) for n in made.nodes] == [
        ("Gravity hills", None),
        ("An optical illusion", 0),
        ("Russian society", None),
    ]
    assert [n.cites[0].passage_id for n in made.nodes] == [
        passages[i].passage_id for i in (0, 1, 2)
    ]
    assert [(link.source, link.target, link.label) for link in made.links] == [
        (0, 1, "explained by")
    ]
    # Dropped: the line of prose, the node citing [99] and its child, the uncited node and its
    # child, and two links.
    assert made.dropped == 7
    assert_exact(store, made, {p.passage_id for p in passages})


def test_the_map_is_kept_with_exact_ranges(store, notebook, two_sources):
    with OllamaStandIn(reply=REPLY) as server:
        steps = []
        made = make_mind_map(
            store, OllamaChat(server.url, 10), "llama3.2", notebook.id, lambda *s: steps.append(s)
        )
    assert [s[1:] for s in steps] == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert made == load_mind_map(store, notebook.id)
    assert made.model == "llama3.2" and made.title == notebook.name
    assert [n.label for n in made.nodes] == [
        "Gravity hills",
        "An optical illusion",
        "Russian society",
    ]
    assert_exact(store, made)
    assert (
        made.nodes[0].cites[0].title == store.document(two_sources[0]).title
        or made.nodes[0].cites[0].title
    )


def test_a_reply_that_cites_nothing_keeps_the_map_made_before(store, notebook, two_sources):
    with OllamaStandIn(reply=REPLY) as server:
        before = make_mind_map(store, OllamaChat(server.url, 10), "llama3.2", notebook.id)
    with (
        OllamaStandIn(reply="- Everything\n- Nothing [99]") as server,
        pytest.raises(ModelError, match="no idea that cites"),
    ):
        make_mind_map(store, OllamaChat(server.url, 10), "llama3.2", notebook.id)
    assert load_mind_map(store, notebook.id) == before


def test_a_deleted_source_leaves_its_citations_stale(store, notebook, two_sources):
    with OllamaStandIn(reply=REPLY) as server:
        made = make_mind_map(store, OllamaChat(server.url, 10), "llama3.2", notebook.id)
    gone = made.nodes[-1].cites[0].document_id
    store.delete_document(gone)
    kept = load_mind_map(store, notebook.id)
    assert all(c.stale == (c.document_id == gone) for n in kept.nodes for c in n.cites)


def test_deleting_the_notebook_deletes_its_map(store, notebook, two_sources):
    with OllamaStandIn(reply=REPLY) as server:
        make_mind_map(store, OllamaChat(server.url, 10), "llama3.2", notebook.id)
    delete_notebook(store, notebook.id)
    assert orphan_rows(store.db) == {}
    assert store.db.execute("SELECT count(*) FROM mind_map_cites").fetchall() == [(0,)]


def test_the_map_travels_in_an_archive(store, notebook, two_sources, tmp_path):
    with OllamaStandIn(reply=REPLY) as server:
        made = make_mind_map(store, OllamaChat(server.url, 10), "llama3.2", notebook.id)
    export_notebook(store, notebook.id, tmp_path / "nb.knownote")
    result = import_notebook(store, tmp_path / "nb.knownote", name="Copy", max_bytes=1 << 30)
    copy = load_mind_map(store, result.notebook_id)
    assert [(n.label, n.parent) for n in copy.nodes] == [(n.label, n.parent) for n in made.nodes]
    assert [(x.source, x.target, x.label) for x in copy.links] == [
        (x.source, x.target, x.label) for x in made.links
    ]
    new_documents = {d.id for d in store.documents(result.notebook_id)}
    for old, new in zip(made.nodes, copy.nodes, strict=True):
        for a, b in zip(old.cites, new.cites, strict=True):
            assert b.document_id in new_documents and not b.stale
            assert (
                store.document_text(b.document_id)[b.start : b.end]
                == store.document_text(a.document_id)[a.start : a.end]
            )
    assert_exact(store, copy)
    assert orphan_rows(store.db) == {}


def test_the_worker_makes_the_map_in_the_background(
    store, notebook, settings, embedder, two_sources
):
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
    with OllamaStandIn(reply=REPLY) as server:
        job = worker.queue_mind_map(notebook.id, OllamaChat(server.url, 10), "llama3.2")
        assert worker.run_once()
    done = worker.queue.job(job.id)
    assert (done.status, done.passages, done.done, done.total) == (IMPORTED, 3, 3, 3)
    assert len(load_mind_map(store, notebook.id).nodes) == 3


def test_a_map_job_whose_model_was_forgotten_fails_in_words(
    store, notebook, settings, embedder, two_sources
):
    job = JobQueue(store).enqueue_mind_map(notebook.id, "llama3.2")
    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)  # a new process
    assert worker.run_once()
    done = worker.queue.job(job.id)
    assert done.status == FAILED and "make it again" in done.error
    assert load_mind_map(store, notebook.id) is None


def test_a_model_that_fails_fails_the_job_in_words(
    store, notebook, settings, embedder, two_sources
):
    from tests.ollama_standin import free_port

    worker = ImportWorker(JobQueue(store), settings, lambda name: embedder)
    job = worker.queue_mind_map(notebook.id, OllamaChat(f"http://127.0.0.1:{free_port()}", 2), "m")
    assert worker.run_once()
    done = worker.queue.job(job.id)
    assert done.status == FAILED and done.error


@pytest.mark.engine
def test_the_real_small_engine_makes_a_map_whose_every_citation_resolves(
    store, notebook, two_sources, llama_server, settings
):
    """SmolLM2-135M (tests/llama_server.py) rarely cites well: whatever it writes, what is kept
    cites only passages it was given, at their exact ranges; when nothing resolves, no map."""
    from knownote.answer.openai_chat import OpenAIChat
    from knownote.answer.servers import AnswerServers
    from tests.llama_server import CHAT_MODEL, CONTEXT

    chat = OpenAIChat.from_settings(
        settings.with_(
            openai_base_url=llama_server.url, openai_context=CONTEXT, max_answer_tokens=256
        )
    )
    given = {p.passage_id for p in map_passages(store, notebook.id)}
    try:
        made = make_mind_map(store, AnswerServers(None, chat), f"openai:{CHAT_MODEL}", notebook.id)
    except ModelError as e:
        assert "no idea that cites" in str(e)
        assert load_mind_map(store, notebook.id) is None
        return
    assert made.nodes and made.model == f"openai:{CHAT_MODEL}"
    assert_exact(store, made, given)


def test_the_map_s_passages_are_body_text_not_references_or_tables(store, settings, embedder):
    from knownote.read.roles import RoleRange

    notebook = store.create_notebook("Notes", embedder.name, embedder.dim)
    document_id = imported(
        store, notebook, settings, embedder, "docs/web_text/md_zh_distributed_training_notes.md"
    )
    every = map_passages(store, notebook.id, k=3)
    # Say the passages it picks without roles were a reference list and a table.
    labels = ["reference", "table", "reference"]
    store.replace_roles(
        document_id,
        [RoleRange(p.start, p.end, role) for p, role in zip(every, labels, strict=True)],
    )
    picked = map_passages(store, notebook.id, k=3)
    assert len(store.passages(document_id)) > 6 and len(picked) == 3
    assert not {(p.start, p.end) for p in picked} & {(p.start, p.end) for p in every}
