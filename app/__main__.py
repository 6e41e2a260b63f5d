"""``tfrlens FILE...`` / ``python -m app FILE...``: start the desktop app."""
from __future__ import annotations

import argparse
import signal
import sys
from typing import Sequence

from app import __version__


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tfrlens", description="Browse and inspect TFRecord files (plain, GZIP or ZLIB).")
    parser.add_argument("files", nargs="*", metavar="FILE", help="TFRecord files or URLs (s3://, gs://, https://...) "
                        "to open, one tab each; a folder or a quoted glob ('train-*-of-01024.tfrecord', "
                        "'s3://bucket/train-*') opens as one dataset, as does a URL prefix ending in /")
    parser.add_argument("--set", action="store_true", help="open the FILEs as one dataset (shard set) in one tab")
    parser.add_argument("--demo", action="store_true", help="open the demo dataset")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return parser.parse_args(argv)


def build_window(args: argparse.Namespace):
    """The main window with the requested files (or the demo) opening."""
    from app.shell.main_window import MainWindow

    window = MainWindow()
    if args.files and args.set:
        window.open_set(list(args.files))
    elif args.files:
        window.open_files(list(args.files))
    if args.demo:
        window.open_demo()
    return window


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from PySide6.QtCore import QLoggingCategory
    from PySide6.QtWidgets import QApplication

    from app.style import icons

    # QtMultimedia (the playback extra) looks for optional system libraries (PipeWire, VA-API) and names
    # each one missing on stderr; playing a WAV needs none of them.
    QLoggingCategory.setFilterRules("qt.multimedia.symbolsresolver=false")

    QApplication.setApplicationName("TFRecord Lens")
    QApplication.setOrganizationName("TFRecord Lens")
    QApplication.setApplicationVersion(__version__)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    app.setWindowIcon(icons.icon("app"))
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl+C in the terminal quits
    window = build_window(args)
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
