"""Extraction under a time limit, in a child process that is killed when the limit passes.

A file can be built to hang a reader (a PDF page whose drawing nests forms a billion times, an
XML part that expands entities, text that makes a pattern backtrack). Parsing in C or Python
cannot be interrupted inside a thread, so extraction runs in a child interpreter
(`python -m knownote.read.timelimit`): a fresh process, never a fork of the app with its
threads. The waiting thread only waits on a pipe, so the app stays responsive meanwhile.

The limit scales with the file: `seconds` per page (PDF pages as the child counts them, at least
one), so a long book or a long scan that is slow page by page is never stopped for its length.
Each page read by OCR is reported back to the parent and gives the child another `seconds`, so a
many-frame image that the page count cannot see is not stopped for its length either.
"""

from __future__ import annotations

import math
import os
import pickle
import selectors
import struct
import subprocess
import sys
import time
from pathlib import Path

from knownote.errors import ExtractionTimeout, KnowNoteError, UnreadableFile
from knownote.read.audio import SpeechOptions, duration_seconds
from knownote.read.extracted import Extracted, OcrLimits, OcrProgress
from knownote.read.sniff import is_recording

_ROOT = str(Path(__file__).resolve().parents[1])
STARTUP_SECONDS = 120.0


def count_parts(data: bytes) -> int:
    """Pages of a PDF, minutes of a recording (1 for anything else, or when the count cannot be
    had cheaply)."""
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


def _send(out, kind: bytes, payload: bytes) -> None:
    out.write(kind + struct.pack("<Q", len(payload)) + payload)
    out.flush()


def _child() -> None:
    """The child: read the arguments from stdin, report the page count, then the result."""
    from knownote.read.extract import extract  # the readers, loaded in the child only

    out = sys.stdout.buffer
    args = pickle.loads(sys.stdin.buffer.read())
    _send(out, b"S", b"")  # started: the interpreter and the readers are loaded
    _send(out, b"P", struct.pack("<Q", count_parts(args["data"])))

    def progress(done: int, total: int) -> None:
        _send(out, b"G", struct.pack("<QQ", done, total))

    try:
        extracted = extract(args["data"], args["filename"], args["password"],
                            max_chars=args["max_chars"], max_pages=args["max_pages"],
                            ocr=args["ocr"], progress=progress,
                            main_content=args["main_content"], speech=args["speech"])  # fmt: skip
        result = ("done", extracted)
    except KnowNoteError as e:
        result = ("refused", e)
    except Exception as e:  # reported to the parent as it is, never hidden
        result = ("failed", f"{type(e).__name__}: {e}")
    _send(out, b"R", pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))


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
) -> Extracted:
    """`extract()` in a child process, stopped after `seconds` per page or minute of a
    recording (see the module).

    `progress(done, total)` is called in this process for each page the child reads by OCR and
    each minute of a recording it transcribes.
    """
    name = label or filename
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p)}  # fmt: skip
    child = subprocess.Popen(
        [sys.executable, "-m", "knownote.read.timelimit"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    # Until the child has started, the clock is not the file's: a loaded machine may take long
    # to start an interpreter. The limit counts from the start.
    started = time.monotonic()
    limit = max(STARTUP_SECONDS, seconds)
    running = False
    buffer = bytearray()
    try:
        try:
            child.stdin.write(pickle.dumps({"data": data, "filename": filename,
                                            "password": password, "max_chars": max_chars,
                                            "max_pages": max_pages, "ocr": ocr,
                                            "main_content": main_content,
                                            "speech": speech}))  # fmt: skip
            child.stdin.close()
        except BrokenPipeError:
            pass
        with selectors.DefaultSelector() as selector:
            selector.register(child.stdout, selectors.EVENT_READ)
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
                    return _result(pickle.loads(payload), name)
                remaining = started + limit - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
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
                chunk = os.read(child.stdout.fileno(), 1 << 20)
                if not chunk:
                    child.wait(5)
                    raise UnreadableFile(
                        f"{name} made the reader stop (exit code {child.returncode}); it is "
                        "probably damaged or built to crash readers. Nothing was imported."
                    )
                buffer += chunk
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stdout.close()


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
    raise UnreadableFile(f"{name} could not be read ({value}).")


if __name__ == "__main__":
    _child()
