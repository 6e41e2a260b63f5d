"""Bytes in and out: opening local files safely, GZIP/ZLIB streams, zran, remote objects, and every output
written atomically through a temporary file."""
