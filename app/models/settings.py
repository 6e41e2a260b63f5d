"""What the app remembers between runs, kept with QSettings.

Always the INI format in the user scope, so tests can redirect every read and
write with ``QSettings.setPath(IniFormat, UserScope, tmp)``.
"""
from __future__ import annotations

import hashlib
import os

from PySide6.QtCore import QByteArray, QSettings

from codec.storage.remote import is_url
from codec.storage.url_secrets import carries_credentials, without_credentials

ORGANIZATION = "TFRecord Lens"
APPLICATION = "tfrlens"
MAX_RECENT = 10


def full_path(path: str) -> str:
    """A local path made absolute; a URL (``s3://``, ``https://``...) as it is."""
    return path if is_url(path) else os.path.abspath(path)


def _file_key(path: str) -> str:
    """What a data file's own settings are kept under: a URL without its signature or password."""
    return without_credentials(path) if is_url(path) and carries_credentials(path) else full_path(path)


def _file_group(path: str) -> str:
    """The settings group of one data file: a hash of its absolute path or URL (slashes would nest groups)."""
    digest = hashlib.sha1(_file_key(path).encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return f"files/{digest}"


class Settings:
    """Recent files and output folders, window geometry and state, chosen feature columns, how each file decodes."""

    def __init__(self, organization: str = ORGANIZATION, application: str = APPLICATION) -> None:
        self._q = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, organization, application)

    @property
    def qsettings(self) -> QSettings:
        return self._q

    def sync(self) -> None:
        self._q.sync()

    # -- recent files -----------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self._q.value("recent/files", [], type=list)
        return [str(p) for p in value if p]

    def add_recent(self, path: str) -> None:
        if is_url(path) and carries_credentials(path):
            return  # a signed URL or one with a password is used, never stored
        path = full_path(path)
        files = [p for p in self.recent_files() if p != path]
        self._q.setValue("recent/files", [path, *files][:MAX_RECENT])

    def clear_recent(self) -> None:
        self._q.setValue("recent/files", [])

    def recent_urls(self) -> list[str]:
        """URLs typed in File > Open URL…, the last first."""
        value = self._q.value("recent/urls", [], type=list)
        return [str(u) for u in value if u]

    def add_recent_url(self, url: str) -> None:
        if carries_credentials(url):
            return  # a signed URL or one with a password is used, never stored
        urls = [u for u in self.recent_urls() if u != url]
        self._q.setValue("recent/urls", [url, *urls][:MAX_RECENT])

    # -- window -----------------------------------------------------------
    def window_geometry(self) -> QByteArray | None:
        return self._bytes("window/geometry")

    def window_state(self) -> QByteArray | None:
        return self._bytes("window/state")

    def save_window(self, geometry: QByteArray, state: QByteArray) -> None:
        self._q.setValue("window/geometry", geometry)
        self._q.setValue("window/state", state)

    def splitter_state(self) -> QByteArray | None:
        return self._bytes("window/splitter")

    def save_splitter(self, state: QByteArray) -> None:
        self._q.setValue("window/splitter", state)

    def theme(self) -> str:
        """View > Theme: "system" (the default), "light" or "dark"."""
        value = str(self._q.value("view/theme", "system", type=str))
        return value if value in ("system", "light", "dark") else "system"

    def set_theme(self, theme: str) -> None:
        self._q.setValue("view/theme", theme)

    def last_directory(self) -> str:
        return str(self._q.value("recent/directory", "", type=str))

    def set_last_directory(self, path: str) -> None:
        self._q.setValue("recent/directory", path)

    # -- where the user writes ---------------------------------------------
    def output_directories(self) -> list[str]:
        """Folders the user saved, exported or salvaged to, the last first."""
        value = self._q.value("recent/output_directories", [], type=list)
        return [str(p) for p in value if p]

    def last_output_directory(self) -> str | None:
        folders = self.output_directories()
        return folders[0] if folders else None

    def add_output_directory(self, path: str) -> None:
        """Remember the folder of a file just written (Save As, Export, Salvage); not a URL's."""
        if is_url(path):
            return
        folder = os.path.abspath(path)
        folders = [p for p in self.output_directories() if p != folder]
        self._q.setValue("recent/output_directories", [folder, *folders][:MAX_RECENT])

    # -- columns ----------------------------------------------------------
    def feature_columns(self, signature: str) -> list[str] | None:
        """The feature columns chosen for a schema, or None when never chosen."""
        key = f"columns/{signature}"
        if not self._q.contains(key):
            return None
        return [str(k) for k in self._q.value(key, [], type=list)]

    def set_feature_columns(self, signature: str, keys: list[str]) -> None:
        """Remember the feature columns chosen for a schema (``column_choice.schema_signature``)."""
        self._q.setValue(f"columns/{signature}", list(keys))

    def forget_feature_columns(self, signature: str) -> None:
        """A schema's columns are chosen to fit again (View > Feature Columns > Default Columns)."""
        self._q.remove(f"columns/{signature}")

    # -- images -----------------------------------------------------------
    def stretch_contrast(self) -> bool:
        """Whether 16-bit and float images are stretched over their own min..max (else their type's range)."""
        return bool(self._q.value("images/stretch_contrast", False, type=bool))

    def set_stretch_contrast(self, on: bool) -> None:
        self._q.setValue("images/stretch_contrast", bool(on))

    # -- how each file decodes ------------------------------------------
    def decode_as(self, path: str) -> tuple[str, str] | None:
        """The schema file and message type chosen for ``path`` with File > Decode As…, or None (automatic)."""
        group = _file_group(path)
        proto = str(self._q.value(f"{group}/proto", "", type=str))
        type_name = str(self._q.value(f"{group}/type", "", type=str))
        return (proto, type_name) if proto and type_name else None

    def set_decode_as(self, path: str, proto: str | None, type_name: str | None) -> None:
        """Remember ``path``'s message type (both None: decode it by the kind rule again)."""
        group = _file_group(path)
        if proto and type_name:
            self._q.setValue(f"{group}/file", full_path(path))
            self._q.setValue(f"{group}/proto", os.path.abspath(proto))
            self._q.setValue(f"{group}/type", type_name)
        else:
            self._q.remove(f"{group}/proto")
            self._q.remove(f"{group}/type")

    def label_map(self, path: str) -> str | None:
        """The label map chosen for ``path`` with File > Label Map…, or None."""
        value = str(self._q.value(f"{_file_group(path)}/label_map", "", type=str))
        return value or None

    def set_label_map(self, path: str, label_map: str | None) -> None:
        group = _file_group(path)
        if label_map:
            self._q.setValue(f"{group}/file", full_path(path))
            self._q.setValue(f"{group}/label_map", os.path.abspath(label_map))
        else:
            self._q.remove(f"{group}/label_map")

    def copy_file_choices(self, source: str, target: str) -> None:
        """``target`` decodes as ``source`` was chosen to (a file saved as another)."""
        decode_as = self.decode_as(source)
        self.set_decode_as(target, *(decode_as if decode_as is not None else (None, None)))
        self.set_label_map(target, self.label_map(source))

    def _bytes(self, key: str) -> QByteArray | None:
        value = self._q.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None
