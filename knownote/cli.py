"""The `knownote` command: the same core as the app, for batch work and scripting."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from knownote.errors import KnowNoteError, NotFound
from knownote.settings import Settings

if TYPE_CHECKING:
    from knownote.answer.ranges import SpanLinks
    from knownote.answer.report import Report
    from knownote.store.db import Notebook, Store
    from knownote.study.maps import MindMap

# Each command imports what it needs when it runs: `knownote --help` loads no model, database or
# PDF library.


def emit_json(value: object) -> None:
    json.dump(value, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


class StderrProgress:
    """One status line on stderr, rewritten in place on a terminal."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last = ""

    def __call__(self, label: str, stage: str, done: int, total: int) -> None:
        line = f"{label}: {stage}" + (f" {done}/{total}" if total > 1 else "")
        if stage == "ocr" and total:
            from knownote.pipeline.ingest import ocr_progress_text

            line = f"{label}: {ocr_progress_text(done, total)}"
        elif stage == "transcribe" and total:
            from knownote.pipeline.ingest import transcribe_progress_text

            line = f"{label}: {transcribe_progress_text(done, total)}"
        elif stage == "model":
            line = f"{label}: preparing the embedding model (once on this machine)"
        if line == self.last:
            return
        self.last = line
        if self.tty:
            sys.stderr.write("\r\x1b[2K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def done(self) -> None:
        if self.tty and self.last:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()
        self.last = ""


def cmd_import(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.pipeline.ingest import (
        ReadAhead,
        clean_filename,
        get_or_create_notebook,
        import_address,
        import_file,
    )
    from knownote.read.fetch import looks_like_address

    notebook = get_or_create_notebook(store, args.notebook, settings)
    shown = StderrProgress()
    results = []
    ahead: dict[int, ReadAhead] = {}  # the next file's reading, from its embedding on

    def progress(label: str, stage: str, done: int, total: int) -> None:
        shown(label, stage, done, total)
        following = i + 1
        if stage != "embed" or following > len(args.files) or following in ahead:
            return
        path = Path(args.files[following - 1])
        if not args.password and not looks_like_address(str(path)) and path.is_file():
            with contextlib.suppress(OSError):  # said when its turn comes
                ahead[following] = ReadAhead(path.read_bytes(), path.name, settings)

    for i, name in enumerate(args.files, start=1):
        if looks_like_address(name):
            result = import_address(store, notebook, name, settings=settings, progress=progress)
            shown.done()
            results.append(result.as_dict())
            if not args.json:
                print(describe_import(result.as_dict()))
            continue
        path = Path(name)
        label = clean_filename(path.name)  # the name may carry terminal escapes
        shown(label, f"file {i} of {len(args.files)}", 0, 1)
        reading = ahead.pop(i, None)
        try:
            data = path.read_bytes() if reading is None else reading.data
        except OSError as e:
            results.append(
                {
                    "file": label,
                    "status": "failed",
                    "document_id": None,
                    "pages": 0,
                    "passages": 0,
                    "chars": 0,
                    "warnings": [],
                    "error": f"{name} could not be read: {e.strerror or e}.",
                }
            )
            continue
        result = import_file(
            store,
            notebook,
            path.name,
            data,
            settings=settings,
            password=args.password,
            progress=progress,
            ahead=reading,
        )
        shown.done()
        results.append(result.as_dict())
        if not args.json:
            print(describe_import(result.as_dict()))
    shown.done()
    if args.json:
        emit_json(results)
    elif later := sum(1 for r in results if r.get("layout_later")):
        what = "1 PDF" if later == 1 else f"{later:,} PDFs"
        print(
            f"The page layouts of {what} (tables, captions, footnotes) are read when the app "
            "is idle, or now by `knownote reindex`."
        )
    return 1 if any(r["status"] == "failed" for r in results) else 0


def cmd_ocr(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Read a PDF or image source again by OCR, as a new version beside it."""
    from knownote.pipeline.ingest import read_again_by_ocr

    progress = StderrProgress()
    result = read_again_by_ocr(
        store, args.document_id, settings=settings, password=args.password, progress=progress
    )
    progress.done()
    if args.json:
        emit_json(result.as_dict())
    else:
        print(describe_import(result.as_dict()))
    return 1 if result.status == "failed" else 0


def describe_import(result: dict) -> str:
    if result["status"] == "failed":
        return f"failed     {result['file']}: {result['error']}"
    line = (
        f"{result['status']:<10} {result['file']} (document {result['document_id']}): "
        f"{result['pages']} pages, {result['passages']} passages, {result['chars']:,} characters"
    )
    return "\n".join([line, *(f"           warning: {w}" for w in result["warnings"])])


def cmd_notebooks(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.index.language import language_name
    from knownote.store.library import in_library

    notebooks = store.notebooks()
    if args.json:
        emit_json(
            [
                {
                    "id": n.id,
                    "name": n.name,
                    "documents": n.documents,
                    "passages": n.passages,
                    "embedding_model": n.embedding_model,
                    "embedding_dim": n.embedding_dim,
                    # passages per language, the most first; two or more held: searched fairly
                    "languages": store.passage_languages(n.id),
                    "in_library": in_library(store, n.id),  # searched by --notebook all
                }
                for n in notebooks
            ]
        )
    elif not notebooks:
        print("No notebooks yet. Create one with: knownote import NOTEBOOK FILE...")
    else:
        for n in notebooks:
            held = store.passage_languages(n.id)
            languages = f"; {', '.join(language_name(c) for c in held)}" if held else ""
            left_out = "" if in_library(store, n.id) else "; left out of the library"
            print(
                f"{n.id:>4}  {n.name}  ({n.documents} documents, {n.passages} passages{languages}"
                f"{left_out})"
            )
    return 0


def cmd_show(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    document = store.document(args.document_id)
    text = store.document_text(document.id)
    pages = store.pages(document.id)
    passages = store.passages(document.id)
    if args.json:
        from knownote.serve.tools import seconds_of

        recording = store.spoken_seconds(document.id) is not None
        emit_json(
            {
                "document_id": document.id,
                "title": document.title,
                "filename": document.filename,
                "kind": document.kind,
                "warnings": list(document.warnings),
                "text": text,
                "pages": [{"page": p.number, "start": p.start, "end": p.end} for p in pages],
                "passages": [
                    {
                        "idx": p.idx,
                        "start": p.start,
                        "end": p.end,
                        "page_start": p.page_start,
                        "page_end": p.page_end,
                        "seconds": seconds_of(store, document.id, p.start, p.end)
                        if recording
                        else None,
                        "text": p.text,
                    }
                    for p in passages
                ],
            }
        )
        return 0
    print(f"# {document.title} ({document.filename}, {document.kind})")
    for warning in document.warnings:
        print(f"warning: {warning}")
    if pages:
        for p in pages:
            print(f"\n--- page {p.number} (chars {p.start:,}–{p.end:,}) ---")
            print(text[p.start : p.end])
    else:
        print(text)
    print(f"\n# {len(passages)} passages")
    for p in passages:
        where = f" p. {p.page_start}" if p.page_start is not None else ""
        if p.page_end is not None and p.page_end != p.page_start:
            where += f"–{p.page_end}"
        print(f"[{p.idx}]{where} chars {p.start:,}–{p.end:,}: {p.text[:80]!r}")
    return 0


def asked_notebooks(args: argparse.Namespace, store: Store) -> list[Notebook]:
    """The notebooks a question names: before it, or with --notebook (all, or a list)."""
    from knownote.notebooks import find_notebook, find_notebooks

    if args.notebooks is not None and args.notebook is not None:
        raise KnowNoteError("Name the notebook once: before the question or with --notebook.")
    if args.notebooks is not None:
        return find_notebooks(store, args.notebooks)
    if args.notebook is None:
        raise KnowNoteError("Name the notebook to ask, or ask them all with --notebook all.")
    return [find_notebook(store, args.notebook)]


def cmd_ask(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.answer.ask import ask, ask_library
    from knownote.answer.ranges import SpanLinks, answer_json, library_links
    from knownote.answer.servers import connect, resolve_model
    from knownote.index.embedders import get_embedder

    notebooks = asked_notebooks(args, store)
    across = len(notebooks) > 1 or (args.notebooks or "").strip().lower() == "all"
    notebook = notebooks[0]
    client, models, status = connect(settings)
    model = resolve_model(args.model, models)
    if status:
        print(f"knownote: {status}", file=sys.stderr)
    elif model and not args.model:
        print(f"knownote: answering with {model} (choose another with --model)", file=sys.stderr)

    def write(piece: str) -> None:
        sys.stdout.write(piece)
        sys.stdout.flush()

    if across:
        result = ask_library(
            store,
            notebooks,
            args.question,
            llm=client,
            model=model,
            settings=settings,
            k=args.k,
            chat_id=args.chat,
            on_token=None if args.json else write,
        )
        links = library_links(store, settings.app_url, [p.document_id for p in result.passages])
    else:
        result = ask(
            store,
            get_embedder(notebook.embedding_model),
            notebook.id,
            args.question,
            llm=client,
            model=model,
            settings=settings,
            k=args.k,
            chat_id=args.chat,
            on_token=None if args.json else write,
        )
        links = SpanLinks(settings.app_url, notebook.id)
    names = {n.id: n.name for n in notebooks}
    if args.json:
        record = answer_json(result, links)
        for key in ("citations", "passages", "supports") if across else ():
            for entry in record[key]:
                found = links.notebook_of(entry["document_id"])
                entry["notebook"] = {"id": found, "name": names.get(found)}
        emit_json(record)
    else:
        sys.stdout.write("\n")
        if result.citations:
            print("\nSources:")
            for p in result.citations:
                held = names.get(links.notebook_of(p.document_id)) if across else None
                where = ", ".join(part for part in (held, p.title, p.pages, p.chars) if part)
                print(f"[{p.n}] {where}")
    if len(result.searched) > 1:
        also = ", ".join(f"“{query}”" for query in result.searched[1:])
        print(f"knownote: searched for {also} and the question", file=sys.stderr)
    if result.notice:
        print(f"knownote: {result.notice}", file=sys.stderr)
    print(
        f"knownote: saved in chat {result.chat_id}; follow up with --chat {result.chat_id}",
        file=sys.stderr,
    )
    return 1 if result.incomplete else 0


def cmd_export(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.answer.chats import export_markdown

    sys.stdout.write(export_markdown(store, args.chat_id, app_url=settings.app_url))
    return 0


def cmd_page(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.show.pdf_page import passage_pages

    passage = next((p for p in store.passages(args.document_id) if p.idx == args.passage), None)
    if passage is None:
        raise NotFound(
            f"Document {args.document_id} has no passage {args.passage}. "
            f"List them with: knownote show {args.document_id}"
        )
    images = passage_pages(
        store,
        args.document_id,
        passage.start,
        passage.end,
        zoom=args.zoom,
        password=args.password,
    )
    out: Path = args.out
    written = []
    for image in images:
        path = out if len(images) == 1 else out.with_name(f"{out.stem}-p{image.page}{out.suffix}")
        try:
            path.write_bytes(image.png)
        except OSError as e:
            raise KnowNoteError(f"{path} could not be written: {e.strerror or e}.") from None
        written.append({"page": image.page, "file": str(path), "width": image.width,
                        "height": image.height, "glyphs": len(image.rects)})  # fmt: skip
    if args.json:
        emit_json(written)
    else:
        for item in written:
            print(f"page {item['page']}: {item['file']} ({item['glyphs']} glyphs highlighted)")
    return 0


def cmd_search(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.answer.ranges import SpanLinks, hit_json, library_links
    from knownote.index.embedders import get_embedder
    from knownote.read.sections import section_label
    from knownote.search.followup import search_queries
    from knownote.search.library import search_library

    notebooks = asked_notebooks(args, store)
    notebook = notebooks[0]
    if len(notebooks) > 1 or (args.notebooks or "").strip().lower() == "all":
        if args.documents:
            raise KnowNoteError("--documents narrows one notebook; leave it out with --notebook.")
        found = search_library(store, notebooks, [args.query], k=args.k, mode=args.mode)
        links = library_links(store, settings.app_url, [h.document_id for h in found.hits])
        held = {d: n.name for d, n in found.notebook_of.items()}
    else:
        found = search_queries(
            store,
            get_embedder(notebook.embedding_model),
            notebook.id,
            [args.query],
            k=args.k,
            mode=args.mode,
            document_ids=args.documents,
        )
        links = SpanLinks(settings.app_url, notebook.id)
        held = {}
    from knownote.answer.cite import time_label

    hits = found.hits
    if found.note:  # the embedding server is down: keywords only
        print(f"knownote: {found.note}", file=sys.stderr)
    if args.json:
        emit_json(
            [
                {**hit_json(hit, links), "notebook_id": links.notebook_of(hit.document_id)}
                for hit in hits
            ]
        )
    elif not hits:
        print("No passages found.")
    for n, hit in enumerate([] if args.json else hits, start=1):
        pages = ""
        if hit.page_start is not None:
            pages = f", p. {hit.page_start}"
            if hit.page_end is not None and hit.page_end != hit.page_start:
                pages += f"–{hit.page_end}"
        said = store.time_range(hit.document_id, hit.start, hit.end)
        if said is not None:
            pages += f", {time_label(said)}"
        print(
            f"[{n}] {held[hit.document_id] + ': ' if held else ''}{hit.title} "
            f"(document {hit.document_id}, passage {hit.passage_index}"
            f"{', ' + section_label(hit.section) if hit.section else ''}"
            f"{pages}, chars {hit.start:,}–{hit.end:,}) score {hit.score:.3f}"
        )
        print("    " + " ".join(hit.text.split())[:300])
    return 0


def cmd_eval(args: argparse.Namespace, store: Store | None, settings: Settings) -> int:
    from knownote.index.context import BEFORE, CURRENT
    from knownote.index.embedders import get_embedder
    from knownote.measure.retrieval import evaluate, load_squad, stderr_progress
    from knownote.search.retrieve import BEFORE_TUNING, MODES

    if args.library:
        return eval_library(args)
    dataset = load_squad(args.dataset, args.max_questions, skip=args.skip, article=args.article)
    modes = MODES if args.mode == "all" else (args.mode,)
    recipes = (
        {"before": (BEFORE, BEFORE_TUNING), "after": (CURRENT, None)}
        if args.compare
        else {"": (CURRENT, None)}
    )
    reports = {
        name: evaluate(
            dataset,
            get_embedder(settings.embedding_model),
            modes,
            k=args.k,
            progress=stderr_progress,
            size=settings.passage_size,
            overlap=settings.passage_overlap,
            recipe=recipe,
            tuning=tuning,
        )
        for name, (recipe, tuning) in recipes.items()
    }
    if args.json:
        emit_json(
            {name or "report": report.as_dict() for name, report in reports.items()}
            if args.compare
            else reports[""].as_dict()
        )
        return 0
    report = next(iter(reports.values()))
    print(
        f"{args.dataset.name}{' (articles)' if args.article else ''}: "
        f"{report.questions} questions, {len(dataset.contexts)} documents, "
        f"{report.passages} passages"
        + (f", first {args.skip} questions left out" if args.skip else "")
        + (f", {report.skipped} questions skipped" if report.skipped else "")
    )
    names = list(next(iter(report.modes.values())))
    width = 8 + (7 if args.compare else 0)
    print(f"{'mode':<{width}} " + " ".join(f"{name:>10}" for name in names))
    for mode in modes:
        for name, each in reports.items():
            label = f"{mode} {name}".strip()
            figures = each.modes[mode]
            print(f"{label:<{width}} " + " ".join(f"{figures[n]:>10.3f}" for n in names))
    return 0


def eval_library(args: argparse.Namespace) -> int:
    """`eval --library A,B`: the set's articles split into one notebook per model, every question
    asked of its own notebook and of all of them as one library."""
    from knownote.index.embedders import get_embedder
    from knownote.measure.library import Part, evaluate_library, split_articles
    from knownote.measure.retrieval import stderr_progress

    if args.skip or args.article or args.compare:
        raise KnowNoteError("--library cannot be combined with --skip, --article or --compare.")
    models = [m.strip() for m in args.library.split(",") if m.strip()]
    if len(models) < 2:
        raise KnowNoteError("Give --library two embedding models or more, e.g. A,B.")
    parts = split_articles(args.dataset, len(models), args.max_questions)
    modes = ("hybrid", "vector", "keyword") if args.mode == "all" else (args.mode,)
    reports = [
        evaluate_library(
            [
                Part(f"part {i + 1}", dataset, get_embedder(model))
                for i, (dataset, model) in enumerate(zip(parts, models, strict=True))
            ],
            mode=mode,
            k=args.k,
            progress=stderr_progress,
        )
        for mode in modes
    ]
    if args.json:
        emit_json([report.as_dict() for report in reports])
        return 0
    print(f"{args.dataset.name}: {reports[0].questions} questions in {len(models)} notebooks")
    for part in reports[0].parts:
        print(f"  {part['name']}: {part['documents']} documents, {part['model']}")
    names = list(reports[0].own)
    print(f"{'mode':<8} {'asked of':<20} " + " ".join(f"{name:>10}" for name in names))
    for report in reports:
        rows = [("own notebook", report.own)]
        rows += [(f"library ({f})", figures) for f, figures in report.library.items()]
        for label, figures in rows:
            print(
                f"{report.mode:<8} {label:<20} " + " ".join(f"{figures[n]:>10.3f}" for n in names)
            )
    return 0


def cmd_library(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.notebooks import find_notebook
    from knownote.store.library import in_library, set_in_library

    if args.notebook is not None:
        notebook = find_notebook(store, args.notebook)
        if args.switch is not None:
            set_in_library(store, notebook.id, args.switch == "on")
        chosen = [notebook]
    else:
        chosen = store.notebooks()
    rows = [{"id": n.id, "name": n.name, "in_library": in_library(store, n.id)} for n in chosen]
    if args.json:
        emit_json(rows)
        return 0
    for row in rows:
        state = "in the library" if row["in_library"] else "left out of the library"
        print(f"{row['id']:>4}  {row['name']}  ({state})")
    return 0


def cmd_reindex(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    """Re-index, in the foreground, documents imported before titles, sections and stemming,
    and read the languages and roles of those imported before they were kept."""
    from knownote.index.embedders import get_embedder
    from knownote.notebooks import find_notebook
    from knownote.pipeline.reindex import (
        notebooks_to_reindex,
        read_missing_languages,
        reindex_notebook,
    )
    from knownote.pipeline.roles import read_missing_roles

    read_missing_languages(store)
    read_missing_roles(store, settings=settings)
    if args.model:
        return reembed(args, store)
    ids = [find_notebook(store, args.notebook).id] if args.notebook else notebooks_to_reindex(store)
    report = []
    for notebook_id in ids:
        notebook = store.notebook(notebook_id)
        embedder = get_embedder(notebook.embedding_model)

        def progress(title: str, done: int, total: int, name: str = notebook.name) -> None:
            sys.stderr.write(f"\r{name}: {done:,} of {total:,} passages re-indexed")
            sys.stderr.flush()

        redone = reindex_notebook(store, embedder, notebook_id, progress)
        sys.stderr.write("\n")
        report.append({"notebook": notebook.name, "documents": redone})
    if args.json:
        emit_json(report)
        return 0
    if not report:
        print("Every document is indexed with its titles and sections already.")
    for row in report:
        print(f"{row['notebook']}: re-indexed {row['documents']} documents")
    return 0


def reembed(args: argparse.Namespace, store: Store) -> int:
    """Give a notebook's passages to another embedding model, then make it the notebook's."""
    from knownote.index.embedders import get_embedder
    from knownote.notebooks import find_notebook
    from knownote.pipeline.reembed import reembed_notebook

    if not args.notebook:
        raise KnowNoteError(
            "Name the notebook to re-embed: knownote reindex NOTEBOOK --model NAME."
        )
    notebook = find_notebook(store, args.notebook)
    embedder = get_embedder(args.model)
    if embedder.name == notebook.embedding_model:
        print(f"{notebook.name} uses {embedder.name} already.")
        return 0

    def progress(title: str, done: int, total: int) -> None:
        sys.stderr.write(f"\r{notebook.name}: {done:,} of {total:,} passages re-embedded")
        sys.stderr.flush()

    documents = reembed_notebook(store, embedder, notebook.id, progress)
    sys.stderr.write("\n")
    if args.json:
        emit_json({"notebook": notebook.name, "model": embedder.name, "documents": documents})
    else:
        print(f"{notebook.name}: re-embedded with {embedder.name} ({documents} documents)")
    return 0


def cmd_cards(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.answer.ranges import SpanLinks
    from knownote.answer.servers import connect, resolve_model
    from knownote.index.embedders import get_embedder
    from knownote.notebooks import find_notebook
    from knownote.study.cards import cards, kept_shares
    from knownote.study.export import anki_package, csv_text
    from knownote.study.make import make_cards

    notebook = find_notebook(store, args.notebook)
    client = model = None
    if args.model:
        client, models, status = connect(settings)
        model = resolve_model(args.model, models)
        if client is None:
            raise KnowNoteError(status or "No answer server answers; cards need one for --model.")
    progress = StderrProgress()
    made = make_cards(
        store,
        get_embedder(notebook.embedding_model),
        notebook.id,
        llm=client,
        model=model,
        progress=lambda title, done, total: progress(title or notebook.name, "cards", done, total),
    )
    progress.done()
    for m in made:
        if m.sources:
            wrote = (
                f"; {m.written} written, {m.kept} kept after the support check" if m.written else ""
            )
            sources = f"{m.sources} new source{'s' * (m.sources != 1)}"
            print(f"knownote: {m.made_by}: cards for {sources}{wrote}", file=sys.stderr)
    if args.anki:
        args.anki.write_bytes(anki_package(store, notebook.id, settings.app_url))
        print(f"knownote: wrote the Anki deck to {args.anki}", file=sys.stderr)
    if args.csv:
        args.csv.write_text(csv_text(store, notebook.id, settings.app_url), encoding="utf-8")
        print(f"knownote: wrote the cards as CSV to {args.csv}", file=sys.stderr)
    shown = cards(store, notebook.id)
    if args.json:
        links = SpanLinks(settings.app_url, notebook.id)
        emit_json(
            {
                "notebook": notebook.name,
                "cards": [
                    {**c.as_dict(), **links.both(c.document_id, c.start, c.end)} for c in shown
                ],
                "made_by": [dataclasses.asdict(k) | {"share_kept": k.share}
                            for k in kept_shares(store, notebook.id)],
            }
        )  # fmt: skip
    elif not (args.anki or args.csv):
        for c in shown:
            print(f"[{c.id}] {c.citation}\n  {c.front}\n  → {c.answer}")
    return 0


def cmd_mindmap(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.answer.ranges import SpanLinks
    from knownote.notebooks import find_notebook
    from knownote.study.map_export import to_markdown, to_opml, to_svg
    from knownote.study.mindmap import load_mind_map
    from knownote.study.outline import outline_map

    notebook = find_notebook(store, args.notebook)
    links = SpanLinks(settings.app_url, notebook.id)
    if args.model:
        mind_map = write_mind_map(args, store, settings, notebook.id)
    elif args.ideas:
        mind_map = load_mind_map(store, notebook.id)
        if mind_map is None:
            raise NotFound(
                f"No mind map written by a model is kept for “{notebook.name}”. Make one with "
                "--model NAME, or in the app's Mind map view."
            )
    else:
        mind_map = outline_map(store, notebook.id, notebook.name)
    written = {
        args.svg: lambda: to_svg(mind_map, links, args.depth),
        args.opml: lambda: to_opml(mind_map, links),
        args.markdown: lambda: to_markdown(mind_map, links),
    }
    for path, render in written.items():
        if path is not None:
            path.write_text(render(), encoding="utf-8")
            print(f"knownote: wrote {path}", file=sys.stderr)
    if args.json:
        record = mind_map.as_dict()
        for item in (*record["nodes"], *record["links"]):
            for cite in item["cites"]:
                cite.update(links.both(cite["document_id"], cite["start"], cite["end"]))
        emit_json(record)
    elif not any(written.keys() - {None}):
        sys.stdout.write(to_markdown(mind_map, links))
    if mind_map.dropped:
        print(
            f"knownote: left out {mind_map.dropped} ideas or links whose citations did not "
            "resolve to a passage the model was given",
            file=sys.stderr,
        )
    return 0


def write_mind_map(
    args: argparse.Namespace, store: Store, settings: Settings, notebook_id: int
) -> MindMap:
    """A new map of main ideas by the model the arguments name, kept in the database."""
    from knownote.answer.servers import connect, resolve_model
    from knownote.errors import LLMUnavailable
    from knownote.study.mindmap import make_mind_map

    client, models, status = connect(settings)
    model = resolve_model(args.model, models)
    if client is None or model is None:
        raise LLMUnavailable(status or "No answer server lists a model to write a mind map with.")
    shown = StderrProgress()
    try:
        return make_mind_map(
            store,
            client,
            model,
            notebook_id,
            lambda what, done, total: shown(what, "", done, total),
        )
    finally:
        shown.done()


def cmd_report(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.answer.ranges import SpanLinks
    from knownote.answer.report import WRITTEN_KINDS
    from knownote.notebooks import find_notebook, find_source
    from knownote.pipeline.worker import ReportRequest, make_report
    from knownote.show.report_export import report_docx, report_markdown, report_pdf

    notebook = find_notebook(store, args.notebook)
    sources = tuple(find_source(store, notebook, i).id for i in args.source or ())
    client = model = None
    if args.model:
        from knownote.answer.servers import connect, resolve_model
        from knownote.errors import LLMUnavailable

        client, models, status = connect(settings)
        model = resolve_model(args.model, models)
        if client is None or model is None:
            raise LLMUnavailable(status or "No answer server lists a model to write with.")
    elif args.kind in WRITTEN_KINDS:
        raise KnowNoteError(
            f"A {args.kind} report is written by an answer model: give one with --model NAME."
        )
    request = ReportRequest(
        args.kind, args.instructions or "", sources, client, model, not args.leave_out_unsupported
    )
    shown = StderrProgress()
    try:
        report, report_id, notes = make_report(
            store, notebook.id, request, lambda what, done, total: shown(what, "", done, total)
        )
    finally:
        shown.done()
    links = SpanLinks(settings.app_url, notebook.id)
    written = {
        args.markdown: lambda path: path.write_text(report_markdown(report, links), "utf-8"),
        args.docx: lambda path: report_docx(report, path, links),
        args.pdf: lambda path: report_pdf(report, path, links),
    }
    for path, write in written.items():
        if path is not None:
            write(path)
            print(f"knownote: wrote {path}", file=sys.stderr)
    if args.json:
        emit_json(report_record(report, report_id, links))
    elif not any(written.keys() - {None}):
        sys.stdout.write(report_markdown(report, links))
    print(f"knownote: kept report {report_id}: {'; '.join(notes)}", file=sys.stderr)
    return 0


def report_record(report: Report, report_id: int, links: SpanLinks) -> dict[str, object]:
    """A report as JSON: each line's text, style, label and date, with its citations (source,
    title, page, time, range, quote, and the links that open the range)."""
    from knownote.answer.ranges import cite_json

    cites = {c.n: c for c in report.cites}

    def cite(n: int) -> dict[str, object]:
        return cite_json(cites[n], links)

    lines = [
        {
            "text": line.text,
            "style": line.style,
            "label": line.label,
            "date": line.date,
            "unsupported": line.unsupported,
            "cites": [cite(n) for n in line.cites if n in cites],
        }
        for line in report.lines
    ]
    return {
        "id": report_id,
        "kind": report.kind,
        "title": report.title,
        "model": report.model,
        "written": report.written,
        "kept": report.kept,
        "marked": report.marked,
        "lines": lines,
    }


def cmd_overview_audio(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.answer.ranges import SpanLinks, audio_overview_json
    from knownote.serve.tools import audio_format_of, make_overview, write_audio
    from knownote.show.audio_transcript import transcript_markdown

    audio_format_of(args.out)  # a suffix it cannot write is said before the minutes of making
    shown = StderrProgress()
    try:
        overview, notes = make_overview(
            store, settings, args.notebook, format=args.format, model=args.model,
            focus=args.focus or "", length=args.length, language=args.language,
            sources=args.sources, progress=lambda what, done, total: shown(what, "", done, total),
        )  # fmt: skip
    finally:
        shown.done()
    write_audio(store.read_file(overview.audio_sha256 or ""), args.out)
    print(f"knownote: wrote {args.out}", file=sys.stderr)
    links = SpanLinks(settings.app_url, overview.notebook_id)
    if args.transcript is not None:
        args.transcript.write_text(transcript_markdown(overview, links), "utf-8")
        print(f"knownote: wrote {args.transcript}", file=sys.stderr)
    if args.json:
        emit_json({**audio_overview_json(overview, links), "audio": str(args.out)})
    said = "; ".join(note.rstrip(".") for note in notes)
    print(f"knownote: kept audio overview {overview.id}: {said}.", file=sys.stderr)
    return 0


def cmd_export_notebook(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.notebooks import find_notebook
    from knownote.store.archive import export_notebook

    notebook = find_notebook(store, args.notebook)
    result = export_notebook(store, notebook.id, args.file)
    print(
        f"wrote {args.file}: notebook “{result.name}”, {result.documents} documents, "
        f"{result.chats} chats, {result.bytes:,} bytes"
    )
    return 0


def cmd_import_notebook(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.store.archive import import_notebook

    result = import_notebook(
        store, args.file, name=args.name, max_bytes=settings.max_archive_mb * 1024 * 1024
    )
    print(
        f"imported notebook “{result.name}” (notebook {result.notebook_id}): "
        f"{result.documents} documents, {result.chats} chats, every row checked against the "
        "archive's digests"
    )
    return 0


def cmd_check(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.store.check import check_store

    checked, problems = check_store(store)
    if args.json:
        emit_json({"documents": checked, "problems": problems})
    elif problems:
        print(f"{len(problems)} problems in {store.path} ({checked} documents checked):")
        for problem in problems:
            print(f"- {problem}")
    else:
        print(f"{store.path}: {checked} documents checked, every one whole; no orphan rows; "
              "one intact kept file per document.")  # fmt: skip
    return 1 if problems else 0


def cmd_backup(args: argparse.Namespace, store: Store, settings: Settings) -> int:
    from knownote.store.backup import backup

    result = backup(store, args.dir)
    print(f"backed up {result.documents} documents and {result.files} kept files to "
          f"{result.folder} ({result.bytes:,} bytes); checked: no problems")  # fmt: skip
    return 0


def cmd_eval_answers(args: argparse.Namespace, store: Store | None, settings: Settings) -> int:
    from knownote.answer.servers import connect, resolve_model
    from knownote.index.embedders import get_embedder
    from knownote.measure.answers import evaluate_answers
    from knownote.measure.retrieval import load_squad, stderr_progress

    dataset = load_squad(args.dataset, args.max_questions, skip=args.skip)
    client, model = None, None
    if not args.quoted:
        client, models, status = connect(settings)
        model = resolve_model(args.model, models)
        if model is None or model not in models:
            listed = ", ".join(models) or "none"
            raise KnowNoteError(
                f"{status or ''} No model {args.model or ''} to answer with (listed: {listed}). "
                "Name one with --model, or measure the quoted answers with --quoted.".strip()
            )
        print(f"knownote: answering with {model}", file=sys.stderr)
    report = evaluate_answers(
        dataset,
        get_embedder(settings.embedding_model),
        settings,
        llm=client,
        model=model,
        k=args.k,
        progress=stderr_progress,
    )
    if args.json:
        emit_json(report.as_dict())
        return 0
    print(
        f"{args.dataset.name}: {report.questions} questions, k={report.k}, answers by "
        f"{report.model}"
        + (f", first {args.skip} questions left out" if args.skip else "")
        + (f", {report.skipped} questions skipped" if report.skipped else "")
    )
    for name, value in report.figures.items():
        shown = "n/a" if value is None else f"{value:.3f}"
        print(f"  {name:<20} {shown:>8}")
    return 0


def cmd_eval_support(args: argparse.Namespace, store: Store | None, settings: Settings) -> int:
    from knownote.index.embedders import get_embedder
    from knownote.measure.retrieval import stderr_progress
    from knownote.measure.support import evaluate_support, load_answers, load_support_set

    dataset = load_support_set(args.dataset, args.max_questions, args.skip)
    report = evaluate_support(
        dataset,
        get_embedder(settings.embedding_model),
        k=args.k,
        size=settings.passage_size,
        overlap=settings.passage_overlap,
        progress=stderr_progress,
        answers=load_answers(args.answers_from) if args.answers_from else None,
    )
    if args.json:
        emit_json(report.as_dict())
        return 0
    evidence = (
        "annotated evidence" if report.annotated else "evidence: the sentence holding the answer"
    )
    print(
        f"{args.dataset.name}: {report.questions} questions ({evidence})"
        + (f", {report.skipped} questions skipped" if report.skipped else "")
    )
    print(f"accuracy@1                      {report.accuracy_at_1:.3f}")
    if report.accuracy_unambiguous is not None and report.unambiguous < report.questions:
        print(
            f"accuracy@1, evidence unambiguous {report.accuracy_unambiguous:.3f} "
            f"({report.unambiguous} questions whose answer occurs once, not in a title)"
        )
    print(f"flagged, supported sentences    {report.flag_rate_supported:.3f}")
    unrelated = report.flag_rate_unrelated
    print(
        "flagged, unrelated sentences    "
        + ("n/a (one article only)" if unrelated is None else f"{unrelated:.3f}")
    )
    return 0


def cmd_mcp(args: argparse.Namespace, _store: None, settings: Settings) -> int:
    """Serve the notebooks to MCP clients until they hang up (stdio) or Ctrl-C (HTTP). Over
    stdio while the app holds the database, relay to the app's own MCP server instead."""
    import os

    from knownote.access import password_outside_app
    from knownote.errors import DatabaseInUse
    from knownote.serve.background import mcp_url
    from knownote.serve.bearer import serve_http
    from knownote.serve.server import build_server, serve_stdio
    from knownote.store.db import Store

    try:
        store = Store.open(args.db_path, progress=say_upgrade)
    except DatabaseInUse as in_use:
        url = mcp_url(settings.mcp_port)
        if args.http:
            raise KnowNoteError(
                f"{in_use} When that is the app, it serves MCP itself at {url}: connect there."
            ) from None
        from knownote.serve.relay import app_serving, relay_stdio

        password = password_outside_app(os.environ)
        app_serving(url, password, args.db_path, in_use)
        if args.allow_writes:
            print(
                "knownote: the app decides whether its MCP server writes "
                "(KNOWNOTE_MCP_ALLOW_WRITES=1 where the app starts)",
                file=sys.stderr,
            )
        relay_stdio(url, password)
        return 0
    try:
        server = build_server(store, settings, allow_writes=args.allow_writes)
        if not args.http:
            serve_stdio(server)
            return 0
        port = settings.mcp_port if args.port is None else args.port
        password = password_outside_app(os.environ)
        serve_http(server, host=args.host, port=port, password=password, database=store.path)
        return 0
    finally:
        store.close()


def parse_ids(value: str) -> list[int]:
    try:
        return [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a list of numbers like 1,4,7") from None


def parse_id(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None


ACROSS = (
    "ask several notebooks as one library: all (every notebook not left out of it, see "
    "`knownote library`) or names separated by commas"
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="knownote", description=__doc__)
    parser.add_argument("--db", type=Path, help="database file (default: $KNOWNOTE_HOME)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "import", help="import files and web addresses into a notebook (created if needed)"
    )
    p.add_argument("notebook")
    p.add_argument(
        "files", nargs="+", metavar="FILE|URL", help="files, recordings or http(s):// addresses"
    )
    p.add_argument("--password", help="password for encrypted PDFs")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_import, reads_files=True)

    p = sub.add_parser("notebooks", help="list notebooks with their document and passage counts")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_notebooks)

    p = sub.add_parser("show", help="print a document's extracted text, pages and passages")
    p.add_argument("document_id", type=parse_id)
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_show)

    p = sub.add_parser("ask", help="answer a question from a notebook, with citations")
    p.add_argument("notebook", nargs="?", help="notebook name (or number)")
    p.add_argument("question")
    p.add_argument("--notebook", dest="notebooks", metavar="all|NAME,NAME", help=ACROSS)
    p.add_argument(
        "--model",
        help="the model: a name Ollama or the OpenAI-compatible server lists (openai:NAME when "
        "both do; default: the first one listed)",
    )
    p.add_argument("-k", type=int, default=8, help="passages put in front of the model")
    p.add_argument(
        "--chat", type=parse_id, help="continue this chat (a follow-up question; of the library "
        "with --notebook)"
    )  # fmt: skip
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_ask)

    p = sub.add_parser("export", help="print a chat as Markdown, with footnoted citations")
    p.add_argument("chat_id", type=parse_id)
    p.set_defaults(run=cmd_export)

    p = sub.add_parser(
        "ocr", help="read a PDF or image source again by OCR, as a new version beside it"
    )
    p.add_argument("document_id", type=parse_id)
    p.add_argument("--password", help="password of an encrypted PDF (it is not stored)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_ocr, reads_files=True)

    p = sub.add_parser("page", help="write a PDF passage's page(s) as PNG, the passage highlighted")
    p.add_argument("document_id", type=parse_id)
    p.add_argument("passage", type=parse_id, metavar="PASSAGE_INDEX", help="as `show` lists them")
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE.png",
        help="where to write; a passage over several pages writes FILE-p3.png, FILE-p4.png, …",
    )
    p.add_argument("--zoom", type=float, default=2.0, help="pixels per point (default 2)")
    p.add_argument("--password", help="password of an encrypted PDF (it is not stored)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_page)

    p = sub.add_parser("search", help="find the passages of a notebook that match a query")
    p.add_argument("notebook", nargs="?", help="notebook name (or number)")
    p.add_argument("query")
    p.add_argument("--notebook", dest="notebooks", metavar="all|NAME,NAME", help=ACROSS)
    p.add_argument("-k", type=int, default=8, help="how many passages (default 8)")
    p.add_argument("--mode", choices=("hybrid", "vector", "keyword"), default="hybrid")
    p.add_argument("--documents", type=parse_ids, help="only these document ids: 1,4,7")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_search)

    p = sub.add_parser("eval", help="measure retrieval on a SQuAD-format question set")
    p.add_argument("dataset", type=Path, metavar="DATASET.json")
    p.add_argument("-k", type=int, default=10, help="passages retrieved per question")
    p.add_argument("--mode", choices=("hybrid", "vector", "keyword", "all"), default="all")
    p.add_argument("--max-questions", type=int, help="only the first N questions")
    p.add_argument(
        "--skip", type=int, default=0, help="leave out the first N questions (a held-out part)"
    )
    p.add_argument(
        "--article",
        action="store_true",
        help="import each article as one long document (paragraphs joined, titled by the set)",
    )
    p.add_argument(
        "--compare",
        action="store_true",
        help="also index the way before titles, sections and stemming, and print both",
    )
    p.add_argument(
        "--library",
        metavar="MODEL,MODEL",
        help="split the set's articles into one notebook per embedding model and ask every "
        "question of its own notebook and of all of them as one library (--notebook all)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_eval, needs_store=False)  # it builds its own scratch database

    p = sub.add_parser(
        "library", help="list which notebooks `--notebook all` asks; leave one out or put it back"
    )
    p.add_argument("notebook", nargs="?", help="notebook name (or number); default: all")
    p.add_argument("switch", nargs="?", choices=("on", "off"), help="put in (on) or leave out")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_library)

    p = sub.add_parser(
        "reindex", help="re-index old documents with titles, sections and stemming (foreground)"
    )
    p.add_argument("notebook", nargs="?", help="notebook name (or number); default: all")
    p.add_argument(
        "--model",
        help="re-embed the notebook with this embedding model (e.g. multilingual-e5-small-int8); "
        "its search uses its old model until every passage has a new vector",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_reindex)

    p = sub.add_parser(
        "cards", help="make study cards for the sources that lack them; print or export them"
    )
    p.add_argument("notebook", help="notebook name (or number)")
    p.add_argument(
        "--model",
        help="also write question-and-answer cards with this model (each answer checked "
        "against its passage); without it, cloze cards of each source's central sentences",
    )
    p.add_argument("--anki", type=Path, metavar="FILE.apkg", help="write an Anki deck")
    p.add_argument("--csv", type=Path, metavar="FILE.csv", help="write the cards as CSV")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_cards)

    p = sub.add_parser(
        "mindmap",
        help="print a notebook's mind map (its sources' headings, or the main ideas a model "
        "wrote) as a Markdown outline; write it as SVG or OPML",
    )
    p.add_argument("notebook", help="notebook name (or number)")
    p.add_argument(
        "--ideas",
        action="store_true",
        help="the map of main ideas a model wrote (the one kept); default: the headings",
    )
    p.add_argument(
        "--model",
        help="write a new map of main ideas with this model now, and keep it (implies --ideas)",
    )
    p.add_argument("--svg", type=Path, metavar="FILE.svg")
    p.add_argument("--opml", type=Path, metavar="FILE.opml")
    p.add_argument("--markdown", type=Path, metavar="FILE.md")
    p.add_argument("--depth", type=int, metavar="N", help="levels drawn in the SVG (default: all)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_mindmap)

    p = sub.add_parser(
        "report",
        help="make a report of a notebook (a timeline or glossary quoted from its sources, or a "
        "briefing, study guide, FAQ or custom report written by a model), keep it, and print or "
        "export it with every citation's range",
    )
    p.add_argument("notebook", help="notebook name (or number)")
    p.add_argument(
        "--kind",
        required=True,
        choices=["timeline", "glossary", "briefing", "study-guide", "faq", "custom"],
    )
    p.add_argument(
        "--model",
        help="the answer model that writes it (needed for briefing, study-guide, faq and "
        "custom; for a timeline, it labels each entry)",
    )
    p.add_argument(
        "--source", type=int, action="append", metavar="ID",
        help="make it of this source only (repeat for several); default: every source in use",
    )  # fmt: skip
    p.add_argument("--instructions", help="a custom report's instructions, or a focus")
    p.add_argument(
        "--leave-out-unsupported",
        action="store_true",
        help="leave out a written sentence with no close match in the passages it cites "
        "(by default it is kept and marked)",
    )
    p.add_argument("--markdown", type=Path, metavar="FILE.md")
    p.add_argument("--docx", type=Path, metavar="FILE.docx")
    p.add_argument("--pdf", type=Path, metavar="FILE.pdf")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_report)

    p = sub.add_parser(
        "overview-audio",
        help="make an audio overview of a notebook (two hosts talking with a model, or a "
        "read-aloud brief of quotes without one), keep it, and write its audio and transcript "
        "with every line's time and citations",
    )
    p.add_argument("notebook", help="notebook name (or number)")
    p.add_argument(
        "--format",
        choices=["brief", "deep-dive", "debate", "read-aloud"],
        help="default: deep-dive with --model, else read-aloud (quotes, no model)",
    )
    p.add_argument("--model", help="the answer model that writes it")
    p.add_argument("--focus", help="what the hosts should dwell on")
    p.add_argument("--length", choices=["short", "default", "long"], default="default")
    p.add_argument("--language", help="a language code (en, ja, …); default: the sources'")
    p.add_argument(
        "--sources", type=parse_ids, metavar="ID,…",
        help="make it of these sources only; default: every source in use",
    )  # fmt: skip
    p.add_argument(
        "--out", type=Path, required=True, metavar="FILE",
        help="the audio file: .ogg or .opus (Ogg/Opus), .mp3 or .wav",
    )  # fmt: skip
    p.add_argument("--transcript", type=Path, metavar="FILE.md")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_overview_audio)

    p = sub.add_parser("export-notebook", help="write a notebook to one .knownote archive file")
    p.add_argument("notebook", help="notebook name (or number)")
    p.add_argument("file", type=Path, metavar="FILE.knownote")
    p.set_defaults(run=cmd_export_notebook)

    p = sub.add_parser("import-notebook", help="import a .knownote archive as a new notebook")
    p.add_argument("file", type=Path, metavar="FILE.knownote")
    p.add_argument("--as", dest="name", metavar="NAME", help="name of the new notebook")
    p.set_defaults(run=cmd_import_notebook)

    p = sub.add_parser("check", help="verify the whole database and the kept original files")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("backup", help="write a checked copy of the data folder into DIR")
    p.add_argument("dir", type=Path, metavar="DIR")
    p.set_defaults(run=cmd_backup)

    p = sub.add_parser("eval-answers", help="measure written answers on a SQuAD-format set")
    p.add_argument("dataset", type=Path, metavar="DATASET.json")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--model", help="answer model (default: the first one listed)")
    which.add_argument("--quoted", action="store_true", help="measure the quoted answers")
    p.add_argument("-k", type=int, default=8, help="passages put in front of the model")
    p.add_argument("--max-questions", type=int, help="only the first N questions")
    p.add_argument(
        "--skip", type=int, default=0, help="leave out the first N questions (a held-out part)"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_eval_answers, needs_store=False)

    p = sub.add_parser(
        "eval-support", help="measure support spans and their flags on a SQuAD-format set"
    )
    p.add_argument("dataset", type=Path, metavar="DATASET.json")
    p.add_argument("-k", type=int, default=8, help="passages retrieved and cited (default 8)")
    p.add_argument("--max-questions", type=int, help="only the first N questions")
    p.add_argument(
        "--skip", type=int, default=0, help="leave out the first N questions (a held-out part)"
    )
    p.add_argument(
        "--answers-from",
        type=Path,
        metavar="PARALLEL.json",
        help="write each answer sentence from this set's question and answer of the same id "
        "(another language than the contexts: support across languages)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=cmd_eval_support, needs_store=False)

    p = sub.add_parser(
        "mcp", help="serve the notebooks to MCP clients (desktop assistants, agents): stdio"
    )
    p.add_argument(
        "--http",
        action="store_true",
        help="serve over streamable HTTP at http://HOST:PORT/mcp instead of stdio; the app's "
        "password (KNOWNOTE_PASSWORD or the secrets file) is the bearer token",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument(
        "--port",
        type=int,
        help="port for --http (default: KNOWNOTE_MCP_PORT, 8765, where the app serves MCP too)",
    )
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="also offer the tools that add a source (a file) and save a note",
    )
    p.set_defaults(run=cmd_mcp, needs_store=False)  # it opens the store, or relays to the app

    return parser


def say_upgrade(place: int, total: int, name: str) -> None:
    """A database written by an older KnowNote is being upgraded: each step, on stderr."""
    print(f"knownote: upgrading the database, step {place} of {total} ({name})", file=sys.stderr)


def may_read_pdfs(files: Sequence[str] | None) -> bool:
    """Whether these files may hold a PDF or an image, which PyMuPDF reads, by their first bytes
    (an address may be either; no files: the command's own, unknown here)."""
    from knownote.read.fetch import looks_like_address
    from knownote.read.sniff import is_image, is_pdf

    if files is None:
        return True
    for name in files:
        if looks_like_address(name):
            return True
        try:
            with open(name, "rb") as file:
                head = file.read(1024)
        except OSError:
            continue  # said in its turn
        if is_pdf(head) or is_image(head):
            return True
    return False


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = Settings()
    if args.db:
        settings = settings.with_(home=args.db.parent)
    db_path = args.db or settings.db_path
    args.db_path = db_path
    if getattr(args, "reads_files", False):
        from knownote.read.timelimit import start_reader_server

        # First: its readers load (seconds) while this process loads the store and the model.
        start_reader_server(pdfs=may_read_pdfs(getattr(args, "files", None)))
    try:
        from knownote.store.db import Store

        if not getattr(args, "needs_store", True):
            return args.run(args, None, settings)
        store = Store.open(db_path, progress=say_upgrade)
        try:
            return args.run(args, store, settings)
        finally:
            store.close()
    except NotFound as e:
        print(f"knownote: {e}", file=sys.stderr)
        return 2
    except KnowNoteError as e:
        print(f"knownote: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("knownote: interrupted; nothing half-imported was kept.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
