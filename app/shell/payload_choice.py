"""What a file opens with: the payload and label names chosen for it before, else what the codec finds.

The choices made with File > Decode As… and File > Label Map… (see
:mod:`app.shell.payload_actions`) are remembered per file in
:class:`~app.models.settings.Settings`; :func:`opening_choice` turns them into
a :class:`codec.datasets.payload_choice.Choice` through
:func:`codec.datasets.payload_choice.choose_for`, as the command line decides;
:class:`SettingsChoice` hands it to :func:`codec.sources.open.open_paths`.
"""
from __future__ import annotations

import os
from typing import Sequence

from app.models.settings import Settings
from app.workers.worker import one_line
from codec.datasets.payload_choice import Choice, choose_for
from codec.errors import TFRecordError

CHOICE_ERRORS = (TFRecordError, OSError, ValueError)  # what choose_for raises, each with one line


def opening_choice(path: str, settings: Settings, files: Sequence[str] | None = None
                   ) -> tuple[Choice, str | None]:
    """How ``path`` decodes when it opens, and a one-line note when it cannot decode as it did before.

    The schema and label map chosen for it before, when their files are still
    there; what :func:`choose_for` finds on its own otherwise (or when they no
    longer load); the kind rule when even that fails. ``files``: what a shard
    set opens, when more than ``path`` (the set's name, its choices' key).
    """
    files = list(files) if files is not None else [path]
    name = os.path.basename(path) or path
    notes: list[str] = []
    decode_as = settings.decode_as(path)
    label_map = settings.label_map(path)
    if decode_as is not None and not os.path.isfile(decode_as[0]):
        notes.append(f"{name}: its schema {decode_as[0]} is gone: records decode by their kind")
        decode_as = None
    if label_map is not None and not os.path.isfile(label_map):
        notes.append(f"{name}: its label map {label_map} is gone")
        label_map = None
    proto, type_name = decode_as if decode_as is not None else (None, None)
    tries = [dict(proto=proto, type_name=type_name, label_map=label_map)]
    if decode_as is not None or label_map is not None:
        tries.append({})
    for options in tries:
        try:
            choice = choose_for(files, **options)
            notes.extend(f"{name}: {note}" for note in choice.notes)
            return choice, _one_note(notes)
        except CHOICE_ERRORS as exc:
            notes.append(f"{name}: {one_line(exc)}")
    return Choice(files=files), _one_note(notes)


class SettingsChoice:
    """:func:`opening_choice` as the chooser :func:`codec.sources.open.open_paths` asks; :attr:`note` is
    its one-line note (None when the records decode as chosen before)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.note: str | None = None

    def __call__(self, name: str, paths: Sequence[str]) -> Choice:
        choice, self.note = opening_choice(name, self.settings, paths)
        return choice


def _one_note(notes: list[str]) -> str | None:
    return "; ".join(notes) if notes else None
