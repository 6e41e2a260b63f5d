"""The colours the app shares between views and models, for a light theme.

Strings are for style sheets and rich text (``<span style='color:…'>``);
QColors are for painting and for models' foreground/background roles.
Colours only one module uses (hex bands, box colours, chart series) stay
in that module.
"""
from __future__ import annotations

from PySide6.QtGui import QColor

OK_COLOR = "#15803d"  # a CRC that holds, a file written
BAD_COLOR = "#c62828"  # damage named in text
RECOVERED_COLOR = "#c2410c"  # recovered despite a bad length CRC; warnings
MUTED_COLOR = "#64748b"  # secondary text
ERROR_COLOR = "#b91c1c"  # input that cannot be used, an image that cannot be decoded
NOTE_COLOR = "#b45309"  # a remark about input that still works
CAPTION_COLOR = "#475569"  # captions under images
ERROR_STYLE = "color: rgb(198, 40, 40);"  # a dialog's line saying what cannot be used
HINT_STYLE = "color: rgb(100, 116, 139);"  # a dialog's hint under a field

BAD_TEXT = QColor(BAD_COLOR)
WARN_TEXT = QColor(RECOVERED_COLOR)
MUTED_TEXT = QColor(MUTED_COLOR)
ERROR_TEXT = QColor(ERROR_COLOR)
DAMAGED_TEXT = QColor(211, 47, 47)  # damaged records in tables, the map and the gallery
RECOVERED_TEXT = QColor(205, 120, 0)
ACCENT_TEXT = QColor(37, 99, 235)  # rows edited and not saved; "more…" rows to click

CANVAS_BG = QColor(241, 245, 249)  # behind images
ERROR_BG = QColor(254, 242, 242)  # behind an image that cannot be decoded
