"""Whole-file operations that write outputs: export, repair, and the JSON reports of the passes."""
