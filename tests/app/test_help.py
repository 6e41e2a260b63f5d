"""Help inside the app, through the real window: About, the shortcut sheet and the offline user guide."""
from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

pytest.importorskip("PySide6.QtWidgets")

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence, QTextCursor

import app
from app.dialogs import help_dialogs
from app.dialogs.help_dialogs import guide_folder, guide_pages, menu_shortcuts, page_markdown

pytestmark = pytest.mark.gui
DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_about_shows_the_version_and_what_it_runs_on(window, qtbot):
    window.help.about_action.trigger()
    about = window.help.about
    qtbot.waitUntil(about.isVisible)
    text = about.label.text()
    assert app.__version__ == importlib.metadata.version("tfrecord-lens")
    assert f"TFRecord Lens {app.__version__}" in text
    assert "Python " in text and "Qt " in text and "protobuf " in text
    with qtbot.waitSignal(about.guide_page) as clicked:
        about.label.linkActivated.emit("guide:filters.md")
    assert clicked.args == ["filters.md"]
    assert window.help.guide.current_page() == "filters.md"


def test_the_shortcut_sheet_lists_the_windows_actions_by_menu(window, qtbot):
    assert window.help.shortcuts_action.shortcut() == QKeySequence("Ctrl+/")
    window.help.shortcuts_action.trigger()
    sheet = window.help.shortcuts
    qtbot.waitUntil(sheet.isVisible)
    rows = sheet.rows()
    native = QKeySequence.SequenceFormat.NativeText
    assert rows["Go to Record…"] == QKeySequence("Ctrl+G").toString(native)
    assert rows["Next Damaged Record"] == "F8"
    assert rows["Keyboard Shortcuts"] == QKeySequence("Ctrl+/").toString(native)
    menus = [sheet.tree.topLevelItem(i).text(0) for i in range(sheet.tree.topLevelItemCount())]
    assert menus[:2] == ["File", "Edit"] and "Go" in menus and "Help" in menus
    # read from the actions, not a kept list: a new action is listed the next time
    added = QAction("Brand New Thing", window)
    added.setShortcut(QKeySequence("Ctrl+Alt+J"))
    window.menuBar().actions()[0].menu().addAction(added)
    groups = dict(menu_shortcuts(window.menuBar()))
    assert ("Brand New Thing", QKeySequence("Ctrl+Alt+J").toString(native)) in groups["File"]


def test_the_user_guide_opens_offline_and_its_links_navigate(window, qtbot):
    window.help.guide_action.trigger()
    guide = window.help.guide
    qtbot.waitUntil(guide.isVisible)
    assert guide.current_page() == "index.md"
    browser = guide.browser
    assert "DataLossError: corrupted record at 12" in browser.toPlainText()
    assert guide.pages.currentItem().text() == "TFRecord Lens"
    # the screenshot resolves against docs/ (images/ beside the page)
    shot = browser.loadResource(2, browser.source().resolved("images/damaged-file.png"))
    assert not shot.isNull() and shot.width() <= browser.viewport().width()
    # click the "Using the app" link
    found = browser.document().find("Using the app")
    assert not found.isNull()
    found.setPosition(found.selectionStart() + 2, QTextCursor.MoveMode.MoveAnchor)
    rect = browser.cursorRect(found)
    qtbot.mouseClick(browser.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(rect.x() + 1, rect.center().y()))
    qtbot.waitUntil(lambda: guide.current_page() == "app.md")
    assert "# Using the app" not in browser.toPlainText() and "Using the app" in browser.toPlainText()
    assert guide.pages.currentItem().text() == "Using the app"
    assert guide.back.isEnabled()
    guide.back.click()
    assert guide.current_page() == "index.md"
    guide.pages.setCurrentRow([guide.pages.item(i).text() for i in range(guide.pages.count())].index("Damaged files: what is recovered"))
    assert guide.current_page() == "damage.md"
    window.help.filters_action.trigger()
    assert guide.current_page() == "filters.md"


def test_the_guides_page_list_elides_long_titles_instead_of_scrolling(window, qtbot):
    guide = window.help.show_guide("index.md")
    guide.resize(700, 500)  # a narrow guide beside a 1024 px window
    qtbot.waitUntil(lambda: guide.isVisible() and guide.pages.width() < 260)
    pages = guide.pages
    assert not pages.horizontalScrollBar().isVisible()
    longest = max((pages.item(i) for i in range(pages.count())), key=lambda item: len(item.text()))
    assert pages.fontMetrics().horizontalAdvance(longest.text()) > pages.viewport().width()  # it is cut...
    assert longest.toolTip().splitlines()[0] == longest.text()  # ...and its tooltip has it whole


def test_the_guide_lists_every_page_and_shows_mkdocs_syntax_plainly():
    pages = guide_pages(DOCS)
    assert {p.relative_to(DOCS).as_posix() for p in pages} == \
        {p.relative_to(DOCS).as_posix() for p in [*DOCS.glob("*.md"), *DOCS.glob("decisions/*.md")]}
    assert [p.name for p in pages[:2]] == ["index.md", "app.md"]
    changelog = page_markdown(DOCS / "changelog.md")
    assert "--8<--" not in changelog and "Unreleased" in changelog


def test_a_wheels_pages_are_found_through_the_installed_files(monkeypatch, tmp_path):
    """Installed from a wheel, the pages are data files under <prefix>/share/tfrecord-lens/docs."""
    share = tmp_path / "prefix" / "share" / "tfrecord-lens" / "docs"
    share.mkdir(parents=True)
    (tmp_path / "prefix" / "lib" / "site").mkdir(parents=True)
    (share / "index.md").write_text("# TFRecord Lens\n")
    monkeypatch.setattr(help_dialogs, "__file__", str(tmp_path / "site-packages" / "app" / "dialogs" / "x.py"))

    class Dist:
        files = [importlib.metadata.PackagePath("app/__init__.py"),
                 importlib.metadata.PackagePath("../../share/tfrecord-lens/docs/index.md")]

    for f in Dist.files:
        f.locate = lambda f=f: tmp_path / "prefix" / "lib" / "site" / f
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Dist)
    assert guide_folder() is not None
    assert Path(guide_folder()).resolve() == share.resolve()
    assert guide_folder() != DOCS


def test_page_titles_read_as_text(tmp_path):
    from app.dialogs.help_dialogs import page_title

    (tmp_path / "doctor.md").write_text("# The dataset doctor: `check` a dataset\n\ntext\n")
    (tmp_path / "changelog.md").write_text('--8<-- "CHANGELOG.md"\n')
    assert page_title(tmp_path / "doctor.md") == "The dataset doctor: check a dataset"
    assert page_title(tmp_path / "changelog.md") == "Changelog"
