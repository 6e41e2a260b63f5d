"""Widgets and delegates: what the user sees, each showing a model."""
