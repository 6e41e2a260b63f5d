"""Every writer path: file modes, special files, symlinks, compression from names, interruptions, stale temps."""
from __future__ import annotations

import gzip
import io
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest
from PIL import Image

from codec import (
    Compression,
    Document,
    FileAccessError,
    TFRecordFile,
    TFRecordWriter,
    encode_record,
    export,
    repair,
    write_records,
)
from codec.cli.main import main
from codec.decode.example_proto import BytesList, Example, Feature
from codec.index.cache import write_index
from codec.ops.export import image_file_name
from codec.storage import temp_files, writer
from codec.storage.temp_files import is_temp_name, sweep_stale_temps, temp_name
from codec.storage.writer import (
    atomic_write_bytes,
    current_umask,
    new_file_mode,
    resolve_output_compression,
    with_compression_suffix,
)
from tests.builders import fixture_path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = fixture_path("structured.tfrecord")


def records_of(path) -> list[bytes]:
    with TFRecordFile(path, use_cache=False) as f:
        f.verify()
        assert f.problems == []
        return list(f)


def temps(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.endswith(".tmp"))


@pytest.fixture
def umask():
    """Set the process umask for one test (restored after)."""
    saved = os.umask(0o022)
    os.umask(saved)

    def set_(value: int) -> int:
        os.umask(value)
        return 0o666 & ~value

    yield set_
    os.umask(saved)


# -- modes ---------------------------------------------------------------------
def _write_every_way(out: Path) -> dict[str, list[Path]]:
    """Write a file by each writer path into ``out``; the files each wrote."""
    written: dict[str, list[Path]] = {}
    write_records(out / "w.tfrecord", [b"a", b"b"])
    written["write_records"] = [out / "w.tfrecord"]
    atomic_write_bytes(out / "blob.bin", b"blob")
    written["atomic_write_bytes"] = [out / "blob.bin"]
    with TFRecordFile(fixture_path("flowers_jpeg.tfrecord"), use_cache=False) as f:
        f.build_index()
        for fmt, name in (("tfrecord", "e.tfrecord"), ("jsonl", "e.jsonl"), ("csv", "e.csv")):
            export(f, str(out / name), fmt, [0, 1])
            written[f"export {fmt}"] = [out / name]
        export(f, str(out / "imgs"), "images", [0, 1])
        written["export images"] = sorted((out / "imgs").iterdir())
        write_index(f, str(out / "idx.tfri"))
        written["index"] = [out / "idx.tfri"]
        doc = Document(f)
        doc.delete([0])
        doc.save(out / "saved.tfrecord")
        written["document save"] = [out / "saved.tfrecord"]
    with TFRecordFile(fixture_path("truncated.tfrecord")) as f:
        repair(f, out / "fixed.tfrecord")
    written["repair"] = [out / "fixed.tfrecord"]
    assert main(["export", SOURCE, "--to", str(out / "cli.tfrecord.gz")]) == 0
    assert main(["repair", SOURCE, "-o", str(out / "cli-fixed.tfrecord")]) == 0
    written["cli"] = [out / "cli.tfrecord.gz", out / "cli-fixed.tfrecord"]
    return written


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
def test_new_files_get_the_mode_open_would_give(tmp_path, umask, mask, capsys):
    expected = umask(mask)
    with open(tmp_path / "by-open", "w"):
        pass
    assert stat.S_IMODE(os.stat(tmp_path / "by-open").st_mode) == expected
    assert current_umask() == mask and new_file_mode() == expected
    for how, files in _write_every_way(tmp_path).items():
        assert files, how
        for path in files:
            assert stat.S_IMODE(os.stat(path).st_mode) == expected, (how, path.name)
    assert temps(tmp_path) == []


def test_umask_is_read_without_proc_too(monkeypatch, umask):
    umask(0o027)

    def no_proc(*_args, **_kwargs):
        raise OSError("no /proc here")

    monkeypatch.setattr(writer, "open", no_proc, raising=False)
    assert current_umask() == 0o027
    assert os.umask(0o027) == 0o027  # and it was left as it was


@pytest.mark.parametrize("mode", [0o600, 0o664, 0o640])
def test_overwriting_keeps_the_files_mode(tmp_path, umask, mode, capsys):
    umask(0o022)
    target = tmp_path / "data.tfrecord"
    write_records(target, [b"old"])
    os.chmod(target, mode)
    write_records(target, [b"new"])
    assert stat.S_IMODE(os.stat(target).st_mode) == mode and records_of(target) == [b"new"]
    assert main(["export", SOURCE, "--to", str(target)]) == 0
    assert stat.S_IMODE(os.stat(target).st_mode) == mode and len(records_of(target)) == 100


# -- symlinks and special files ---------------------------------------------------
def test_a_symlinks_target_is_replaced_and_the_link_stays(tmp_path, capsys):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / "data.tfrecord"
    write_records(target, [b"old"])
    os.chmod(target, 0o640)
    link = tmp_path / "link.tfrecord"
    link.symlink_to(target)
    assert main(["export", SOURCE, "--to", str(link), "--records", "0:3"]) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert records_of(target) == records_of(SOURCE)[:3]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert temps(tmp_path) == [] and temps(real_dir) == []

    with TFRecordFile(link) as f:  # saving a document over a linked source: the same
        f.build_index()
        doc = Document(f)
        doc.delete([0])
        doc.save()
    assert link.is_symlink() and records_of(target) == records_of(SOURCE)[1:3]

    dangling = tmp_path / "dangling.tfrecord"
    dangling.symlink_to(real_dir / "new.tfrecord")
    write_records(dangling, [b"x"])
    assert dangling.is_symlink() and records_of(real_dir / "new.tfrecord") == [b"x"]


def test_a_fifo_is_written_directly(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    fifo = tmp_path / "out" / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(Path(fifo).read_bytes()))
    reader.start()
    try:
        code = main(["export", SOURCE, "--to", str(fifo)])
    finally:
        reader.join(10)
    assert code == 0 and not reader.is_alive()
    assert got == [Path(SOURCE).read_bytes()]  # a plain copy of every record is the file itself
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(tmp_path / "out") == ["pipe"]


def test_dev_null_is_written_and_stays_a_device(capsys):
    assert main(["export", SOURCE, "--to", os.devnull, "--compression", "gzip"]) == 0
    assert main(["repair", SOURCE, "-o", os.devnull]) == 0
    err = capsys.readouterr().err
    assert "wrote 100 records to /dev/null" in err and "warning" not in err  # a device's name says nothing
    assert stat.S_ISCHR(os.lstat(os.devnull).st_mode)


def test_dev_stdout_redirected_to_a_file_is_written_into_that_file(tmp_path):
    out = tmp_path / "redirected.tfrecord"
    with open(out, "wb") as stdout:
        inode = os.fstat(stdout.fileno()).st_ino
        done = subprocess.run([sys.executable, "-m", "codec.cli.main", "export", SOURCE, "--to", "/dev/stdout"],
                              cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=stdout,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "tfrlens-cli: wrote 100 records to /dev/stdout\n"
    assert out.read_bytes() == Path(SOURCE).read_bytes() and os.stat(out).st_ino == inode
    assert temps(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_dev_full_is_one_line_exit_2_and_stays_a_device(capsys):
    before = os.lstat("/dev/full")
    for argv in (["export", SOURCE, "--to", "/dev/full"], ["repair", SOURCE, "-o", "/dev/full"]):
        assert main(argv) == 2
        assert capsys.readouterr().err == "tfrlens-cli: disk full while writing /dev/full\n"
    after = os.lstat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino


def test_a_socket_is_refused(tmp_path, capsys):
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        assert main(["export", SOURCE, "--to", str(path)]) == 2
        assert capsys.readouterr().err == f"tfrlens-cli: refusing to write {path}: it is a socket\n"
        assert stat.S_ISSOCK(os.lstat(path).st_mode)


@pytest.mark.parametrize("fmt", ["tfrecord", "jsonl", "csv"])
def test_export_over_its_own_input_is_refused(tmp_path, capsys, fmt):
    src = tmp_path / "src.tfrecord"
    shutil.copy(SOURCE, src)
    link = tmp_path / "alias.tfrecord"
    link.symlink_to(src)
    before = src.read_bytes()
    for out in (src, link):
        assert main(["export", str(src), "--to", str(out), "--format", fmt]) == 2
        assert capsys.readouterr().err == f"tfrlens-cli: the export must not replace its source: {out}\n"
    assert src.read_bytes() == before and temps(tmp_path) == []
    with TFRecordFile(src) as f, pytest.raises(OSError, match="must not replace its source"):
        f.build_index()
        export(Document(f), str(link), fmt)  # an edited view of the file, too


# -- compression from the name ---------------------------------------------------
def test_resolve_output_compression_and_suffixes(tmp_path):
    assert resolve_output_compression("a.tfrecord.gz", None) == (Compression.GZIP, None)
    assert resolve_output_compression("a.zz", None) == (Compression.ZLIB, None)
    assert resolve_output_compression("a.tfrecord", None) == (Compression.NONE, None)
    assert resolve_output_compression("a.tfrecord.gz", "gzip") == (Compression.GZIP, None)
    comp, warning = resolve_output_compression("trap.tfrecord.gz", Compression.NONE)
    assert comp is Compression.NONE and warning == "trap.tfrecord.gz is named like a GZIP file but is written plain " \
                                                   "(uncompressed)"
    assert with_compression_suffix("d/a.tfrecord.gz", "none") == "d/a.tfrecord"
    assert with_compression_suffix("d/a.tfrecord", "gzip") == "d/a.tfrecord.gz"
    assert with_compression_suffix("d/a.tfrecord.gz", "zlib") == "d/a.tfrecord.zlib"
    assert with_compression_suffix("d/a.zz", "zlib") == "d/a.zz"


def test_cli_export_and_repair_follow_the_name(tmp_path, capsys):
    expected = records_of(SOURCE)
    framed = b"".join(encode_record(r) for r in expected)
    assert main(["export", SOURCE, "--to", str(tmp_path / "e.tfrecord.gz")]) == 0
    assert main(["repair", SOURCE, "-o", str(tmp_path / "r.tfrecord.gz")]) == 0
    assert main(["export", SOURCE, "--to", str(tmp_path / "e.tfrecord.zz")]) == 0
    assert main(["repair", str(tmp_path / "e.tfrecord.gz"), "-o", str(tmp_path / "plain.tfrecord")]) == 0
    assert "warning" not in capsys.readouterr().err
    for name in ("e.tfrecord.gz", "r.tfrecord.gz"):
        blob = (tmp_path / name).read_bytes()
        assert blob[:2] == b"\x1f\x8b" and gzip.decompress(blob) == framed  # what TF's GZIP reader reads
        assert records_of(tmp_path / name) == expected
    assert zlib.decompress((tmp_path / "e.tfrecord.zz").read_bytes()) == framed
    assert (tmp_path / "plain.tfrecord").read_bytes() == framed


def test_cli_warns_when_the_choice_contradicts_the_name(tmp_path, capsys):
    assert main(["export", SOURCE, "--to", str(tmp_path / "trap.tfrecord.gz"), "--compression", "none"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "tfrlens-cli: warning: trap.tfrecord.gz is named like a GZIP file but is written plain " \
                     "(uncompressed)"
    assert (tmp_path / "trap.tfrecord.gz").read_bytes() == Path(SOURCE).read_bytes()  # written as asked
    assert main(["repair", SOURCE, "-o", str(tmp_path / "c.tfrecord"), "--compression", "gzip"]) == 0
    assert "warning: c.tfrecord is written GZIP-compressed but its name has no .gz/.zz suffix" in \
        capsys.readouterr().err
    assert (tmp_path / "c.tfrecord").read_bytes()[:2] == b"\x1f\x8b"


def test_cli_repair_into_a_folder_names_the_copies_for_their_compression(tmp_path, capsys):
    gz = tmp_path / "in" / "a.tfrecord.gz"
    gz.parent.mkdir()
    write_records(gz, records_of(SOURCE), "gzip")
    shutil.copy(SOURCE, tmp_path / "in" / "b.tfrecord")
    assert main(["repair", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--compression", "none"]) == 0
    assert sorted(os.listdir(tmp_path / "out")) == ["a.tfrecord", "b.tfrecord"]
    assert main(["repair", str(tmp_path / "in"), "-o", str(tmp_path / "gz"), "--compression", "gzip"]) == 0
    assert sorted(os.listdir(tmp_path / "gz")) == ["a.tfrecord.gz", "b.tfrecord.gz"]
    assert main(["repair", str(tmp_path / "in"), "-o", str(tmp_path / "as-named")]) == 0
    assert (tmp_path / "as-named" / "a.tfrecord.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert (tmp_path / "as-named" / "b.tfrecord").read_bytes() == Path(SOURCE).read_bytes()
    assert "warning" not in capsys.readouterr().err


def test_document_save_as_follows_the_name_unless_told(tmp_path):
    with TFRecordFile(SOURCE) as f:
        f.build_index()
        doc = Document(f)
        doc.save(tmp_path / "s.tfrecord.gz")
        doc.save(tmp_path / "told.tfrecord.gz", "none")
    assert (tmp_path / "s.tfrecord.gz").read_bytes()[:2] == b"\x1f\x8b"
    assert (tmp_path / "told.tfrecord.gz").read_bytes() == Path(SOURCE).read_bytes()


# -- interruptions -----------------------------------------------------------------
PACED_EXPORT = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from codec.storage import writer
real = writer.OutputFile.write
def paced(self, chunk):  # a long export: every chunk written takes a moment
    real(self, chunk)
    if not getattr(paced, "told", False):
        paced.told = True
        print("writing", flush=True)
    time.sleep(0.01)
writer.OutputFile.write = paced
from codec.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _start_paced(argv: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", PACED_EXPORT, *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "writing\n", proc.stderr.read()
    return proc


@pytest.fixture
def many_records(tmp_path) -> Path:
    path = tmp_path / "src" / "many.tfrecord"
    path.parent.mkdir()
    write_records(path, (b"%06d" % i * 10 for i in range(3000)))
    return path


@pytest.mark.parametrize("sig, code, message, existing", [
    (signal.SIGTERM, 143, "tfrlens-cli: stopped by SIGTERM\n", False),
    (signal.SIGHUP, 129, "tfrlens-cli: stopped by SIGHUP\n", True),
    (signal.SIGINT, 130, "tfrlens-cli: interrupted\n", True),
])
def test_a_signal_during_export_leaves_no_temp_and_the_target_as_it_was(tmp_path, many_records, sig, code,
                                                                         message, existing):
    out = tmp_path / "out"
    out.mkdir()
    target = out / "copy.tfrecord"
    if existing:
        write_records(target, [b"before"])
    proc = _start_paced(["export", str(many_records), "--to", str(target)])
    try:
        assert len(temps(out)) == 1 and is_temp_name(temps(out)[0])
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == code and err == message
    assert temps(out) == []
    assert (records_of(target) == [b"before"]) if existing else not target.exists()


def test_a_signal_during_repair_leaves_no_temp(tmp_path, many_records):
    out = tmp_path / "fixed.tfrecord.gz"
    proc = _start_paced(["repair", str(many_records), "-o", str(out)])
    try:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143 and err == "tfrlens-cli: stopped by SIGTERM\n"
    assert temps(tmp_path) == [] and not out.exists()


def test_after_kill_9_the_next_run_removes_the_temp(tmp_path, many_records, capsys):
    target = tmp_path / "copy.tfrecord"
    proc = _start_paced(["export", str(many_records), "--to", str(target)])
    left = temps(tmp_path)
    proc.kill()
    proc.communicate(timeout=60)
    assert len(left) == 1 and temps(tmp_path) == left  # nothing can clean up after SIGKILL
    assert main(["export", SOURCE, "--to", str(tmp_path / "other.tfrecord")]) == 0
    assert temps(tmp_path) == [] and not target.exists()


@pytest.mark.parametrize("step", ["fsync", "fchmod", "replace"])
def test_ctrl_c_while_finishing_leaves_no_temp_and_the_target_intact(tmp_path, monkeypatch, step):
    target = tmp_path / "data.tfrecord"
    write_records(target, [b"original"])
    before = target.read_bytes()
    real = getattr(os, step)

    def interrupted(*args):
        real(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, step, interrupted)
    with pytest.raises(KeyboardInterrupt):
        with TFRecordWriter(target, "gzip") as w:
            w.write(b"new")
    monkeypatch.undo()
    assert temps(tmp_path) == []
    if step == "replace":  # the rename happened: the new file is whole
        assert records_of(target) == [b"new"]
    else:
        assert target.read_bytes() == before


def test_cleanup_on_signals_removes_registered_temps(tmp_path):
    w = TFRecordWriter(tmp_path / "x.tfrecord")
    w.write(b"data")
    assert len(temps(tmp_path)) == 1
    with pytest.raises(temp_files.TerminatedBySignal) as caught:
        with temp_files.cleanup_on_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises long before
    assert caught.value.exit_code == 143
    assert temps(tmp_path) == []  # a writer not unwound by the exception: its temp went too
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    with pytest.raises(FileAccessError, match="cannot write .*x.tfrecord"):
        w.close()  # and it fails cleanly at its rename
    assert not (tmp_path / "x.tfrecord").exists() and temps(tmp_path) == []


# -- stale temporary files ----------------------------------------------------------
def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temps_of_ours_are_swept_and_nothing_else(tmp_path):
    host = temp_files._host_tag()
    other_host = "000000" if host != "000000" else "111111"
    day_old = time.time() - 2 * 86400
    names = {
        f".a.tfrecord.tfrlens-{os.getpid()}-{host}-0123abcd.tmp": (day_old, True),  # old: gone
        f".a.tfrecord.tfrlens-{_dead_pid()}-{host}-0123abce.tmp": (None, True),  # its writer is dead: gone
        f".a.tfrecord.tfrlens-{os.getppid()}-{host}-0123abcf.tmp": (None, False),  # writer alive: kept
        f".a.tfrecord.tfrlens-{_dead_pid()}-{other_host}-0123abd0.tmp": (None, False),  # another host's: kept
        ".a.tfrecord.k3j_x9q2.tmp": (day_old, False),  # someone else's temporary name
        f"a.tfrecord.tfrlens-12-{host}-0123abcd.tmp": (day_old, False),
        f".a.tfrecord.tfrlens-12-{host}-0123abcd.tmp.keep": (day_old, False),
        f".a.tfrecord.tfrlens-12-{host}-0123ABCD.tmp": (day_old, False),
    }
    for name, (mtime, _) in names.items():
        (tmp_path / name).write_bytes(b"x" * 100)
        if mtime is not None:
            os.utime(tmp_path / name, (mtime, mtime))
    folder_like = tmp_path / f".b.tfrecord.tfrlens-12-{host}-0123abcd.tmp"
    folder_like.mkdir()
    os.utime(folder_like, (day_old, day_old))
    link_like = tmp_path / f".c.tfrecord.tfrlens-12-{host}-0123abcd.tmp"
    link_like.symlink_to(tmp_path / ".a.tfrecord.k3j_x9q2.tmp")
    os.utime(link_like, (day_old, day_old), follow_symlinks=False)

    write_records(tmp_path / "new.tfrecord", [b"r"])  # any write sweeps the folder it writes in
    left = set(os.listdir(tmp_path))
    for name, (_, gone) in names.items():
        assert (name not in left) == gone, name
    assert folder_like.is_dir() and link_like.is_symlink()
    assert sweep_stale_temps(tmp_path) == []


def test_temp_names_are_recognised_and_fit_any_target_name(tmp_path):
    long_target = str(tmp_path / ("é" * 127 + ".tfrecord"))  # 263 bytes: longer than a temp could be
    name = temp_name(long_target)
    assert is_temp_name(name) and len(os.fsencode(name)) < 255 and name.startswith(".é")
    write_records(long_target[:-40], [b"x"])  # 223 bytes: a legal name, the temp name is cut
    assert temps(tmp_path) == []


# -- image names ---------------------------------------------------------------------
def _png(value: int) -> bytes:
    b = io.BytesIO()
    Image.new("L", (4, 4), value).save(b, format="PNG")
    return b.getvalue()


def test_image_export_with_a_300_character_key_exports_every_record(tmp_path):
    long_key = "image/" + "k" * 294
    other_long = "image/" + "k" * 293 + "x"  # the same once cut: told apart by a hash
    records = []
    for i in range(5):
        ex = Example()
        ex.features.feature[long_key].CopyFrom(Feature(bytes_list=BytesList(value=[_png(i)])))
        ex.features.feature[other_long].CopyFrom(Feature(bytes_list=BytesList(value=[_png(100 + i)])))
        ex.features.feature["a/b"].CopyFrom(Feature(bytes_list=BytesList(value=[_png(200 + i)])))
        ex.features.feature["a_b"].CopyFrom(Feature(bytes_list=BytesList(value=[_png(250 - i)])))
        records.append(ex.SerializeToString())
    src = tmp_path / "long.tfrecord"
    write_records(src, records)
    out = tmp_path / "imgs"
    with TFRecordFile(src) as f:
        f.build_index()
        report = export(f, str(out), "images")
    names = sorted(os.listdir(out))
    assert report.files == len(names) == 20 and report.records == 5
    assert all(len(os.fsencode(n)) <= 200 for n in names)
    values = set()
    for n in names:
        with Image.open(out / n) as im:
            values.add(im.getpixel((0, 0)))
    assert values == {v for i in range(5) for v in (i, 100 + i, 200 + i, 250 - i)}
    assert "000000_a_b.png" in names  # short keys keep their plain names


def test_image_file_name_rules():
    assert image_file_name(12, "image/encoded", 0, None, "jpg") == "000012_image_encoded.jpg"
    assert image_file_name(3, "frames", 2, 7, "png") == "000003_frames_step7_2.png"
    long = image_file_name(1, "é" * 300, 0, 4, "png")
    assert len(long.encode()) <= 200 and long.endswith("_step4.png") and long.startswith("000001_é")
    assert long != image_file_name(1, "é" * 299 + "e", 0, 4, "png")
