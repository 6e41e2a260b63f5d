"""Inputs that are not what they seem: FIFOs, devices, /proc files, files that shrink
while they are read, plain files whose first bytes look like GZIP or ZLIB.

Each must end in one line and exit 2 (or, for the look-alikes, in every intact
record found), never in a hang, a traceback or a signal.
"""
from __future__ import annotations

import errno
import os
import random
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from codec import TFRecordFile, sniff_compression, write_records
from codec.cli.main import main
from codec.errors import FileAccessError, FileChangedError
from codec.format.framing import Compression, ProblemKind, RecordStatus, encode_record
from codec.ops.repair import repair
from codec.sources import byte_sources as reader_module  # where a local file is read with pread
from codec.sources import verification
from codec.sources.shard_set import ShardSet
from codec.storage import opening
from codec.storage import opening as opening_module

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    """``tfrlens-cli argv`` in-process: (exit code, stderr)."""
    code = main(list(argv))
    return code, capsys.readouterr().err


def one_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


class FifoWatchdog:
    """Unblocks readers stuck on ``fifo`` after ``seconds`` (by opening its other end, again
    and again until the block ends), so that a regression fails the test instead of hanging it."""

    def __init__(self, fifo: Path, seconds: float = 20.0) -> None:
        self.fifo = fifo
        self.seconds = seconds
        self.fired = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        wait = self.seconds
        while not self._done.wait(wait):
            self.fired = True
            wait = 0.2
            try:
                os.close(os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass

    def __enter__(self) -> FifoWatchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join()


# -- not regular files -----------------------------------------------------------
@needs_fifo
@pytest.mark.parametrize("command", ["info", "verify", "cat", "repair"])
def test_a_fifo_is_refused_at_once(tmp_path, capsys, command):
    fifo = tmp_path / "pipe.tfrecord"
    os.mkfifo(fifo)
    argv = [command, str(fifo)] + (["-o", str(tmp_path / "out.tfrecord")] if command == "repair" else [])
    with FifoWatchdog(fifo) as watchdog:
        code, err = run_cli(capsys, *argv)
    assert not watchdog.fired, "the command blocked on the FIFO"
    assert code == 2
    assert one_line(err) == f"tfrlens-cli: not a regular file: {fifo} (a FIFO)"


@needs_fifo
def test_the_library_refuses_a_fifo_too(tmp_path):
    fifo = tmp_path / "pipe.tfrecord"
    os.mkfifo(fifo)
    with FifoWatchdog(fifo) as watchdog:
        with pytest.raises(FileAccessError, match="not a regular file: .*pipe.tfrecord \\(a FIFO\\)"):
            TFRecordFile(fifo)
        with pytest.raises(FileAccessError, match="a FIFO"):
            sniff_compression(fifo)
    assert not watchdog.fired


@pytest.mark.skipif(not os.path.exists("/dev/null") or not stat.S_ISCHR(os.stat("/dev/null").st_mode),
                    reason="no /dev/null character device")
def test_dev_null_is_not_an_empty_tfrecord_file(capsys):
    code, err = run_cli(capsys, "verify", "/dev/null")
    assert code == 2
    assert one_line(err) == "tfrlens-cli: not a regular file: /dev/null (a character device)"
    with pytest.raises(FileAccessError, match="character device"):
        TFRecordFile("/dev/null")


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets")
def test_a_socket_is_refused(tmp_path, capsys):
    path = tmp_path / "s.tfrecord"
    if len(str(path)) > 100:
        pytest.skip("the temporary folder's path is too long for a Unix socket")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        code, err = run_cli(capsys, "info", str(path))
    assert code == 2
    assert one_line(err) == f"tfrlens-cli: not a regular file: {path} (a socket)"


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="no /proc/self/mem (not Linux)")
@pytest.mark.parametrize("command", ["verify", "info", "cat"])
def test_a_file_that_fails_to_read_gives_one_line(capsys, command):
    # A regular file of size 0 whose first read fails with EIO.
    code, err = run_cli(capsys, command, "/proc/self/mem")
    assert code == 2
    assert one_line(err).startswith("tfrlens-cli: cannot read /proc/self/mem: ")


@needs_fifo
def test_a_folder_reports_its_fifo_as_unusable_and_reads_the_rest(tmp_path, capsys):
    folder = tmp_path / "set"
    folder.mkdir()
    write_records(folder / "a.tfrecord", [b"one", b"two"])
    fifo = folder / "b.tfrecord"
    os.mkfifo(fifo)
    os.mkfifo(folder / "notes.txt")  # not named like a TFRecord: left alone, never opened
    with FifoWatchdog(fifo) as watchdog:
        with ShardSet.from_args([str(folder)]) as shards:
            shards.build_index()
            assert len(shards) == 2 and list(shards) == [b"one", b"two"]
            assert shards.unusable == [(str(fifo), f"not a regular file: {fifo} (a FIFO)")]
        code, err = run_cli(capsys, "info", str(folder))
    assert not watchdog.fired
    assert code == 0
    assert f"skipped {fifo}: not a regular file: {fifo} (a FIFO)" in err


@needs_fifo
def test_a_glob_matching_a_fifo_skips_it_with_the_reason(tmp_path):
    write_records(tmp_path / "a-00000-of-00002.tfrecord", [b"x"])
    fifo = tmp_path / "a-00001-of-00002.tfrecord"
    os.mkfifo(fifo)
    with FifoWatchdog(fifo) as watchdog:
        with ShardSet.from_args([str(tmp_path / "a-*-of-00002.tfrecord")]) as shards:
            shards.build_index()
            assert list(shards) == [b"x"]
            assert shards.unusable == [(str(fifo), f"not a regular file: {fifo} (a FIFO)")]
    assert not watchdog.fired


# -- read errors after open ----------------------------------------------------------
def _failing_pread(after: int):
    """An os.pread that works ``after`` times, then fails as a dying disk does."""
    calls = [0]
    real = reader_module.pread

    def pread(fd, n, pos):
        calls[0] += 1
        if calls[0] > after:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(fd, n, pos)

    return pread


def test_read_errors_after_open_are_one_line_errors(tmp_path, monkeypatch):
    path = tmp_path / "a.tfrecord"
    write_records(path, [bytes([k]) * 100 for k in range(50)])
    f = TFRecordFile(path, use_cache=False)
    monkeypatch.setattr(reader_module, "pread", _failing_pread(0))
    expected = f"cannot read {path}: {os.strerror(errno.EIO)}"
    with pytest.raises(FileAccessError) as exc:
        f.build_index()
    assert str(exc.value) == expected
    monkeypatch.undo()
    f.build_index()
    monkeypatch.setattr(reader_module, "pread", _failing_pread(0))
    for action in (lambda: f.read(3), lambda: f[3], lambda: f.record_info(3), f.verify):
        with pytest.raises(FileAccessError) as exc:
            action()
        assert str(exc.value) == expected
    f.close()


def test_a_read_error_in_a_compressed_file_is_one_line(tmp_path, monkeypatch):
    path = tmp_path / "a.tfrecord.gz"
    write_records(path, [os.urandom(200) for _ in range(50)], Compression.GZIP)
    f = TFRecordFile(path, use_cache=False)

    class Dying:
        def __init__(self, raw):
            self._raw = raw

        def read(self, n=-1):
            raise OSError(errno.EIO, os.strerror(errno.EIO))

        def __getattr__(self, name):
            return getattr(self._raw, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._raw.close()

    real_open = opening_module.open_file  # (what a GZIP or ZLIB read opens the file with)
    monkeypatch.setattr(opening_module, "open_file", lambda p: Dying(real_open(p)))
    with pytest.raises(FileAccessError, match=f"^cannot read {path}: {os.strerror(errno.EIO)}$"):
        f.build_index()
    f.close()


# -- a file that shrinks while it is read ----------------------------------------------
def test_a_record_past_the_new_end_raises_file_changed(tmp_path):
    path = tmp_path / "a.tfrecord"
    records = [bytes([k % 256]) * 1000 for k in range(200)]
    write_records(path, records)
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        size = os.path.getsize(path)
        cut = f.index.offset(150) + 20  # inside record 150
        os.truncate(path, cut)
        assert f[10] == records[10]  # what is still there reads as before
        for i in (150, 160, 199):
            with pytest.raises(FileChangedError) as exc:
                f.read(i)
            assert str(exc.value) == (f"the file changed while reading: {path} "
                                      f"(was {size} bytes, now {cut} bytes)")
        with pytest.raises(FileChangedError):
            f.verify()


def test_a_released_file_that_shrank_is_not_reopened(tmp_path):
    path = tmp_path / "a.tfrecord"
    write_records(path, [b"x" * 100] * 20)
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        assert f.release() and not f.is_open
        os.truncate(path, 500)
        with pytest.raises(FileChangedError, match="changed on disk since it was opened"):
            f[1]


def test_cat_of_a_file_truncated_midway_exits_2_with_one_line(tmp_path):
    path = tmp_path / "big.tfrecord"
    rnd = random.Random(7)
    write_records(path, [rnd.randbytes(10_000) for _ in range(5_000)])  # ~50 MB
    size = os.path.getsize(path)
    exe = os.path.join(os.path.dirname(sys.executable), "tfrlens-cli")
    proc = subprocess.Popen([exe, "cat", "--json", "--no-cache", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    cut = 200 * (10_000 + 16) + 5_000  # inside record 200
    try:
        first = proc.stdout.readline()  # the index pass is over: it prints from record 0 on
        assert first.startswith(b'{"index": 0')
        # The pipe holds a few records at most: the reader is far from the new end.
        os.truncate(path, cut)
        rest = proc.stdout.read()
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 2, f"exit {code} (a negative code is a signal: {err!r})"
    assert one_line(err) == (f"tfrlens-cli: the file changed while reading: {path} "
                             f"(was {size} bytes, now {cut} bytes)")
    assert rest.count(b"\n") == 199  # records 1 to 199: all that is left whole


# -- plain files that start like GZIP or ZLIB -------------------------------------------
def _lookalike(tmp_path: Path, first_length: int, name: str, fill: str = "random") -> tuple[Path, list[bytes]]:
    """100 records, the first ``first_length`` bytes long, one bit of its length CRC flipped."""
    rnd = random.Random(first_length)
    first = rnd.randbytes(first_length) if fill == "random" else fill.encode() * first_length
    records = [first] + [rnd.randbytes(rnd.randrange(10, 2000)) for _ in range(99)]
    blob = bytearray(b"".join(encode_record(r) for r in records))
    blob[9] ^= 0x10  # in the length CRC (bytes 8-11)
    path = tmp_path / name
    path.write_bytes(bytes(blob))
    return path, records


def _assert_every_record_found(path: Path, records: list[bytes]) -> None:
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index(verify=True)
        assert f.compression is Compression.NONE
        assert len(f) == 100
        # The first record's data CRC proves its length: recovered, and the 99 after it intact.
        assert f.index.status(0) is RecordStatus.LENGTH_CRC
        assert all(f.index.status(i) is RecordStatus.OK for i in range(1, 100))
        assert [f.read(i).data for i in range(100)] == records
        assert [p.kind for p in f.problems] == [ProblemKind.LENGTH_CRC]


@pytest.mark.parametrize("fill", ["random", "a"])
def test_a_plain_file_starting_with_gzip_magic_is_read_as_plain(tmp_path, fill):
    path, records = _lookalike(tmp_path, 0x088B1F, "gz_lookalike.tfrecord", fill)
    assert path.read_bytes()[:3] == b"\x1f\x8b\x08"
    assert sniff_compression(path) is Compression.NONE
    _assert_every_record_found(path, records)
    out = tmp_path / "fixed.tfrecord"
    with TFRecordFile(path, use_cache=False) as f:
        report = repair(f, out)
    assert report.kept == 100 and not report.dropped
    with TFRecordFile(out) as fixed:
        assert list(fixed.build_index()) == records


def test_a_gzip_lookalike_whose_stream_runs_on_falls_back_to_the_plain_scan(tmp_path, monkeypatch):
    # The inflate probe passed (data that inflates for a while): the stream pass finds
    # nothing, and the records whose CRCs hold decide.
    path, records = _lookalike(tmp_path, 0x088B1F, "gz_lookalike.tfrecord")
    monkeypatch.setattr(opening, "_inflate_probe", lambda head, wbits: (0, False))
    assert sniff_compression(path) is Compression.GZIP
    _assert_every_record_found(path, records)


def test_a_plain_file_starting_with_a_zlib_header_is_read_as_plain(tmp_path):
    path, records = _lookalike(tmp_path, 0x9C78, "zlib_lookalike.tfrecord")
    assert path.read_bytes()[:2] == b"\x78\x9c"
    assert sniff_compression(path) is Compression.NONE
    _assert_every_record_found(path, records)


def test_a_gzip_file_damaged_at_its_start_stays_gzip(tmp_path):
    path = tmp_path / "a.tfrecord.gz"
    write_records(path, [os.urandom(300) for _ in range(100)], Compression.GZIP)
    blob = bytearray(path.read_bytes())
    blob[12] ^= 0xFF  # the first deflate block header
    path.write_bytes(bytes(blob))
    assert sniff_compression(path) is Compression.GZIP
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        assert f.compression is Compression.GZIP
        assert any(p.kind is ProblemKind.DECOMPRESS for p in f.problems)


# -- reads through pread -----------------------------------------------------------------
def test_verify_of_an_indexed_file_checks_small_and_large_records_alike(tmp_path, monkeypatch):
    rnd = random.Random(3)
    sizes = [100] * 50 + [70_000] * 5 + [100] * 50 + [200_000] + [0, 5] * 5
    records = [rnd.randbytes(n) for n in sizes]
    blob = bytearray(b"".join(encode_record(r) for r in records))
    offsets = [0]
    for r in records:
        offsets.append(offsets[-1] + len(r) + 16)
    damaged = [3, 52, 105]
    for i in damaged:
        blob[offsets[i] + 12 + len(records[i]) // 2] ^= 0x01
    path = tmp_path / "mixed.tfrecord"
    path.write_bytes(bytes(blob))
    # Windows smaller than the largest record, CRCs of large ones in several pieces.
    monkeypatch.setattr(verification, "VERIFY_WINDOW", 100_000)
    monkeypatch.setattr(verification, "CRC_PIECE", 30_000)
    with TFRecordFile(path, use_cache=False) as f:
        f.build_index()
        progress = list(f.verify_iter(every=16))
        assert progress[-1].done and len(progress) > 10
        bad = [i for i in range(len(f)) if f.index.status(i) is RecordStatus.DATA_CRC]
        assert bad == damaged
        assert all(f.index.status(i) is RecordStatus.OK for i in range(len(f)) if i not in damaged)
        assert [(p.index, p.offset, p.kind) for p in f.problems] == \
            [(i, offsets[i], ProblemKind.DATA_CRC) for i in damaged]
        assert [f.read(i).data for i in range(len(f)) if i not in damaged] == \
            [r for i, r in enumerate(records) if i not in damaged]
    with TFRecordFile(path, use_cache=False) as g:  # the index pass's own check agrees
        g.build_index(verify=True)
        assert [p.offset for p in g.problems] == [offsets[i] for i in damaged]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc/self/fd to count open files")
def test_a_shard_set_holds_at_most_max_open_file_descriptors(tmp_path):
    paths = []
    for k in range(12):
        path = tmp_path / f"s-{k:05d}-of-00012.tfrecord"
        write_records(path, [b"%d-%d" % (k, j) for j in range(3)])
        paths.append(str(path))

    def held() -> int:
        targets = []
        for fd in os.listdir("/proc/self/fd"):
            try:
                targets.append(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                pass
        return sum(1 for t in targets if t in paths)

    with ShardSet(paths, max_open=4, use_cache=False) as shards:
        shards.build_index()
        for i in range(len(shards)):
            assert shards[i] == b"%d-%d" % (i // 3, i % 3)
            assert held() <= 4
        assert held() == shards.open_files
    assert held() == 0  # closing the set closes every fd
