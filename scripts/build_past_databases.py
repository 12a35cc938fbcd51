"""Build the databases and archives of past KnowNote versions that tests/store/test_upgrades.py
opens with today's code.

Walks the first-parent history of main for the commits that changed the migrations
(knownote/migrations.py, knownote/store/migrations.py since the layout by stage). Each new set
of migrations is a level; for each level it checks out the last commit of main at that level
(`git worktree add --detach`) and runs that version's own command line with PYTHONPATH at the old
tree: import three small documents this script writes, search a few fixed questions, ask them
(answered from the passages: no model server, so the extractive answer every version has), keep
an answer and a written note where the version has notes, and export the notebook where the
version has archives. What the old version said is written beside its database as JSON.

    .venv/bin/python scripts/build_past_databases.py [--only COMMIT ...] [--keep-worktrees]

Writes tests/store/past_versions/<NN>-<commit>.tar.gz (the database and its kept files),
<NN>-<commit>.json, archive-format-<N>.knownote (the oldest version writing each format) and
manifest.json. The tests read only these files, never the git history.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "store" / "past_versions"
MIGRATION_PATHS = ("knownote/migrations.py", "knownote/store/migrations.py")
NOTEBOOK = "Past"
MODEL = "all-MiniLM-L6-v2"
DB_NAME = "knownote.duckdb"
# A port nothing listens on: every version answers from the passages, without a model server.
NO_SERVER = "http://127.0.0.1:9"

QUESTIONS = (
    "When was the harbour wall rebuilt?",
    "Which apple variety ripens first in the orchard?",
    "How far can the lighthouse beam be seen?",
)

HARBOUR = """# The harbour of Kelby

Kelby grew around a small natural harbour on the north coast. Fishing boats have landed herring
there since the fourteenth century, and the market hall still stands beside the quay.

## The harbour wall

The first harbour wall was built of timber and rubble. A storm in the winter of 1821 broke it in
three places, and the town rebuilt the harbour wall in granite between 1824 and 1827, paid for by
a tax of one penny on every barrel of herring landed at the quay.

## The herring trade

In the good years more than forty boats worked from Kelby. The catch was salted in barrels on the
quay and shipped south by coaster. The trade declined after 1900, when the shoals moved away from
the coast and larger steam drifters worked from the bigger ports.

## Kelby today

Today the harbour holds pleasure boats and a few crab boats. The granite wall is a listed
structure, and the old fish market has become a museum of the herring trade.
"""

ORCHARD = """The Mill Lane orchard

The orchard on Mill Lane was planted in 1952 with forty apple trees of twelve varieties. It is
looked after by volunteers, who prune the trees each winter and pick the fruit each autumn.

Discovery is the first apple to ripen in the orchard, usually in the middle of August; its fruit
does not keep and is eaten straight from the tree. Worcester Pearmain follows in early September.
Bramley's Seedling, the cooking apple, is picked last, in October, and keeps until spring.

The volunteers press the windfalls into juice at an open day in October. Visitors may pick a bag
of apples for a small donation, which pays for new trees to replace the oldest ones.
"""

LIGHTHOUSE_PAGES = (
    "Point Ness lighthouse\n\nThe lighthouse on Point Ness was first lit in 1869. Its tower is "
    "twenty-six metres tall and painted white with a single red band. The keepers lived in two "
    "cottages beside the tower until the light was automated in 1988.",
    "The light\n\nThe lamp gives two white flashes every ten seconds. The beam can be seen from "
    "twenty nautical miles away in clear weather. A fog signal sounded twice a minute in poor "
    "visibility until it was switched off in 2005.",
)


def write_documents(folder: Path) -> list[Path]:
    """The three documents every version imports: Markdown, plain text and a two-page PDF."""
    import pymupdf

    harbour = folder / "harbour.md"
    harbour.write_text(HARBOUR, encoding="utf-8")
    orchard = folder / "orchard.txt"
    orchard.write_text(ORCHARD, encoding="utf-8")
    pdf = pymupdf.open()
    for text in LIGHTHOUSE_PAGES:
        page = pdf.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 520, 760), text, fontsize=12)
    pdf.set_metadata({"title": "Point Ness lighthouse", "creationDate": "D:20261130000000Z"})
    lighthouse = folder / "lighthouse.pdf"
    pdf.save(lighthouse, deflate=True, no_new_id=True)  # the same bytes on every run
    return [harbour, orchard, lighthouse]


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


def migrations_at(commit: str) -> tuple[str, ...]:
    """The migration names in that commit's MIGRATIONS list, in order."""
    for path in reversed(MIGRATION_PATHS):
        try:
            text = git("show", f"{commit}:{path}")
        except subprocess.CalledProcessError:
            continue
        listed = re.search(r"^MIGRATIONS\b[^=]*= \[(.*?)\]", text, re.M | re.S)
        return tuple(re.findall(r"\b(m\d{3}_\w+)\b", listed.group(1))) if listed else ()
    return ()


def levels(branch: str = "main") -> list[dict]:
    """One entry per set of migrations main has had: the last first-parent commit at it."""
    commits = git("rev-list", "--first-parent", "--reverse", branch).split()
    changed = set(git("rev-list", "--first-parent", branch, "--", *MIGRATION_PATHS).split())
    found: list[dict] = []
    for commit in commits:
        if commit in changed:
            names = migrations_at(commit)
            if names and (not found or names != found[-1]["migrations"]):
                found.append({"first": commit, "migrations": names})
        if found:
            found[-1]["commit"] = commit  # the last commit of main at this level, so far
    return found


def old_env(tree: Path, work: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(tree),
        "HF_HUB_OFFLINE": "1",
        # One data folder for every version, so a model made there (ONNX) is made once.
        "KNOWNOTE_HOME": str(work / "home"),
        "OLLAMA_HOST": NO_SERVER,
        # The packaged English model at every level (the default until the multilingual one);
        # its ONNX graph is made once for the versions that run it.
        "KNOWNOTE_EMBEDDING_MODEL": MODEL,
        "KNOWNOTE_MODEL_CACHE": str(Path(tempfile.gettempdir()) / "knownote-test-models"),
    }


# Run with the old tree: that version's own command line, each command in turn in one process
# (so its model loads once), "{chat}" standing for the chat the first answer started. Prints
# each command's return code and output as JSON.
DRIVER = """
import contextlib, io, json, sys
import knownote
from knownote.cli import main
assert knownote.__file__.startswith(sys.argv[1]), knownote.__file__
results, chat = [], None
for argv in json.loads(sys.argv[2]):
    argv = [str(chat) if a == "{chat}" else a for a in argv]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
    text = out.getvalue()
    if "--json" in argv and code in (0, 1) and text.strip():
        value = json.loads(text)
        if isinstance(value, dict) and value.get("chat_id"):
            chat = value["chat_id"]
        results.append({"code": code, "json": value})
    else:
        results.append({"code": code, "text": text})
print(json.dumps(results))
"""


def run_old(tree: Path, work: Path, commands: list[list[str]]) -> list[dict]:
    """Run the old command line's `main` on each command; their codes and outputs."""
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(tree), json.dumps(commands)],
        cwd=work, env=old_env(tree, work), capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(done.stderr.strip()[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def json_of(result: dict, what: str) -> object:
    if "json" not in result:
        raise RuntimeError(f"{what}: exit {result['code']}: {result.get('text', '')[-500:]}")
    return result["json"]


# Run with the old tree: keep the chat's last answer as a note and write one note, with
# whichever notes module that version has.
NOTES = """
import json, sys
from pathlib import Path
try:
    from knownote.answer import chats, notes
    from knownote.store.db import Store
except ImportError:
    from knownote import chats, notes
    from knownote.store import Store
store = Store.open(Path(sys.argv[1]))
notebook_id = int(sys.argv[2])
answer = chats.load_chat(store, int(sys.argv[3]))[-1]
kept = notes.save_answer(store, notebook_id, answer)
body = "Walk to the **harbour wall**, then the orchard."
written = notes.write(store, notebook_id, "Visit", body)
store.close()
print(json.dumps([kept, written]))
"""


def table_rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[list]:
    return [list(row) for row in con.execute(sql).fetchall()]


def has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(
        con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]
        ).fetchall()[0][0]
    )


def stored(db: Path) -> dict:
    """What the old version stored, read from its database (with today's DuckDB, read only)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        record = {
            "migrations": table_rows(con, "SELECT version, name FROM _migrations ORDER BY version"),
            "documents": table_rows(
                con,
                "SELECT id, filename, kind, sha256, text, n_chars, n_pages FROM documents "
                "ORDER BY id",
            ),
            "passages": table_rows(
                con,
                'SELECT document_id, idx, start, "end", page_start, page_end, text '
                "FROM passages ORDER BY document_id, idx",
            ),
            "pages": table_rows(
                con, 'SELECT document_id, page_no, start, "end" FROM pages ORDER BY 1, 2'
            ),
        }
        if has_table(con, "answer_passages"):
            record["answer_passages"] = table_rows(
                con,
                'SELECT message_id, n, document_id, passage_index, start, "end", text, cited '
                "FROM answer_passages ORDER BY message_id, n",
            )
        if has_table(con, "note_passages"):
            record["note_passages"] = table_rows(
                con,
                'SELECT note_id, n, document_id, passage_index, start, "end", text, cited '
                "FROM note_passages ORDER BY note_id, n",
            )
            record["notes"] = table_rows(con, "SELECT id, title, body FROM notes ORDER BY id")
        return record
    finally:
        con.close()


def build_level(level: dict, number: int, work: Path, documents: list[Path]) -> dict:
    """Run the old version at `level` in a worktree; return its manifest entry."""
    commit = level["commit"]
    short = commit[:7]
    tree = work / f"tree-{short}"
    folder = work / f"db-{short}"
    folder.mkdir()
    db = folder / DB_NAME
    entry = {
        "level": number,
        "commit": short,
        "first_commit": level["first"][:7],
        "date": git("log", "-1", "--format=%cI", commit).strip(),
        "subject": git("log", "-1", "--format=%s", commit).strip()[:120],
        "migrations": list(level["migrations"]),
        "database": f"{number:02d}-{short}.tar.gz",
        "record": f"{number:02d}-{short}.json",
        "holds": [],
    }
    git("worktree", "add", "--detach", str(tree), commit)
    try:
        db_arg = ["--db", str(db)]
        (help_text,) = run_old(tree, work, [["--help"]])
        commands = help_text["text"]
        has = {name: bool(re.search(rf"\b{name}\b", commands))
               for name in ("search", "ask", "export-notebook")}  # fmt: skip
        plan = [[*db_arg, "import", NOTEBOOK, *map(str, documents), "--json"]]
        modes = ("hybrid", "keyword", "vector")
        if has["search"]:
            plan += [[*db_arg, "search", NOTEBOOK, q, "-k", "5", "--mode", mode, "--json"]
                     for mode in modes for q in QUESTIONS]  # fmt: skip
        if has["ask"]:
            plan += [[*db_arg, "ask", NOTEBOOK, q, "-k", "3", "--json",
                      *(["--chat", "{chat}"] if i else [])]
                     for i, q in enumerate(QUESTIONS)]  # fmt: skip
        results = iter(run_old(tree, work, plan))
        record: dict = {"questions": list(QUESTIONS)}
        record["import"] = json_of(next(results), "import")
        entry["holds"].append("notebook with 3 documents (Markdown, text, 2-page PDF)")
        if has["search"]:
            record["search"] = {
                mode: [json_of(next(results), "search") for _ in QUESTIONS] for mode in modes
            }
            entry["holds"].append("search results (hybrid, keyword, vector)")
        if has["ask"]:
            record["answers"] = [json_of(next(results), "ask") for _ in QUESTIONS]
            chat = record["answers"][0]["chat_id"]
            entry["holds"].append("a chat of 3 extractive answers with citations")
        if has["ask"] and git_has(commit, "def save_answer"):
            notebook_id = imported_notebook(db)
            done = subprocess.run(
                [sys.executable, "-c", NOTES, str(db), str(notebook_id), str(chat)],
                cwd=folder, env=old_env(tree, work), capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            if done.returncode:
                raise RuntimeError(f"notes: {done.stderr.strip()[-2000:]}")
            record["notes"] = json.loads(done.stdout)
            entry["holds"].append("2 notes (a kept answer with citations, a written one)")
        if has["export-notebook"]:  # last, so the archive holds the notes too
            archive = folder / "past.knownote"
            (exported,) = run_old(
                tree, work, [[*db_arg, "export-notebook", NOTEBOOK, str(archive)]]
            )
            if exported["code"]:
                raise RuntimeError(f"export-notebook: {exported.get('text')}")
            with zipfile.ZipFile(archive) as zf:
                manifest = json.loads(zf.read("manifest.json"))
            entry["archive_version"] = manifest.get("version")
            entry["holds"].append(f"an archive of format {manifest.get('version')}")
        record["stored"] = stored(db)
        entry["versions"] = [v for v, _ in record["stored"]["migrations"]]
        return {"entry": entry, "record": record, "folder": folder}
    finally:
        git("worktree", "remove", "--force", str(tree))


def git_has(commit: str, text: str) -> bool:
    """Whether the package at `commit` holds `text` (git grep exits 1 when it does not)."""
    done = subprocess.run(
        ["git", "grep", "-q", text, commit, "--", "knownote"], cwd=ROOT, capture_output=True
    )
    return done.returncode == 0


def imported_notebook(db: Path) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT id FROM notebooks WHERE name = ?", [NOTEBOOK]).fetchall()[0][0]
    finally:
        con.close()


def pack(folder: Path, target: Path) -> None:
    """The database and its kept files as one gzip-compressed tar, reproducible byte for byte."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(folder.rglob("*")):
            kept = path.name == DB_NAME or path.parent.name == f"{DB_NAME}.files"
            if path.is_file() and kept:
                info = tar.gettarinfo(str(path), str(path.relative_to(folder)))
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                with path.open("rb") as f:
                    tar.addfile(info, f)
    with gzip.GzipFile(target, "wb", compresslevel=9, mtime=0) as gz:
        gz.write(buffer.getvalue())


def print_table(manifest: dict) -> None:
    """The stored levels as a Markdown table (docs/data.md)."""
    print("| level | commit, date | migrations | added | recorded by | holds | archive |")
    print("|---|---|---|---|---|---|---|")
    before: list[str] = []
    for e in manifest["levels"]:
        added = ", ".join(name[:4] for name in e["migrations"] if name not in before)
        before = e["migrations"]
        if "unbuildable" in e:
            print(f"| {e['level']} | `{e['commit']}` | {len(before)} | {added} | unbuildable: "
                  f"{e['unbuildable'][:80]} | | |")  # fmt: skip
            continue
        numbers = [int(name[1:4]) for name in e["migrations"]]
        recorded = "number" if e["versions"] == numbers else "place in the list"
        said = " ".join(e["holds"])
        holds = ", ".join(
            what for what, word in (("documents", "notebook"), ("search", "search"),
                                    ("chat", "chat"), ("notes", "notes")) if word in said
        )  # fmt: skip
        print(f"| {e['level']} | `{e['commit']}` {e['date'][:10]} | {len(numbers)} | {added} "
              f"| {recorded} | {holds} | {e.get('archive_version') or '–'} |")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="build only these commits (short hashes)")
    parser.add_argument(
        "--table", action="store_true", help="print the stored levels as Markdown; build nothing"
    )
    args = parser.parse_args()
    if args.table:
        print_table(json.loads((OUT / "manifest.json").read_text()))
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    manifest_path = OUT / "manifest.json"
    old = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    built = {e["commit"]: e for e in old.get("levels", [])}
    archives = dict(old.get("archives", {}))
    with tempfile.TemporaryDirectory(prefix="knownote-past-") as tmp:
        work = Path(tmp)
        documents = write_documents(work)
        for number, level in enumerate(levels(), start=1):
            short = level["commit"][:7]
            if args.only and short not in args.only:
                continue
            print(f"level {number}: {short} {level['migrations'][-1]}", flush=True)
            try:
                done = build_level(level, number, work, documents)
            except (RuntimeError, subprocess.CalledProcessError, json.JSONDecodeError) as e:
                built[short] = {
                    "level": number,
                    "commit": short,
                    "migrations": list(level["migrations"]),
                    "unbuildable": str(e)[-500:],
                }
                print(f"  unbuildable: {e}", flush=True)
                continue
            entry, folder = done["entry"], done["folder"]
            pack(folder, OUT / entry["database"])
            (OUT / entry["record"]).write_text(
                json.dumps(done["record"], indent=1, ensure_ascii=False) + "\n"
            )
            version = entry.get("archive_version")
            if version is not None and (
                str(version) not in archives or archives[str(version)]["level"] >= number
            ):
                name = f"archive-format-{version}.knownote"
                shutil.copyfile(folder / "past.knownote", OUT / name)
                archives[str(version)] = {"file": name, "level": number, "commit": short}
            built[short] = entry
            print(f"  {', '.join(entry['holds'])}", flush=True)
    manifest = {
        "built": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "notebook": NOTEBOOK,
        "database": DB_NAME,
        "levels": sorted(built.values(), key=lambda e: e["level"]),
        "archives": dict(sorted(archives.items())),
    }
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"{len(manifest['levels'])} levels, {len(archives)} archive formats, {total:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
