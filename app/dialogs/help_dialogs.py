"""The Help menu's windows: About, the keyboard shortcut sheet and the user guide (the docs/ pages, offline)."""
from __future__ import annotations

import importlib.metadata
import platform
import re
from pathlib import Path

import google.protobuf
import PySide6
from PySide6.QtCore import Qt, QUrl, Signal, qVersion
from PySide6.QtGui import QAction, QDesktopServices, QImage, QKeySequence, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMenuBar,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import __version__

APP_NAME = "TFRecord Lens"
GUIDE_LINK = "guide:"  # an About link to a guide page: guide:filters.md
ABOUT_PAGES = (("User Guide", "index.md"), ("Using the app", "app.md"), ("Filter expressions", "filters.md"),
               ("Damaged files", "damage.md"), ("Command line", "cli-reference.md"))
DATA_FOLDER = "share/tfrecord-lens/docs"  # where a wheel installs the pages ([tool.setuptools.data-files])
FIRST_PAGES = ("index.md", "app.md", "filters.md", "damage.md")  # the guide's list starts with these


# -- About -------------------------------------------------------------------
def about_html(guide: Path | None) -> str:
    """The About box: the version, what it runs on, links to the guide's pages (read offline from ``guide``)."""
    if guide is not None:
        links = " · ".join(f'<a href="{GUIDE_LINK}{page}">{title}</a>' for title, page in ABOUT_PAGES)
        docs = (f"<p>Documentation: {links}<br>"
                f'<small>(the pages in <a href="{QUrl.fromLocalFile(str(guide)).toString()}">{guide}</a>)</small></p>')
    else:
        docs = "<p>Documentation: the docs/ pages were not installed with this copy.</p>"
    return (f"<h3>{APP_NAME} {__version__}</h3>"
            "<p>Open, inspect, verify, repair, edit and export TensorFlow TFRecord files of any size, "
            "without TensorFlow.</p>"
            f"<p>Python {platform.python_version()} · Qt {qVersion()} · PySide6 {PySide6.__version__} · "
            f"protobuf {google.protobuf.__version__}</p>" + docs)


class AboutDialog(QDialog):
    """About TFRecord Lens: the version and the versions it runs on, with links into the guide."""

    guide_page = Signal(str)  # a guide link was clicked: the page (filters.md)

    def __init__(self, guide: Path | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"About {APP_NAME}")
        self.label = QLabel(about_html(guide))
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.linkActivated.connect(self._link)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addWidget(buttons)
        self.setMinimumWidth(460)

    def _link(self, link: str) -> None:
        if link.startswith(GUIDE_LINK):
            self.guide_page.emit(link[len(GUIDE_LINK):])
        else:
            QDesktopServices.openUrl(QUrl(link))


# -- Keyboard shortcuts ------------------------------------------------------
def plain(text: str) -> str:
    """A menu or action text as shown: ``&Open…`` -> ``Open…``."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def menu_shortcuts(menu_bar: QMenuBar, extra: list[QAction] = ()) -> list[tuple[str, list[tuple[str, str]]]]:
    """(menu, [(action, keys)]) for every action with a shortcut, by top menu, read from the actions themselves.

    Submenus count under their top menu; ``extra`` actions with a shortcut in no menu come last, as "Other".
    """
    groups: list[tuple[str, list[tuple[str, str]]]] = []
    seen: set[int] = set()

    def walk(menu: QMenu, prefix: str, rows: list[tuple[str, str]]) -> None:
        for action in menu.actions():
            sub = action.menu()
            if sub is not None:
                walk(sub, f"{prefix}{plain(sub.title())} › ", rows)
            elif action.shortcuts() and id(action) not in seen:
                seen.add(id(action))
                keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts())
                rows.append((prefix + plain(action.text()), keys))

    for action in menu_bar.actions():
        if action.menu() is not None:
            rows: list[tuple[str, str]] = []
            walk(action.menu(), "", rows)
            if rows:
                groups.append((plain(action.menu().title()), rows))
    others = [(plain(a.text()), ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in a.shortcuts()))
              for a in extra if a.shortcuts() and id(a) not in seen and a.text()]
    if others:
        groups.append(("Other", others))
    return groups


class ShortcutsDialog(QDialog):
    """Keyboard Shortcuts: every action that has one, grouped by menu."""

    def __init__(self, groups: list[tuple[str, list[tuple[str, str]]]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard Shortcuts")
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Action", "Shortcut"])
        self.tree.setRootIsDecorated(False)
        for menu, rows in groups:
            top = QTreeWidgetItem([menu, ""])
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            top.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.tree.addTopLevelItem(top)
            top.addChildren([QTreeWidgetItem([name, keys]) for name, keys in rows])
        self.tree.expandAll()
        self.tree.resizeColumnToContents(0)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree)
        layout.addWidget(buttons)
        self.resize(560, 620)

    def rows(self) -> dict[str, str]:
        """Action -> shortcut, as listed."""
        out = {}
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount()):
                out[top.child(j).text(0)] = top.child(j).text(1)
        return out


# -- User guide --------------------------------------------------------------
def guide_folder() -> Path | None:
    """The docs/ pages: a checkout's own, else those a wheel installed (see pyproject's data-files)."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "docs" / "index.md").is_file():
        return checkout / "docs"
    try:
        files = importlib.metadata.distribution("tfrecord-lens").files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.as_posix().endswith(f"{DATA_FOLDER}/index.md"):
            page = Path(str(f.locate()))
            return page.parent if page.is_file() else None
    return None


def page_title(path: Path) -> str:
    """A page's first heading as text (no Markdown backquotes), else its name ("changelog" -> "Changelog")."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("# "):
                    return line[2:].strip().replace("`", "")
    except OSError:
        pass
    return path.stem.replace("-", " ").capitalize()


def guide_pages(folder: Path) -> list[Path]:
    """The pages in reading order: home, the app, filters and damage first, then by title, decisions last."""
    pages = sorted(folder.glob("*.md"), key=lambda p: (p.name not in FIRST_PAGES,
                                                       FIRST_PAGES.index(p.name) if p.name in FIRST_PAGES else 0,
                                                       page_title(p).lower()))
    return pages + sorted((folder / "decisions").glob("*.md"))


_SNIPPET = re.compile(r'^--8<--\s+"([^"]+)"\s*$', re.M)
_ADMONITION = re.compile(r'^!!! *(\w+)(?: +"([^"]*)")? *$', re.M)


def page_markdown(path: Path) -> str:
    """A page's Markdown as Qt shows it: MkDocs' own syntax (snippets, admonitions) made plain."""
    text = path.read_text(encoding="utf-8")

    def snippet(m: re.Match) -> str:
        for base in (path.parent.parent, path.parent):
            included = base / m.group(1)
            if included.is_file():
                return included.read_text(encoding="utf-8")
        return f"(see {m.group(1)})"

    text = _SNIPPET.sub(snippet, text)
    return _ADMONITION.sub(lambda m: f"**{m.group(2) or m.group(1).capitalize()}:**", text)


class GuideBrowser(QTextBrowser):
    """Shows docs pages: links between pages and images resolve against the page's folder; web links open outside."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenExternalLinks(True)

    def loadResource(self, kind: int, name: QUrl):
        if kind == QTextDocument.ResourceType.MarkdownResource.value or name.path().endswith(".md"):
            path = Path(name.toLocalFile())
            if path.is_file():
                return page_markdown(path)
        if kind == QTextDocument.ResourceType.ImageResource.value:
            image = QImage(name.toLocalFile())
            if not image.isNull():  # a screenshot fits the page's width
                width = max(320, self.viewport().width() - 40)
                return image if image.width() <= width else \
                    image.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
        return super().loadResource(kind, name)


class GuideDialog(QDialog):
    """The user guide: the docs pages listed on the left, the page on the right; works offline."""

    def __init__(self, folder: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"{APP_NAME} User Guide")
        self.setWindowFlag(Qt.WindowType.WindowMaximizeButtonHint)
        self.folder = folder
        self.pages = QListWidget()
        # a long title is elided (its tooltip has it whole), never scrolled sideways
        self.pages.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.pages.setTextElideMode(Qt.TextElideMode.ElideRight)
        for page in guide_pages(folder):
            item = QListWidgetItem(page_title(page))
            item.setData(Qt.ItemDataRole.UserRole, str(page))
            item.setToolTip(f"{item.text()}\n{page.relative_to(folder).as_posix()}")
            self.pages.addItem(item)
        self.browser = GuideBrowser()
        self.browser.setSearchPaths([str(folder)])
        self.pages.currentItemChanged.connect(self._page_chosen)
        self.browser.sourceChanged.connect(self._source_changed)
        splitter = QSplitter()
        splitter.addWidget(self.pages)
        splitter.addWidget(self.browser)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([220, 760])
        bar = QHBoxLayout()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        self.back = buttons.addButton("Back", QDialogButtonBox.ButtonRole.ActionRole)
        self.back.clicked.connect(self.browser.backward)
        self.back.setEnabled(False)
        self.browser.backwardAvailable.connect(self.back.setEnabled)
        bar.addWidget(buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addLayout(bar)
        self.resize(1000, 720)

    def show_page(self, name: str) -> None:
        """Show ``name`` (``filters.md``, ``decisions/0001-….md``, with an optional ``#anchor``)."""
        page, _, anchor = name.partition("#")
        url = QUrl.fromLocalFile(str(self.folder / page))
        if anchor:
            url.setFragment(anchor)
        self.browser.setSource(url, QTextDocument.ResourceType.MarkdownResource)

    def current_page(self) -> str:
        """The page shown, relative to the docs folder (``app.md``)."""
        path = Path(self.browser.source().toLocalFile())
        try:
            return path.relative_to(self.folder).as_posix()
        except ValueError:
            return path.name

    def _page_chosen(self, item: QListWidgetItem | None, _previous: QListWidgetItem | None) -> None:
        if item is not None and Path(item.data(Qt.ItemDataRole.UserRole)) != Path(self.browser.source().toLocalFile()):
            self.browser.setSource(QUrl.fromLocalFile(item.data(Qt.ItemDataRole.UserRole)),
                                   QTextDocument.ResourceType.MarkdownResource)

    def _source_changed(self, url: QUrl) -> None:
        """Keep the list on the page a link led to."""
        shown = str(Path(url.toLocalFile()))
        for row in range(self.pages.count()):
            if self.pages.item(row).data(Qt.ItemDataRole.UserRole) == shown:
                self.pages.blockSignals(True)
                self.pages.setCurrentRow(row)
                self.pages.blockSignals(False)
                break
