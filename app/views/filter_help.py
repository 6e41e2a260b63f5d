"""The filter language, with examples, where filters are typed: the filter box's "?" menu and context menu.

The one place the app says what an expression may hold (codec/query/filter.py
is the language, docs/filters.md its page): the menu lists examples by topic
and choosing one puts it in the box; "Filter Language…" shows them all with
the rules, each example a link that does the same.
"""
from __future__ import annotations

import html
from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QMenu, QTextBrowser, QVBoxLayout, QWidget

# (topic, [(example, what it selects)]): only syntax codec.query accepts.
EXAMPLES: list[tuple[str, list[tuple[str, str]]]] = [
    ("Compare: == != < <= > >=", [
        ("label == 3", "some value of label is 3"),
        ("label != 3", "no value is 3 (or no label)"),
        ("image/height > 100 and image/width > 100", "both sides are large"),
        ('name == "cat"', "text in double or single quotes"),
    ]),
    ("Membership: in, not in", [
        ("label in [1, 2]", "membership: label has 1 or 2"),
        ('"cat" in image/object/class/text', "membership: some box is a cat"),
        ("label not in [0, 1]", "no value of label is 0 or 1"),
    ]),
    ("Regular expression: ~", [
        ('text ~ "(?i)rose"', "regex search for rose, any case"),
        ('filename ~ "^train_"', "regex: starts with train_"),
    ]),
    ("Functions: len(), has()", [
        ("len(image/object/bbox/xmin) >= 5", "five or more values (boxes)"),
        ("has(image/encoded)", "has the feature, even empty"),
        ("not has(image/encoded)", "the record lacks it"),
    ]),
    ("Logic: and, or, not, ( )", [
        ("label == 1 or label == 2", "either"),
        ("not (label == 0 or score < 0.5)", "neither"),
    ]),
    ("Record fields", [
        ('status != "ok"', "damaged records (see the rules)"),
        ('kind == "sequence_example"', "also example, raw"),
        ("size > 1e5", "over 100,000 bytes of data"),
        ("index < 100", "the first 100 records"),
        ("offset >= 1000000", "header past the first 1 MB"),
    ]),
    ("Feature names", [
        ("image/object/class/label == 1", "keys with slashes, as they are"),
        ('`my feature` == "x"', "other names in backquotes"),
        ("is_crowd", "means is_crowd == true"),
    ]),
]

RULES = [
    "A comparison holds when <i>any</i> value of a feature satisfies it; a missing feature has no values.",
    "<code>x != 3</code> is <code>not (x == 3)</code>, so it holds for records without <code>x</code> too.",
    "<code>in</code> is membership in a list or a feature's values, never a substring test; "
    "<code>~</code> is an unanchored RE2 search (no backreferences or lookaround).",
    "<code>status</code> is <code>\"ok\"</code>, <code>\"length_crc\"</code>, <code>\"data_crc\"</code> or "
    "<code>\"truncated\"</code>; <code>kind</code> is <code>\"example\"</code>, "
    "<code>\"sequence_example\"</code> or <code>\"raw\"</code>; <code>size</code> is the data's length in bytes.",
    "Numbers: <code>3</code>, <code>-2</code>, <code>0.5</code>, <code>1e5</code>; "
    "<code>true</code> and <code>false</code> are 1 and 0.",
    "<code>not</code> binds tighter than <code>and</code>, <code>and</code> tighter than <code>or</code>; "
    "comparisons do not chain: write <code>1 &lt; x and x &lt; 5</code>.",
    "With class names (a label map, TFDS), <code>label == \"cat\"</code> compares a class-id feature by name; "
    "a message's enum compares by name or number (<code>state == \"ACTIVE\"</code>, <code>state == 2</code>).",
]

TOOLTIP = ("<b>Filter records</b> (Enter to run, Esc to stop)<br>"
           "<code>label == 3 and \"cat\" in image/object/class/text</code><br>"
           "The <b>?</b> button beside the box (or its right-click menu) lists the language with examples.")


def all_examples() -> list[str]:
    """Every example, in the order shown (a link's number in :func:`reference_html`)."""
    return [text for _, examples in EXAMPLES for text, _ in examples]


def reference_html() -> str:
    """Every example (a link ``example:N``, N its place in :func:`all_examples`) and the rules, as one page."""
    parts = ["<h3>Filter expressions</h3><p>Click an example to put it in the filter box.</p>"]
    number = 0
    for topic, examples in EXAMPLES:
        parts.append(f"<p><b>{html.escape(topic)}</b></p><table cellspacing='2'>")
        for text, what in examples:
            parts.append(f"<tr><td><a href='example:{number}'><code>{html.escape(text)}"
                         f"</code></a></td><td>&nbsp;&nbsp;{html.escape(what)}</td></tr>")
            number += 1
        parts.append("</table>")
    parts.append("<p><b>Rules</b></p><ul>" + "".join(f"<li>{rule}</li>" for rule in RULES) + "</ul>")
    return "".join(parts)


def help_menu(parent: QWidget, insert: Callable[[str], None]) -> QMenu:
    """The examples by topic, each with what it selects (choosing one calls ``insert`` with it; it is
    the action's ``data()``), and "Filter Language…"."""
    menu = QMenu("Filter Language", parent)
    for topic, examples in EXAMPLES:
        menu.addSection(topic)
        for text, what in examples:
            action = menu.addAction(f"{text}\t{what}")  # the meaning in the shortcut column, beside it
            action.setData(text)
            action.setStatusTip(what)
            action.triggered.connect(lambda _=False, t=text: insert(t))
    menu.addSeparator()
    menu.addAction("Filter Language…").triggered.connect(lambda: show_reference(parent, insert))
    return menu


class ReferenceDialog(QDialog):
    """The whole language on one page; an example clicked goes into the filter box."""

    def __init__(self, parent: QWidget, insert: Callable[[str], None]) -> None:
        super().__init__(parent)
        self.setWindowTitle("Filter Language")
        self.browser = QTextBrowser(self)
        self.browser.setOpenLinks(False)
        self.browser.setHtml(reference_html())
        self.browser.anchorClicked.connect(lambda url: self._clicked(url.toString(), insert))
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        self.resize(620, 560)

    @staticmethod
    def _clicked(link: str, insert: Callable[[str], None]) -> None:
        examples = all_examples()
        number = link.removeprefix("example:")
        if number.isdigit() and int(number) < len(examples):
            insert(examples[int(number)])


def show_reference(parent: QWidget, insert: Callable[[str], None]) -> ReferenceDialog:
    """Show the reference beside the window (not modal: the box stays usable)."""
    dialog = ReferenceDialog(parent.window(), insert)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog
