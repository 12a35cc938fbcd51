"""Extraction under a time limit, in a child process that is killed when the limit passes.

A file can be built to hang a reader (a PDF page whose drawing nests forms a billion times, an
XML part that expands entities, text that makes a pattern backtrack). Parsing in C or Python
cannot be interrupted inside a thread, so extraction runs in a child process, one per file,
killed when its limit passes. The children are forked from a reader server
(`python -m knownote.read.timelimit`): a fresh interpreter started once per app process, never
a fork of the app with its threads, that loads the readers and does nothing but fork (between
two readers' loading it already answers, `READERS`). A file's reading therefore starts in
milliseconds instead of the second an interpreter takes to load the readers. The waiting
thread only waits on a socket, so the app stays responsive. Everything a reader needs comes with
the file's arguments: the children see the environment the server started with.

The limit scales with the file: `seconds` per page (PDF pages as the child counts them, at least
one), so a long book or a long scan that is slow page by page is never stopped for its length.
Each page read by OCR is reported back to the parent and gives the child another `seconds`, so a
many-frame image that the page count cannot see is not stopped for its length either.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from knownote.errors import (
    ExtractionTimeout,
    KnowNoteError,
    ReaderCrashed,
    ReaderFailed,
    UnreadableFile,
)

# Only what starting the server needs is loaded with this module, so that a command can start
# it first thing (`start_reader_server`); counting a file's parts loads the rest.
if TYPE_CHECKING:
    from knownote.read.audio import SpeechOptions
    from knownote.read.extracted import Extracted, OcrLimits, OcrProgress

_ROOT = str(Path(__file__).resolve().parents[1])
STARTUP_SECONDS = 120.0


def count_parts(data: bytes) -> int:
    """Pages of a PDF, minutes of a recording (1 for anything else, or when the count cannot be
    had cheaply)."""
    from knownote.read.audio import duration_seconds
    from knownote.read.sniff import is_recording

    if is_recording(data):
        seconds = duration_seconds(data)
        return max(1, math.ceil(seconds / 60)) if seconds else 1
    if not data.lstrip()[:5].startswith(b"%PDF"):
        return 1
    import pymupdf

    try:
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            return max(1, doc.page_count)
    except (RuntimeError, ValueError):  # pymupdf's errors; extract() reports them properly
        return 1


def _send(sock: socket.socket, kind: bytes, payload: bytes) -> None:
    sock.sendall(kind + struct.pack("<Q", len(payload)) + payload)


def _child(sock: socket.socket) -> None:
    """A forked child: report that it runs, read the arguments, report the page count, then the
    result, all on its own socket to the app."""
    from knownote.read.extract import extract  # loaded by the server already

    _send(sock, b"S", b"")
    chunks = []
    while chunk := sock.recv(1 << 20):
        chunks.append(chunk)
    args = pickle.loads(b"".join(chunks))
    _send(sock, b"P", struct.pack("<Q", count_parts(args["data"])))

    def progress(done: int, total: int) -> None:
        _send(sock, b"G", struct.pack("<QQ", done, total))

    try:
        extracted = extract(args["data"], args["filename"], args["password"],
                            max_chars=args["max_chars"], max_pages=args["max_pages"],
                            ocr=args["ocr"], progress=progress,
                            main_content=args["main_content"], speech=args["speech"],
                            layout=args["layout"])  # fmt: skip
        result = ("done", extracted)
    except KnowNoteError as e:
        result = ("refused", e)
    except Exception as e:  # reported to the parent as it is, never hidden
        result = ("failed", f"{type(e).__name__}: {e}")
    _send(sock, b"R", pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))


# What the server loads after what every child needs (`knownote.read.extract`, with the text and
# Markdown readers), PDFs' first (what a library is mostly made of): between two of them it
# answers the app, so a text file need not wait for them, and a child forked before a reader has
# loaded loads it itself. PyMuPDF Layout's model is not among them (`import pymupdf` would load
# it, another second of CPU while an import embeds): the server loads it before the first child
# that reads page layouts (`LAYOUTS`), and keeps it for the others.
PDF_READERS = ("pymupdf", "knownote.read.pdf")  # PDFs and images (0.15-0.4 s of CPU)
READERS = (
    *PDF_READERS,
    "knownote.read.zipcheck",
    "knownote.read.html",
    "knownote.read.web",
    "knownote.read.epub",
    "knownote.read.office",
)
JOB, LAYOUTS = b"J", b"L"  # what the app sends with a child's socket: LAYOUTS, it reads them


def _serve(control: socket.socket, readers: Sequence[str] = READERS) -> None:
    """The reader server: load the `readers`, and meanwhile fork one child per socket
    the app sends, answer with its pid, and when it ends write its exit status ("X") on that
    socket after whatever it wrote. Ends (killing its children) when the app closes the control
    socket."""
    import importlib

    import knownote.read.extract  # noqa: F401  (what every child needs, loaded once)

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C in a terminal is for the app

    to_load = list(readers)
    sys.modules["pymupdf.layout"] = None  # held back (pdf_roles.load_layout_model)
    children: dict[int, socket.socket] = {}
    while True:
        wait = 0 if to_load else 0.05 if children else None
        ready, _, _ = select.select([control], [], [], wait)
        if not ready and to_load:
            importlib.import_module(to_load.pop(0))
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            job = children.pop(pid)
            with contextlib.suppress(OSError):
                job.setblocking(False)
                job.send(
                    b"X"
                    + struct.pack("<Q", 8)
                    + struct.pack("<q", os.waitstatus_to_exitcode(status))
                )
            job.close()
        if not ready:
            continue
        try:
            kind, fds, _, _ = socket.recv_fds(control, 1, 1)
        except OSError:
            kind, fds = b"", []
        if not fds:  # the app has gone: nobody wants what the children read
            for pid in children:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            for pid in children:
                os.waitpid(pid, 0)
            return
        job = socket.socket(fileno=fds[0])
        if kind == LAYOUTS:
            from knownote.read.pdf_roles import load_layout_model

            load_layout_model()  # once: later children have it
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                control.close()
                for other in children.values():
                    other.close()
                _child(job)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        children[pid] = job
        control.sendall(struct.pack("<q", pid))


class _Server:
    """This process's reader server, started on first use and again if it has died."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.process: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.owner = os.getpid()  # a fork of the app must not share the server's socket
        self.forked = False  # whether it has read a file (else it is stopped without waiting)

    def start(self, readers: Sequence[str] = READERS) -> None:
        """Start the server unless it runs (its readers load while the caller goes on)."""
        with self.lock:
            self._own()
            if self.process is None or self.process.poll() is not None:
                self._start(readers)

    def _own(self) -> None:
        if self.owner != os.getpid():
            self.owner, self.process, self.control = os.getpid(), None, None

    def _start(self, readers: Sequence[str] = READERS) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p)}  # fmt: skip
        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "knownote.read.timelimit", str(theirs.fileno()), *readers],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=env, pass_fds=(theirs.fileno(),),
        )  # fmt: skip
        theirs.close()
        self.control = ours
        self.forked = False

    def fork(self, layouts: bool = False) -> tuple[int, socket.socket]:
        """A new child's pid and the app's end of its socket; `layouts`: the child reads page
        layouts (the server loads their model first)."""
        ours, theirs = socket.socketpair()
        try:
            with self.lock:
                self._own()
                for attempt in (1, 2):
                    if self.process is None or self.process.poll() is not None:
                        self._start()
                    try:
                        self.forked = True
                        kind = LAYOUTS if layouts else JOB
                        socket.send_fds(self.control, [kind], [theirs.fileno()])
                        return struct.unpack("<q", self._receive(8))[0], ours
                    except OSError:
                        self.stop()  # it has died: once more with a new one
                        if attempt == 2:
                            raise
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        raise AssertionError("unreachable")

    def _receive(self, size: int) -> bytes:
        answer = b""
        while len(answer) < size:
            chunk = self.control.recv(size - len(answer))
            if not chunk:
                raise ConnectionResetError("the reader server stopped")
            answer += chunk
        return answer

    def stop(self) -> None:
        if self.control is not None:
            self.control.close()
            self.control = None
        if self.process is not None and not self.forked:
            self.process.kill()  # started early and never used: no need to wait for its loading
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(10)  # waited for, its children's resource use counts as ours
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.process = None


_SERVER = _Server()
atexit.register(_SERVER.stop)


def start_reader_server(pdfs: bool = True) -> None:
    """Start this process's reader server now, so that its readers load (0.6-0.9 s of CPU)
    while the caller goes on to other work; the first file's reading then need not wait.
    Without `pdfs` (the files to read hold no PDF or image), PyMuPDF is not among them:
    0.15-0.4 s of CPU beside the model's loading, for nothing (a child that needs it loads it)."""
    _SERVER.start(READERS if pdfs else tuple(r for r in READERS if r not in PDF_READERS))


def extract_with_time_limit(
    data: bytes,
    filename: str,
    password: str | None = None,
    *,
    max_chars: int,
    max_pages: int,
    seconds: float,
    label: str | None = None,
    ocr: OcrLimits | None = None,
    progress: OcrProgress | None = None,
    main_content: bool = False,
    speech: SpeechOptions | None = None,
    layout: bool = True,
) -> Extracted:
    """`extract()` in a child process, stopped after `seconds` per page or minute of a
    recording (see the module).

    `progress(done, total)` is called in this process for each page the child reads by OCR and
    each minute of a recording it transcribes.
    """
    from knownote.read.sniff import is_image, is_pdf

    name = label or filename
    # an image's roles are always the layout model's (knownote.read.pdf.extract_image)
    pid, sock = _SERVER.fork(layouts=is_image(data) or (layout and is_pdf(data)))
    # Until the child has started, the clock is not the file's: a loaded machine may take long
    # to run it. The limit counts from the start.
    started = time.monotonic()
    limit = max(STARTUP_SECONDS, seconds)
    running = finished = False
    buffer = bytearray()
    try:
        arguments = pickle.dumps({"data": data, "filename": filename, "password": password,
                                  "max_chars": max_chars, "max_pages": max_pages, "ocr": ocr,
                                  "main_content": main_content, "speech": speech,
                                  "layout": layout})  # fmt: skip
        writer = threading.Thread(target=_write_all, args=(sock, arguments), daemon=True)
        writer.start()
        while True:
            message = _message(buffer)
            if message is not None:
                kind, payload = message
                if kind == b"S":
                    started, limit, running = time.monotonic(), seconds, True
                    continue
                if kind == b"P":
                    limit = seconds * max(1, struct.unpack("<Q", payload)[0])
                    continue
                if kind == b"G":
                    done, total = struct.unpack("<QQ", payload)
                    limit = max(limit, time.monotonic() - started + seconds)
                    if progress:
                        progress(done, total)
                    continue
                finished = True
                if kind == b"X":
                    (code,) = struct.unpack("<q", payload)
                    raise ReaderCrashed(
                        f"{name} made the reader stop (exit code {code}); it is probably "
                        "damaged or built to crash readers. Nothing was imported."
                    )
                return _result(pickle.loads(payload), name)
            remaining = started + limit - time.monotonic()
            if remaining <= 0 or not select.select([sock], [], [], remaining)[0]:
                if not running:
                    raise UnreadableFile(
                        f"The reader for {name} did not start within {limit:.0f} seconds; "
                        "the machine may be overloaded. Try again."
                    )
                raise ExtractionTimeout(
                    f"{name} took longer than {limit:,.0f} seconds to read ({seconds:g} "
                    "seconds per page or minute of recording, setting max_extract_seconds), "
                    "so reading it was "
                    "stopped. The file may be built to hang readers; nothing was imported."
                )
            chunk = sock.recv(1 << 20)
            if not chunk:
                finished = True
                raise ReaderCrashed(
                    f"{name} made the reader stop; it is probably damaged or built to crash "
                    "readers. Nothing was imported."
                )
            buffer += chunk
    finally:
        if not finished:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        sock.close()


def _write_all(sock: socket.socket, payload: bytes) -> None:
    """The arguments to the child, from a thread: a child that stops reading cannot block the
    clock."""
    with contextlib.suppress(OSError):
        sock.sendall(payload)
        sock.shutdown(socket.SHUT_WR)


def _message(buffer: bytearray) -> tuple[bytes, bytes] | None:
    """Take one whole message off the front of `buffer`, if it holds one."""
    if len(buffer) < 9:
        return None
    (size,) = struct.unpack("<Q", buffer[1:9])
    if len(buffer) < 9 + size:
        return None
    kind, payload = bytes(buffer[:1]), bytes(buffer[9 : 9 + size])
    del buffer[: 9 + size]
    return kind, payload


def _result(result: tuple[str, object], name: str) -> Extracted:
    kind, value = result
    if kind == "done":
        return value
    if kind == "refused":
        raise value
    raise ReaderFailed(f"{name} could not be read ({value}).")


if __name__ == "__main__":
    _serve(socket.socket(fileno=int(sys.argv[1])), sys.argv[2:])
    # At once: tearing down the loaded readers took half a second that the app waited for.
    os._exit(0)
