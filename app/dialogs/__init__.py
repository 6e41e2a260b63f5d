"""Dialogs that ask the user for what an action needs, or run one with progress."""
