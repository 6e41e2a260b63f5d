"""One tab's records: the source it opened, the document over it, what it shows, and its passes.

A :class:`TabSession` is the one place that says where row ``i`` of a tab
comes from: :attr:`TabSession.records` is the opened source (a
:class:`~codec.sources.tfrecord_file.TFRecordFile` or a :class:`~codec.sources.shard_set.ShardSet`)
until editing starts, then the :class:`~codec.editing.edited.EditedFile` of the
:class:`~codec.editing.document.Document` put over it. Record ``i`` is always
``session.records.read(i)`` (``session.records.pinned(i)`` for a detail
view). The session also runs the source's index and verify passes on a
worker thread and holds the undo stack of the document's commands; the tab
and its parts follow its signals.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, NamedTuple

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from app.models.commands import DocumentChange, EditTarget
from app.shell.fetch_meter import FetchMeter
from app.workers.worker import PAINT_GATE, GeneratorWorker, one_line
from codec.datasets.payload_choice import Choice, apply
from codec.editing.document import Document, HistoryPlan
from codec.editing.edited import EditedFile
from codec.errors import FileChangedError, TFRecordError
from codec.index.scan import IndexProgress
from codec.sources.protocol import RecordSource
from codec.sources.shard_set import ShardSet
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.file_identity import identity_at

# What a tab opens: a source that also indexes and verifies itself (index_iter, verify_iter) and closes.
OpenedSource = TFRecordFile | ShardSet


class PassProgress(NamedTuple):
    """A worker's progress: which pass ("index" or "verify") and how far."""

    phase: str
    progress: IndexProgress


class TabSession(QObject):
    """The records of one tab (see the module docstring).

    Signals of the passes, in the order one pass event sends them:
    ``pass_started()``; ``problems_changed()`` a pass found more problems;
    ``rows_added(PassProgress)`` records were indexed (or checked);
    ``pass_finished()`` the pass ended (:attr:`phase` says how);
    ``state_changed()`` what a status bar shows may read differently (after
    every pass event and every edit); ``finished()`` the source's passes are over
    (a whole-file pass may start). Editing: ``source_changed()`` :attr:`records` is another
    object (editing began or stopped, or the tab reopened a file);
    ``records_changed(DocumentChange)`` an edit, undo or redo changed rows.
    ``about_to_reopen()`` / ``reopened()`` around :meth:`reopen` (read nothing
    of the old source after the first). ``payload_changed()`` then ``reopened()``
    after :meth:`set_choice`: the same records decode differently now, so what
    was decoded from them (rows, thumbnails, statistics) is stale.
    ``file_changed(str)``: the file changed on disk while it was read (any
    thread may emit it).
    """

    problems_changed = Signal()
    rows_added = Signal(object)  # PassProgress
    pass_started = Signal()
    pass_finished = Signal()
    state_changed = Signal()
    finished = Signal()
    source_changed = Signal()
    records_changed = Signal(object)  # DocumentChange
    about_to_reopen = Signal()
    reopened = Signal()
    payload_changed = Signal()
    file_changed = Signal(str)

    def __init__(self, source: OpenedSource, parent: QObject | None = None, *, auto_verify: bool = False,
                 edit_block: str | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.auto_verify = auto_verify  # verify right after indexing
        self.edit_block = edit_block  # why these records can never be edited (a shard set), else None
        self.stack = QUndoStack(self)
        self.target: EditTarget | None = None
        self.edited: EditedFile | None = None
        self.phase = "index"  # "index", "verify", "done", "cancelled", "failed"
        self.last: IndexProgress | None = None
        self.failure: str | None = None  # why the last pass failed (one line)
        self._worker: GeneratorWorker | None = None
        self._pass_over = True  # the last pass (if any) has sent its last signal
        self._closed = False
        self._meter = FetchMeter()  # a URL's throughput while its passes read it

    # -- what the tab shows -------------------------------------------------
    @property
    def records(self) -> RecordSource:
        """The records the tab shows: the edited view once editing is on, else the source."""
        return self.edited if self.edited is not None else self.source

    @property
    def document(self) -> Document | None:
        return None if self.target is None else self.target.document

    @property
    def modified(self) -> bool:
        """Edits not saved yet (the undo stack is not at its clean point)."""
        return not self.stack.isClean()

    @property
    def fetched(self) -> int | None:
        """Bytes the source has read from the network (a URL's, or a set of URLs'); None when local."""
        return self.source.bytes_fetched

    def fetch_rate(self) -> float:
        """Bytes per second the source has fetched lately while a pass runs; 0 otherwise."""
        fetched = self.fetched
        if fetched is None or not self.is_running():
            return 0.0
        return self._meter.sample(fetched)

    # -- the document ---------------------------------------------------------
    def start_editing(self) -> bool:
        """Put a Document over the source once it is fully indexed; True when editing is on."""
        if self.target is not None:
            return True
        if self.edit_block or not self.source.indexed or self.source.following:
            return False  # (a followed file grows under any document)
        document = Document(self.source)
        self.edited = EditedFile(document)
        self.target = EditTarget(document, self)
        self.target.changed.connect(self._document_changed)
        self.source_changed.emit()
        return True

    def stop_editing(self) -> None:
        """Forget the document and its history: the tab shows the source again."""
        had = self._drop_document()
        if had:
            self.source_changed.emit()

    def _drop_document(self) -> bool:
        self.stack.clear()
        self.stack.setClean()
        if self.target is None:
            return False
        self.target.changed.disconnect(self._document_changed)
        self.target.deleteLater()
        self.target = None
        self.edited = None
        return True

    def discard(self, select: int) -> None:
        """Drop every unsaved edit (the records read as the source again); ``select`` is shown next."""
        if self.target is None:
            return
        self.stack.clear()
        self.target.document.reset()
        self.stack.setClean()
        self._document_changed(DocumentChange(None, (max(0, select),)))

    def _document_changed(self, change: DocumentChange) -> None:
        self.records_changed.emit(change)
        self.state_changed.emit()  # the record count in the status bar

    # -- how the records decode --------------------------------------------------
    def set_choice(self, choice: Choice) -> None:
        """Decode the records with ``choice``'s payload and label names from now on (File > Decode As…,
        File > Label Map…). The document, its unsaved edits and the undo history stay: they are bytes."""
        apply(choice, self.source)
        self.payload_changed.emit()
        self.reopened.emit()
        self.state_changed.emit()

    # -- the source -----------------------------------------------------------
    def reopen(self, path: str) -> None:
        """Show the file at ``path`` from now on (after a save): a new source, index and history.

        Raises codec.errors.TFRecordError (one line) when it cannot be opened;
        nothing changes then. A URL is asked over the network: open it on a
        worker and hand it to :meth:`replace_source` instead.
        """
        self.replace_source(TFRecordFile(path))

    def replace_source(self, source: TFRecordFile, history: HistoryPlan | None = None) -> None:
        """Show ``source`` (an opened file) from now on: see :meth:`reopen`. ``history``: ``source`` is the
        indexed file the document was just saved to, and the undo history goes on over it (saved here)."""
        # the same records (saved) or their newer bytes: they decode as before
        source.payload, source.labels = self.source.payload, self.source.labels
        self.about_to_reopen.emit()
        if history is None or self.target is None:
            self._drop_document()
        else:
            self._rebase(source, history)
        old, self.source = self.source, source
        self.source_changed.emit()
        old.close()
        self.last = None
        self.failure = None
        self.reopened.emit()
        self.start()

    def history(self) -> list[tuple]:
        """Every document state the undo stack can go back or forward to (before a save plans for them)."""
        return [snap for i in range(self.stack.count()) for snap in self.stack.command(i).snapshots()]

    def _rebase(self, source: TFRecordFile, plan: HistoryPlan) -> None:
        """The document and its undo stack go on over the saved file: this is the saved (clean) point."""
        document = self.target.document
        try:
            document.rebase(source, plan)  # checked before it changes anything
        except TFRecordError:
            self._drop_document()
            return
        for i in range(self.stack.count()):
            self.stack.command(i).rebase(lambda snap: Document.translate(snap, plan))
        self.edited = EditedFile(document)
        self.stack.setClean()

    @contextmanager
    def watching_changes(self):
        """Report a FileChangedError raised inside (on any thread) as ``file_changed``, then let it go on."""
        try:
            yield
        except FileChangedError as exc:
            self.file_changed.emit(one_line(exc))
            raise

    def changed_on_disk(self) -> bool:
        """The file on disk is not the one opened (see :mod:`codec.storage.file_identity`); a URL's: the
        codec found its object changed, and only its store can say more."""
        source = self.source
        if source.identity is None:  # a URL, or several files (each checks itself)
            return True
        try:
            return identity_at(source.path) != source.identity
        except TFRecordError:
            return True

    # -- the passes ------------------------------------------------------------
    def is_running(self) -> bool:
        """A pass is under way: over once its last signal is handled (its thread may take a
        moment more to end, and passes that end must be seen as ended by the handlers)."""
        return self._worker is not None and not self._pass_over and self._worker.is_running()

    @property
    def fraction(self) -> float:
        return self.last.fraction if self.last is not None else 0.0

    def cancelled(self) -> bool:
        return self._worker is not None and self._worker.cancelled

    def start(self) -> None:
        """Index the source on a worker thread (then verify it when ``auto_verify``)."""
        self._run(self._index_passes, "index")

    def verify(self) -> bool:
        """Check every record's data CRC on a worker thread; False if busy."""
        if self.is_running() or self._closed:
            return False
        if self.target is not None and not self.stack.count():
            # No edit yet: let the pass renumber records it finds hidden in damage (editing resumes after it).
            self.stop_editing()
        self._run(self._verify_passes, "verify")
        return True

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def stop(self) -> None:
        """Stop the pass and wait for its thread."""
        if self._worker is not None:
            self._worker.stop()

    def _run(self, passes, phase: str) -> None:
        self.phase = phase
        self.failure = None
        self._pass_over = False
        self._meter.reset(self.fetched)
        self._worker = GeneratorWorker(passes, self)
        self._worker.progress.connect(self._on_progress)
        self._worker.finished.connect(self._on_finished)
        self._worker.failed.connect(self._on_failed)
        self._worker.start()
        self.pass_started.emit()
        self.state_changed.emit()

    def resume(self) -> bool:
        """Go on with an index pass that was stopped, from where it stopped (see
        TFRecordFile.resume_iter; a shard set goes on with the shards not indexed yet); False when
        there is none to resume."""
        if self.is_running() or self._closed or self.phase != "cancelled" or self.source.indexed:
            return False
        self._run(lambda: self._index_passes(resume=True), "index")
        return True

    @property
    def resumable(self) -> bool:
        """An index pass was stopped before the end: :meth:`resume` goes on with it."""
        return self.phase == "cancelled" and not self.source.indexed and not self.is_running()

    def _index_passes(self, resume: bool = False) -> Iterator[PassProgress]:
        # A URL's index pass downloads it anyway: its CRCs are checked as the bytes pass, not in a second download.
        verify_now = self.auto_verify and self.fetched is not None
        passes = self.source.resume_iter if resume else self.source.index_iter
        with self.watching_changes():
            for p in passes(verify=verify_now):
                yield PassProgress("index", p)
        if self.auto_verify and not self.source.verified:
            yield from self._verify_passes()

    def _verify_passes(self) -> Iterator[PassProgress]:
        with self.watching_changes():
            # Over a document the rows stay as they are: its edits refer to them by number.
            for p in self.source.verify_iter(keep_rows=self.target is not None):
                yield PassProgress("verify", p)

    def _on_progress(self, pp: PassProgress) -> None:
        if self._closed:
            return
        with PAINT_GATE.painting():  # new rows, columns, status bar, panels: all Python, like a paint
            problems_before = self.last.problems if self.last is not None else 0
            self.last = pp.progress
            self.phase = pp.phase
            if pp.progress.problems != problems_before:
                self.problems_changed.emit()
            self.rows_added.emit(pp)
            self.state_changed.emit()

    def _on_finished(self, pp: PassProgress | None) -> None:
        if self._closed:
            return
        if pp is not None:
            self.last = pp.progress
        self._pass_over = True
        self.phase = "cancelled" if self.cancelled() else "done"
        self.pass_finished.emit()
        self.state_changed.emit()
        self.finished.emit()

    def _on_failed(self, error: str) -> None:
        if self._closed:
            return
        self._pass_over = True
        self.phase = "failed"
        self.failure = error
        self.pass_finished.emit()
        self.state_changed.emit()
        self.finished.emit()

    def close(self) -> None:
        """Stop the pass and send nothing more; :meth:`close_source` closes the files after."""
        if self._worker is not None:
            self._worker.stop()
        self._closed = True

    def close_source(self) -> None:
        self.source.close()
