"""The upload budget, applied to the Streamlit server this app runs in.

Streamlit (1.67) accepts a PUT to `/_stcore/upload_file/<session>/<file>` from any open session,
signed in or not, and keeps the file in memory until that session ends. Two hooks on the running
server's own objects apply `knownote.ui.upload_budget` (Streamlit offers no setting for either):

- `Runtime.is_active_session`, which only the upload route calls, before it reads the request
  body: a session that may hold nothing more is refused there (403 when it has not signed in,
  413 when it is full), so its bytes are never read;
- `MemoryUploadedFileManager.add_file`, called once a file is read: a file that would take a
  session or the whole app over its bound is refused (413) and dropped.

A file the request is still sending waits on disk (Starlette spools multipart bodies over 1 MB),
so the memory held by uploads stays within `max_upload_total_mb` plus the file being kept.
"""

from __future__ import annotations

import threading

from starlette.exceptions import HTTPException
from streamlit import runtime
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

from knownote.settings import Settings
from knownote.ui.upload_budget import MB, UploadBudget

_INSTALL = threading.Lock()


def _manager() -> MemoryUploadedFileManager | None:
    if not runtime.exists():
        return None
    manager = runtime.get_instance().uploaded_file_mgr
    return manager if isinstance(manager, MemoryUploadedFileManager) else None


def _held(manager: MemoryUploadedFileManager, skip: tuple[str, str] | None = None) -> dict:
    """Bytes each session holds now (without `skip`, a (session, file) about to be replaced)."""
    with manager._lock:  # the manager's own lock: its dicts change on other threads
        return {
            session_id: sum(
                len(f.data) for file_id, f in files.items() if (session_id, file_id) != skip
            )
            for session_id, files in manager.file_storage.items()
        }


def guard_uploads(settings: Settings) -> UploadBudget | None:
    """Apply the budget to this server, once per process; None where no server runs (tests)."""
    manager = _manager()
    if manager is None:
        return None
    with _INSTALL:
        budget = getattr(manager, "knownote_budget", None)
        if budget is not None:
            return budget
        budget = UploadBudget(
            settings.max_upload_session_mb * MB, settings.max_upload_total_mb * MB
        )
        server = runtime.get_instance()
        is_active = server.is_active_session
        keep = manager.add_file

        def is_active_session(session_id: str) -> bool:
            if not is_active(session_id):
                budget.forget(session_id)
                return False
            refusal = budget.refusal(session_id, _held(manager))
            if refusal is not None:
                raise HTTPException(status_code=refusal.status, detail=refusal.reason)
            return True

        def add_file(session_id: str, file: UploadedFileRec) -> None:
            with budget.lock:  # checked and kept together: parallel uploads cannot both fit
                held = _held(manager, skip=(session_id, file.file_id))
                refusal = budget.refusal(session_id, held, incoming=len(file.data))
                if refusal is not None:
                    raise HTTPException(status_code=refusal.status, detail=refusal.reason)
                keep(session_id, file)

        server.is_active_session = is_active_session
        manager.add_file = add_file
        manager.knownote_budget = budget
        return budget


def admit_uploads() -> None:
    """Let this browser session upload (call it on each run once it is signed in)."""
    manager, ctx = _manager(), get_script_run_ctx()
    budget = getattr(manager, "knownote_budget", None)
    if budget is not None and ctx is not None:
        budget.admit(ctx.session_id)


def release(files: list[UploadedFile]) -> None:
    """Drop uploaded files from memory once their bytes are kept elsewhere (queued, imported)."""
    manager, ctx = _manager(), get_script_run_ctx()
    if manager is None or ctx is None:
        return
    for file in files:
        manager.remove_file(ctx.session_id, file.file_id)
