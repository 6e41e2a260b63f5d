"""The developer scripts in resources/ still run against today's codec (they import it by module path)."""
from __future__ import annotations

from resources import demo_path
from resources.make_demo import build


def _kinds_and_keys(path: str) -> list[tuple[str, tuple[str, ...]]]:
    from codec.decode.decoder import decode_record
    from codec.sources.tfrecord_file import TFRecordFile

    with TFRecordFile(path) as f:
        f.build_index()
        assert not f.problems
        records = [decode_record(f.read(i).data) for i in range(len(f))]
    return [(str(r.kind), tuple(sorted(r.message.features.feature if hasattr(r.message, "features")
                                        else r.message.feature_lists.feature_list))) for r in records]


def test_make_demo_rebuilds_a_demo_like_the_shipped_one(tmp_path):
    """Byte equality holds only with the Pillow that made the shipped file (JPEG encoders differ); the
    records' kinds and features must match whatever Pillow is installed."""
    out = tmp_path / "demo.tfrecord"
    assert build(str(out)) == 27
    assert _kinds_and_keys(str(out)) == _kinds_and_keys(demo_path())


def test_make_screenshots_imports():
    """It drives the app under a display, too slow for the suite; its imports must still resolve."""
    import importlib

    module = importlib.import_module("resources.make_screenshots")
    assert callable(module.main)
