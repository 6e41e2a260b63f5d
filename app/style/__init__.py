"""How the app looks: its colours and icons, shared by models and views."""
