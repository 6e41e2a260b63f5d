"""Bytes in and out: opening local files safely, what named paths and folders hold, GZIP/ZLIB streams,
zran, remote objects and their errors, and every output written atomically through a temporary file."""
