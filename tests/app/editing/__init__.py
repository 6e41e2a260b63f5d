"""Editing through the real main window: every edit kind with undo/redo, save, export.

Each test works on a copy of a reference fixture, drives the GUI and asserts on the tab's Document;
then it saves and reads the file back through the codec with every CRC checked. Dialogs are replaced
by the answers a user would give (``edit_dialogs.ask_*``), so nothing modal ever blocks.
"""
