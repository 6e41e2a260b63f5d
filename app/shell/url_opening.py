"""Opening URLs (``s3://``, ``gs://``, ``https://``...) off the GUI thread.

Opening a remote file asks the store for its size and version and sniffs its
first bytes; a glob or prefix is listed first. Those are network round trips,
so a :class:`UrlOpening` runs them on a worker while its
:class:`~app.views.opening_page.OpeningPage` holds the tab's place with
Cancel. :class:`UrlOpenings` (the window's) turns the opened source into a tab
on the GUI thread, in the page's place; the index pass then runs on the tab's
own worker, as for a local file.
"""
from __future__ import annotations

from typing import Iterator, Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QTabWidget, QWidget

from app.models.settings import Settings
from app.shell.file_tab import FileTab
from app.shell.shard_set_tab import ShardSetTab
from app.style import icons
from app.views.opening_page import OpeningPage
from app.workers.worker import GeneratorWorker, one_line
from codec.errors import TFRecordError
from codec.sources.open import open_paths
from codec.sources.shard_set import ShardSet
from codec.sources.tfrecord_file import TFRecordFile
from codec.storage.url_secrets import redact_text, shown_path


def open_remote_source(urls: Sequence[str], as_set: bool) -> TFRecordFile | ShardSet:
    """The opened source of ``urls`` (:func:`codec.sources.open.open_paths`): one remote file (a folder
    named without its trailing slash: its objects as a set), or a shard set (listed, not indexed yet).
    How its records decode is chosen on the GUI thread, from the settings, when its tab is made.

    Raises codec.errors.TFRecordError with one line (FileAccessError,
    NotTFRecordError, UsageError). Blocks on the network: call it on a worker.
    """
    return open_paths(urls, as_set=as_set).source


class UrlOpening(QObject):
    """One URL opening on a worker, shown by :attr:`page` until it ends.

    Signals: ``source_ready(object)`` the opened source, ``opened(FileTab)``
    its tab is shown (sent by :class:`UrlOpenings`), ``failed(str)`` a
    one-line message naming the URL, ``cancelled()`` the user stopped it (a
    source that opens after that is closed unseen), ``finished()`` its thread has
    ended. The thread may outlive the page: a network call cannot be
    interrupted, only its answer dropped.
    """

    source_ready = Signal(object)
    opened = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    finished = Signal()

    def __init__(self, urls: Sequence[str], as_set: bool, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.urls = list(urls)
        self.as_set = as_set
        self.page = OpeningPage(self.urls[0] if len(self.urls) == 1 else f"{self.urls[0]} +{len(self.urls) - 1}")
        self.page.cancel_requested.connect(self.cancel)
        self.is_cancelled = False
        self.answered = False  # the worker has answered (or failed): its thread has ended
        self._worker = GeneratorWorker(self._opening, self)
        self._worker.finished.connect(self._finished)
        self._worker.failed.connect(self._failed)

    @property
    def url(self) -> str:
        return self.urls[0]

    def _opening(self) -> Iterator[TFRecordFile | ShardSet]:
        yield open_remote_source(self.urls, self.as_set)

    def start(self) -> None:
        self._worker.start()

    def cancel(self) -> None:
        """Stop waiting for the source (the page goes at once); close it if it still arrives."""
        if self.is_cancelled or self.answered:
            return
        self.is_cancelled = True
        self._worker.cancel()
        self.cancelled.emit()

    def wait(self, msecs: int | None = None) -> bool:
        """Block until the worker's thread has ended (closing the window)."""
        return self._worker.wait(msecs)

    def _finished(self, source: TFRecordFile | ShardSet | None) -> None:
        self.answered = True
        self._worker.wait()
        if source is not None and self.is_cancelled:
            source.close()
        elif source is not None:
            self.source_ready.emit(source)
        self.finished.emit()

    def _failed(self, message: str) -> None:
        self.answered = True
        self._worker.wait()
        if not self.is_cancelled:
            shown, message = shown_path(self.url), redact_text(message, [self.url])
            self.failed.emit(message if shown in message else f"cannot open {shown}: {message}")
        self.finished.emit()


class UrlOpenings(QObject):
    """The window's URLs being opened, each with its page in ``tabs``.

    Signals: ``tab_ready(FileTab, str url, bool recent, int index)`` a tab to
    put where its page was (the window wires it in), ``failed(str)`` for the
    message bar: one line per URL that failed since none was opening (several
    opened at once fail together, not one over another), ``finished()`` a page
    went (the current tab may differ).
    """

    tab_ready = Signal(object, str, bool, int)
    failed = Signal(str)
    finished = Signal()

    def __init__(self, tabs: QTabWidget, settings: Settings, tab_parent: QWidget) -> None:
        super().__init__(tab_parent)
        self.tabs = tabs
        self.settings = settings
        self._tab_parent = tab_parent
        self.pending: list[UrlOpening] = []
        self._done: list[UrlOpening] = []  # cancelled, their threads still in a network call
        self._errors: list[str] = []  # of this batch of openings

    def find(self, urls: Sequence[str]) -> UrlOpening | None:
        return next((o for o in self.pending if o.urls == list(urls)), None)

    def start(self, urls: Sequence[str], as_set: bool) -> UrlOpening:
        """Open ``urls`` (one file, or a set) on a worker; its page is the current tab meanwhile."""
        opening = UrlOpening(urls, as_set, self)
        if not self.pending:
            self._errors = []
        self.pending.append(opening)
        opening.source_ready.connect(lambda source: self._opened(opening, source))
        opening.failed.connect(lambda text: self._end(opening, text))
        opening.cancelled.connect(lambda: self._end(opening, None))
        index = self.tabs.addTab(opening.page, icons.icon("remote"), opening.page.title)
        self.tabs.setTabToolTip(index, "\n".join(opening.urls))
        self.tabs.setCurrentIndex(index)
        opening.start()
        return opening

    def is_page(self, widget: QWidget) -> bool:
        """``widget`` is the page of a URL opening now."""
        return any(widget is opening.page for opening in self.pending)

    def cancel_page(self, widget: QWidget) -> bool:
        """Cancel the opening ``widget`` is the page of (its tab's close button); False if it is none."""
        for opening in self.pending:
            if widget is opening.page:
                opening.cancel()
                return True
        return False

    def close(self) -> None:
        """Cancel every opening and wait for its thread (the window is closing)."""
        for opening in self.pending + self._done:
            opening.cancel()
            opening.wait()

    def _end(self, opening: UrlOpening, error: str | None) -> int:
        """The page goes (failed, cancelled, or a tab takes its place); returns where it was."""
        index = self.tabs.indexOf(opening.page)
        if index >= 0:
            self.tabs.removeTab(index)
        opening.page.deleteLater()
        if opening in self.pending:
            self.pending.remove(opening)
        if opening.answered:
            opening.deleteLater()
        else:  # its thread is still in a network call: kept until it answers
            self._done.append(opening)
            opening.finished.connect(lambda: self._forget(opening))
        if error:
            self._errors.append(error)
            self.failed.emit("\n".join(self._errors))
        self.finished.emit()
        return index

    def _forget(self, opening: UrlOpening) -> None:
        if opening in self._done:
            self._done.remove(opening)
            opening.deleteLater()

    def _opened(self, opening: UrlOpening, source: TFRecordFile | ShardSet) -> None:
        try:
            if source.is_set:
                tab = ShardSetTab.from_set(source, opening.urls, self.settings, self._tab_parent)
            else:
                tab = FileTab.from_source(source, self.settings, self._tab_parent)
        except (TFRecordError, OSError, ValueError) as exc:
            self._end(opening, f"cannot open {opening.url}: {one_line(exc)}")
            return
        index = self._end(opening, None)
        single = len(opening.urls) == 1
        if single:
            self.settings.add_recent_url(opening.url)
        self.tab_ready.emit(tab, opening.url, single, index)
        opening.opened.emit(tab)
