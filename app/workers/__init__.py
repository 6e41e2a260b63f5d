"""Work off the GUI thread: codec generators on a QThread, short jobs and thumbnails on a pool."""
