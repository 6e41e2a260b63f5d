"""Editing: the document (edits as an overlay over its source), edits inside one record, the edited records."""
