"""The window, its tabs, and the actions that wire models, views, dialogs and workers together."""
