"""A whole dataset (a codec ShardSet: several files, a folder or a glob) in one tab.

The tab is a :class:`~app.shell.file_tab.FileTab` over the set: records are
numbered across shards, a "Shard" column names each record's file, the
detail shows a record inside its own shard (so the hex view has real file
offsets), and editing is off. Its :class:`ShardSetSession` indexes the shards in order on the
session's worker; the table model numbers each as it syncs. A TFDS dataset folder opens as its
shards, split by split, decoded per its feature spec (see
:func:`~app.shell.payload_choice.opening_choice`), with each shard's split in the shards list.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import replace
from typing import Any, Iterator, Sequence

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import QSplitter, QWidget

from app.models.record_table_model import RecordTableModel
from app.models.settings import Settings
from app.models.shard_set_table_model import SHARD_HEADER, ShardSetTableModel
from app.shell.file_tab import FileTab
from app.shell.payload_choice import SettingsChoice, opening_choice
from app.shell.session import OpenedSource, PassProgress, TabSession
from app.shell.tab_state import TabState, parse_goto
from app.views.shards_panel import ShardsPanel
from codec.datasets.payload_choice import Choice, apply
from codec.errors import TFRecordError
from codec.sources.open import open_paths
from codec.sources.protocol import RecordSource
from codec.sources.shard_set import ShardSet
from codec.storage.listing import is_sidecar
from codec.storage.opening import sniff_compression

SHARD_NAMES_MEASURED = 500
SHARD_COLUMN_MAX = 320
SHARD_COLUMN_SHARE = 0.35  # of the table's width at most: names elide at the end, the shard number stays
TFDS_METADATA = (".json", ".labels.txt")  # a TFDS folder's own files, not shards left out
READ_ONLY_REASON = "read-only: a dataset of several shards cannot be edited (open one shard on its own to edit it)"


def skipped_in_folders(args: Sequence[str], kept: Sequence[str], *, dataset: bool = False) -> list[tuple[str, str]]:
    """(path, reason) of the files in folders among ``args`` that the set leaves out (not TFRecords);
    with ``dataset`` (a TFDS folder), its metadata files are not among them."""
    kept_paths = {os.path.normpath(p) for p in kept}
    skipped = []
    for arg in args:
        if not os.path.isdir(arg):
            continue
        for name in sorted(os.listdir(arg)):
            path = os.path.join(arg, name)
            if os.path.normpath(path) in kept_paths or name.startswith(".") or not os.path.isfile(path):
                continue
            if is_sidecar(name) or (dataset and name.endswith(TFDS_METADATA)):
                continue  # a label map, dataset_info.json, a README...: read beside the set, not left out
            try:
                sniff_compression(path)
                reason = "shorter than one record header"
            except (TFRecordError, OSError) as exc:
                reason = str(exc).splitlines()[0]
            skipped.append((path, reason))
    return skipped


class ShardSetSession(TabSession):
    """A session over a :class:`ShardSet`: its shards join the numbering when the table model syncs
    (on the GUI thread), not as the passes find them; each shard checks itself for changes on disk."""

    def _index_passes(self) -> Iterator[PassProgress]:
        for p in self.source.index_iter(publish=False):
            yield PassProgress("index", p)
        if self.auto_verify and not self.source.verified:
            yield from self._verify_passes()

    def _verify_passes(self) -> Iterator[PassProgress]:
        for p in self.source.verify_iter(publish=False):
            yield PassProgress("verify", p)


class ShardSetTab(FileTab):
    """A FileTab over a :class:`ShardSet`; ``unusable(str)`` lists shards that cannot be read, one per line."""

    unusable = Signal(str)
    is_set = True

    def __init__(self, shard_set: ShardSet, settings: Settings, parent: QWidget | None = None, *,
                 skipped: Sequence[tuple[str, str]] = (), dataset: Any = None, **kwargs) -> None:
        super().__init__(shard_set, settings, parent, **kwargs)
        self.dataset = dataset  # the codec.datasets.tfds.TfdsDataset the set is, or None
        self.model.set_dataset(dataset)
        self.disk.can_reload = False  # a set is reopened as a whole: close the tab and open it again
        self.corruption.map.hide()  # it draws one file's bytes; a set's offsets are per shard
        self.skipped = list(skipped)  # files of the folders opened that are not TFRecords
        self._unusable_seen = 0
        self.state_changed.connect(self.model.problems_changed)
        self.state_changed.connect(self._check_unusable)
        # The shards beside the table (left of the table and detail): click one to see it, even
        # before its turn comes.
        self._wanted_shard: int | None = None
        self.shards_panel = ShardsPanel(shard_set, self, dataset=dataset)
        self.shards_panel.shard_activated.connect(self.show_shard)
        self.state_changed.connect(self._shards_progress)
        self.outer_splitter = outer = QSplitter(Qt.Orientation.Horizontal, self)
        self.corruption.splitter.replaceWidget(0, outer)  # the replaced splitter loses its parent:
        outer.addWidget(self.shards_panel)
        outer.addWidget(self.splitter)  # it gets the new one here
        self.splitter.show()
        outer.setStretchFactor(0, 0)
        outer.setStretchFactor(1, 1)
        self._outer_moved = False  # the user moved the divider: the shards list keeps the width they chose
        outer.splitterMoved.connect(lambda *_: setattr(self, "_outer_moved", True))

    def resizeEvent(self, event) -> None:
        """The shards list keeps its preferred width (up to half the tab) until the user moves the divider."""
        super().resizeEvent(event)
        width = sum(self.outer_splitter.sizes())
        if not self._outer_moved and width > 0:
            panel = min(self.shards_panel.preferred_width(), width // 2)
            self.outer_splitter.setSizes([panel, width - panel])

    @classmethod
    def open_set(cls, args: Sequence[str], settings: Settings, parent: QWidget | None = None) -> ShardSetTab:
        """Files, a folder or a glob as one set, opened by :func:`codec.sources.open.open_paths` (raises
        codec.errors.TFRecordError, one line).

        Its records decode as chosen for it before, else as the codec finds
        (a TFDS dataset folder: its shards, split by split, per its feature
        spec); :attr:`open_note` says when they cannot decode as before.
        """
        chooser = SettingsChoice(settings)
        if len(args) == 1:  # (asked first, as open_paths would: a TensorBoard log folder is named as itself)
            choice = chooser(args[0], list(args))
            name = args[0] if choice.payload is not None and choice.payload.runs else None
            opened = open_paths(args, lambda *_: choice, as_set=True, name=name)
        else:
            opened = open_paths(args, chooser, as_set=True)
        return cls._over(opened.source, list(args), opened.choice, chooser.note, settings, parent)

    @classmethod
    def from_set(cls, shard_set: ShardSet, args: Sequence[str], settings: Settings,
                 parent: QWidget | None = None) -> ShardSetTab:
        """A tab over a set already listed (a URL glob or prefix, on a worker); the set is closed if it fails."""
        args = list(args)
        try:
            choice, note = opening_choice(args[0] if len(args) == 1 else shard_set.path, settings, args)
            return cls._over(shard_set, args, choice, note, settings, parent)
        except BaseException:
            shard_set.close()
            raise

    @classmethod
    def _over(cls, shard_set: ShardSet, args: list[str], choice: Choice, note: str | None, settings: Settings,
              parent: QWidget | None) -> ShardSetTab:
        apply(choice, shard_set)
        skipped = skipped_in_folders(args, [s.path for s in shard_set.shards], dataset=choice.dataset is not None)
        tab = cls(shard_set, settings, parent, skipped=skipped, dataset=choice.dataset)
        tab.open_note = note
        return tab

    def _make_session(self, source: OpenedSource, *, auto_verify: bool) -> TabSession:
        return ShardSetSession(source, self, auto_verify=auto_verify, edit_block=READ_ONLY_REASON)

    def _make_model(self, source: RecordSource) -> RecordTableModel:
        return ShardSetTableModel(source, self)

    @property
    def shard_set(self) -> ShardSet:
        return self.session.source

    @property
    def title(self) -> str:
        if self.dataset is not None and os.path.isdir(self.shard_set.path):
            return f"{self.dataset.name} {self.dataset.version}"
        s = self.shard_set
        name = os.path.basename(s.path.rstrip(os.sep)) or s.path
        if len(s.shards) > 1 and not os.path.isdir(s.path) and \
                not all(fnmatch.fnmatchcase(shard.path, s.path) for shard in s.shards):  # no shared name pattern
            return f"{os.path.basename(s.shards[0].path)} +{len(s.shards) - 1}"
        return name

    def state(self) -> TabState:
        s = self.shard_set
        return replace(super().state(), shards=(s.indexed_shards, len(s.shards)))

    # -- what differs from a single file ---------------------------------------
    def _set_columns(self, keys: list[str], *, save: bool = True) -> None:
        """Feature columns as usual; the fixed columns first, the Shard column right after "#"."""
        super()._set_columns(keys, save=save)
        header = self.table.horizontalHeader()
        shard = self.model.shard_column
        # Qt puts columns inserted before a moved one where that one is shown: put each back in its place
        order = [0, shard, *(c for c in range(1, self.model.columnCount()) if c != shard)]
        for visual, logical in enumerate(order):
            if header.visualIndex(logical) != visual:
                header.moveSection(header.visualIndex(logical), visual)
        self.table.setColumnWidth(shard, self._extra_columns_width())

    def _extra_columns_width(self) -> int:
        """The Shard column: as wide as the longest shard name (a few hundred shards are measured)."""
        names = [self.model.shard_text(k) for k in range(min(len(self.shard_set.shards), SHARD_NAMES_MEASURED))]
        widest = max((self._cell_width(n) for n in names), default=80)
        viewport = self.table.viewport().width()
        share = int(viewport * SHARD_COLUMN_SHARE) if viewport >= 200 else SHARD_COLUMN_MAX
        return max(min(widest, SHARD_COLUMN_MAX, share), self._cell_width(SHARD_HEADER))

    def _current_row_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        """The detail shows the record from its shard; the shards list marks that shard."""
        super()._current_row_changed(current, previous)
        if current.isValid():
            record = self.proxy.record_at(current.row())
            if 0 <= record < len(self.shard_set):
                self.shards_panel.select_shard(self.shard_set.shard_of(record))

    # -- the shards list ---------------------------------------------------------
    def show_shard(self, k: int) -> None:
        """Show shard ``k``'s first record; a shard not indexed yet is indexed next and shown when done."""
        s = self.shard_set
        shard = s.shards[k]
        name = os.path.basename(shard.path)
        if shard.error is not None:
            self.message.emit(f"{name} is unusable: {shard.error}")
            return
        if s.is_numbered(k):
            self._wanted_shard = None
            self.shards_panel.model.asked = None
            if shard.count:
                self.select_record(s.record_start(k))
            else:
                self.message.emit(f"{name} holds no records")
            return
        s.prioritize(k)
        self._wanted_shard = k
        self.shards_panel.model.asked = k
        self.shards_panel.refresh()
        self.message.emit(f"indexing {name} next")
        if not self.is_running() and not self._closed:
            self.start()  # indexing was stopped: go on, with this shard first

    def _shards_progress(self) -> None:
        self.shards_panel.refresh()
        k = self._wanted_shard
        if k is not None and self.shard_set.is_numbered(k):
            self.show_shard(k)

    def go_to(self, text: str) -> str | None:
        try:
            target = parse_goto(text)
        except ValueError as exc:
            return str(exc)
        if target.kind == "offset":
            return "byte offsets are per shard: go to a record number, or open the shard on its own"
        return super().go_to(text)

    def _check_unusable(self) -> None:
        """Say which files the set skips, once per change; the first time, why it does not decode as before."""
        bad = self.skipped + self.shard_set.unusable
        note = self.open_note
        if len(bad) != self._unusable_seen or note:
            self._unusable_seen = len(bad)
            self.open_note = None  # said once
            lines = ([note] if note else []) + [f"skipped {os.path.basename(p)}: {why}" for p, why in bad]
            self.unusable.emit("\n".join(lines))
