"""Each tab its own messages, the Window menu, many tabs and the toolbar, through the real main window."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6.QtWidgets")
pytestmark = pytest.mark.gui

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QStyleOptionTab, QToolButton  # noqa: E402

from app.shell.main_window import MainWindow  # noqa: E402
from app.shell.window_tabs import TAB_MAX_WIDTH  # noqa: E402
from app.style import icons  # noqa: E402
from codec.storage.writer import write_records  # noqa: E402
from tests.builders import FIXTURES  # noqa: E402
from tests.gui_helpers import open_done, open_remote  # noqa: E402
from tests.remote_servers import copy_into, range_server  # noqa: E402

TIMEOUT = 20000


def status(window: MainWindow) -> str:
    return window.statusBar().currentMessage()


def two_tabs(window, qtbot):
    return open_done(window, qtbot, "structured.tfrecord"), open_done(window, qtbot, "my_example.tfrecords")


def fail_decode_as(window: MainWindow, tab) -> str:
    """Decode As a type from a schema file that is not there: an error of the tab's."""
    assert not window.payloads.decode_as(tab, "/nowhere/frames.proto", "lens.Frame")
    return window.message_bar.text()


# -- messages belong to their tab ------------------------------------------------------------------
def test_a_tabs_status_message_shows_only_on_its_tab(window, qtbot):
    a, b = two_tabs(window, qtbot)
    window.tabs.setCurrentWidget(a)
    window.go_to("not a number")
    note = status(window)
    assert "not a record number" in note
    window.tabs.setCurrentWidget(b)
    assert status(window) == ""
    window.tabs.setCurrentWidget(a)
    assert status(window) == note


def test_a_note_from_a_tab_not_shown_waits_for_it(window, qtbot):
    a, b = two_tabs(window, qtbot)  # b is current
    a.message.emit("length CRC, 237 bytes skipped")  # a pass of a's says something meanwhile
    assert status(window) == ""
    window.select_tab(window.tabs.indexOf(a))
    assert status(window) == "length CRC, 237 bytes skipped"


def test_a_tabs_error_bar_shows_only_on_its_tab_until_its_next_action(window, qtbot):
    a, b = two_tabs(window, qtbot)
    window.tabs.setCurrentWidget(a)
    text = fail_decode_as(window, a)
    assert "cannot decode" in text and window.message_bar.isVisible()
    assert status(window) == text.splitlines()[0]
    window.tabs.setCurrentWidget(b)
    assert window.message_bar.isHidden() and status(window) == ""
    window.tabs.setCurrentWidget(a)
    assert window.message_bar.text() == text
    window.verify_current()  # a new action on the tab: its old error goes
    assert window.message_bar.isHidden() and not status(window).startswith("cannot decode")


def test_dismissing_the_bar_forgets_the_error(window, qtbot):
    a, b = two_tabs(window, qtbot)
    fail_decode_as(window, b)
    window.message_bar.close_button.click()
    window.tabs.setCurrentWidget(a)
    window.tabs.setCurrentWidget(b)
    assert window.message_bar.isHidden()


def test_a_failed_open_shows_on_every_tab_until_the_next_action(window, qtbot):
    """A failed open has no tab: it shows until the user does something else (here: picks a tab)."""
    a, b = two_tabs(window, qtbot)
    assert window.open_file(str(FIXTURES / "not_a_tfrecord.jpg")) is None
    assert "not a TFRecord" in window.message_bar.text()
    window.tabs.setCurrentWidget(a)  # another tab shows (not the user's doing): the error stays
    assert "not a TFRecord" in window.message_bar.text() and "not a TFRecord" in status(window)
    window.select_tab(window.tabs.indexOf(b))  # the user picks a tab: an action
    assert window.message_bar.isHidden() and status(window) == ""


def test_opening_again_clears_a_failed_opens_error(window, qtbot):
    assert window.open_file(str(FIXTURES / "not_a_tfrecord.jpg")) is None
    assert window.message_bar.isVisible()
    open_done(window, qtbot, "structured.tfrecord")
    assert window.message_bar.isHidden()


@pytest.mark.network
def test_a_url_error_goes_when_a_new_url_starts_opening(window, qtbot, tmp_path):
    copy_into(tmp_path, FIXTURES / "structured.tfrecord", "structured.tfrecord")
    with range_server(tmp_path) as http:
        opening = window.open_url(http.url_for("missing.tfrecord"))
        with qtbot.waitSignal(opening.failed, timeout=TIMEOUT):
            pass
        assert "not found" in window.message_bar.text()
        opening = window.open_url(http.url_for("structured.tfrecord"))
        assert window.message_bar.isHidden() and "not found" not in status(window)  # while it opens
        with qtbot.waitSignal(opening.opened, timeout=TIMEOUT):
            pass
        assert window.message_bar.isHidden()


# -- the Window menu and remote tabs ---------------------------------------------------------------
def test_window_menu_lists_the_tabs_and_switches(window, qtbot):
    a, b = two_tabs(window, qtbot)
    menu = window.window_menu
    menu.menu.aboutToShow.emit()
    entries = [x for x in menu.menu.actions() if x.isCheckable()]
    assert [x.text() for x in entries] == ["&1  structured.tfrecord", "&2  my_example.tfrecords"]
    assert [x.isChecked() for x in entries] == [False, True]
    assert [x.shortcut().toString() for x in entries] == ["Alt+1", "Alt+2"]
    entries[0].trigger()
    assert window.current_tab() is a
    menu.next_action.trigger()
    assert window.current_tab() is b
    menu.next_action.trigger()  # wraps around
    assert window.current_tab() is a
    menu.previous_action.trigger()
    assert window.current_tab() is b
    assert menu.next_action.shortcut().toString() == "Ctrl+Tab"


@pytest.mark.network
def test_a_remote_tab_is_marked(window, qtbot, tmp_path):
    copy_into(tmp_path, FIXTURES / "structured.tfrecord", "structured.tfrecord")
    local = open_done(window, qtbot, "my_example.tfrecords")
    with range_server(tmp_path) as http:
        remote = open_remote(window, qtbot, http.url_for("structured.tfrecord"))
        remote_icon = icons.icon("remote").cacheKey()
        assert window.tabs.tabIcon(window.tabs.indexOf(remote)).cacheKey() == remote_icon
        assert window.tabs.tabIcon(window.tabs.indexOf(local)).cacheKey() != remote_icon
        window.window_menu.refresh()
        texts = [x.text() for x in window.window_menu.menu.actions() if x.isCheckable()]
        assert texts == ["&1  my_example.tfrecords", "&2  structured.tfrecord (remote)"]


def test_twenty_tabs_elide_and_the_first_stays_reachable(window, qtbot, tmp_path):
    """The walk's twenty tabs (making them takes most of this test's 2–5 s)."""
    name = "a_rather_long_shard_name_from_a_training_run_{:02d}-of-00020.tfrecord"
    for i in range(20):
        write_records(tmp_path / name.format(i), [b"record"])
    tabs = window.open_files([str(tmp_path / name.format(i)) for i in range(20)])
    assert len(tabs) == 20 and window.current_tab() is tabs[-1]
    bar = window.tabs.tabBar()
    assert all(bar.tabRect(i).width() <= TAB_MAX_WIDTH for i in range(20))
    option = QStyleOptionTab()
    bar.initStyleOption(option, 0)
    assert "…" in option.text and option.text != bar.tabText(0)  # elided in the middle
    assert option.text.startswith("a_rat") and option.text.endswith("record")  # its start and its end
    assert bar.tabToolTip(0) == str(tmp_path / name.format(0))  # the full path
    assert any(b.isVisible() for b in bar.findChildren(QToolButton))  # the scroll buttons
    assert bar.tabRect(0).right() < 0  # scrolled out of sight: the last tab is current
    window.window_menu.refresh()
    window.window_menu.numbered[0].trigger()
    assert window.current_tab() is tabs[0] and bar.rect().contains(bar.tabRect(0))


# -- the toolbar ---------------------------------------------------------------------------------
def test_the_toolbar_holds_the_main_actions_and_hides(window, qtbot, tmp_path):
    bar = window.toolbar
    actions = bar.actions()
    qa = window.qa
    for action in (window.open_action, window.open_url_action, window.verify_action, window.cancel_action,
                   window.goto_action, qa.filter_action, qa.stats_action, qa.gallery_action,
                   window.edit_actions.save_action):
        assert action in actions and not action.icon().isNull(), action.text()
    assert window.open_action.toolTip().startswith("Open (Ctrl+O)\n")  # name, shortcut, what it does
    assert window.goto_action.toolTip() == "Go to Record…: open a file first"  # greyed out: why instead
    toggle = bar.toggleViewAction()
    assert toggle in window.view_menu.actions() and bar.isVisible()
    toggle.trigger()
    assert bar.isHidden()
    window.settings.save_window(window.saveGeometry(), window.saveState())
    again = MainWindow(window.settings)  # the window state keeps it hidden
    qtbot.addWidget(again)
    again.show()
    assert again.toolbar.isHidden() and not again.toolbar.toggleViewAction().isChecked()
    again.toolbar.toggleViewAction().trigger()
    assert again.toolbar.isVisible()


def test_every_start_page_button_has_an_icon(window):
    page = window.start_page
    assert not any(b.icon().isNull() for b in (page.open_button, page.url_button, page.demo_button))



def test_a_status_tip_does_not_wipe_the_tabs_message(window, qtbot):
    a = open_done(window, qtbot, "structured.tfrecord")
    window.say("3 of 25 records match", a)
    window.statusBar().showMessage("Open TFRecord files")  # hovering a toolbar button: its status tip…
    window.statusBar().clearMessage()  # …and the pointer leaves it
    assert status(window) == "3 of 25 records match"


def test_ctrl_tab_and_alt_number_switch_tabs(window, qtbot):
    a, b = two_tabs(window, qtbot)
    window.activateWindow()
    qtbot.keyClick(b.table, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert window.current_tab() is a
    qtbot.keyClick(a.table, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
    assert window.current_tab() is b
    qtbot.keyClick(b.table, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.current_tab() is a
    qtbot.keyClick(a.table, Qt.Key.Key_PageDown, Qt.KeyboardModifier.ControlModifier)
    assert window.current_tab() is b


def test_a_new_filter_clears_the_tabs_old_note(window, qtbot):
    a = open_done(window, qtbot, "structured.tfrecord")
    window.say("an old note", a)
    with qtbot.waitSignal(a.qa.filter_bar.runner.started, timeout=TIMEOUT):
        a.qa.filter_bar.run("int_col >= 0")
    assert status(window) != "an old note"
    qtbot.waitUntil(lambda: "records match" in status(window), timeout=TIMEOUT)
