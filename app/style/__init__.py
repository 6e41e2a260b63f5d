"""How the app looks: its colours (light and dark) and icons, shared by models and views, and a label that elides."""
