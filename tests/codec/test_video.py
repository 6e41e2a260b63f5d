"""Video in records: what codec.decode.video finds and decodes, and `tfrlens-cli media`'s video lines."""
from __future__ import annotations

import hashlib
import io
import json
import sys

import numpy as np
import pytest
from PIL import Image

from codec.cli.main import main
from codec.decode.decoder import decode_record
from codec.decode.video import VIDEO_HINT, VideoDecodeError, find_videos, frame_png, sniff_video
from codec.storage.writer import write_records
from tests.builders import FIXTURES, example, sequence_example

av = pytest.importorskip("av")

TFDS_MEDIA = FIXTURES / "tfds_media" / "lens_media_demo" / "1.0.0"
TFDS_REFERENCE = json.loads((FIXTURES / "tfds_media" / "MANIFEST.json").read_text())[
    "tfds_media/lens_media_demo/1.0.0"]["splits"]["train"]["records"]


def _frames(n: int, h: int = 24, w: int = 32) -> list[np.ndarray]:
    """Flat-coloured frames, each its own colour (flat areas survive lossy codecs nearly unchanged)."""
    out = []
    for i in range(n):
        pixels = np.empty((h, w, 3), np.uint8)
        pixels[:] = (40 * i + 20, 128, 200 - 30 * i)
        out.append(pixels)
    return out


def _encode(frames: list[np.ndarray], fmt: str, codec: str, rate: int) -> bytes:
    buf = io.BytesIO()
    with av.open(buf, mode="w", format=fmt) as container:
        stream = container.add_stream(codec, rate=rate)
        stream.width, stream.height, stream.pix_fmt = frames[0].shape[1], frames[0].shape[0], "yuv420p"
        for pixels in frames:
            container.mux(stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")))
        container.mux(stream.encode())
    return buf.getvalue()


def _png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG")
    return out.getvalue()


def _sha(frames: list[np.ndarray]) -> str:
    return hashlib.sha256(np.stack(frames).astype(np.uint8).tobytes()).hexdigest()


def _file(tmp_path, records: list[bytes]) -> str:
    write_records(tmp_path / "videos.tfrecord", records)
    return str(tmp_path / "videos.tfrecord")


def _media(path: str, capsys) -> tuple[int, list[dict]]:
    code = main(["media", "--json", path])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_tfds_video_frames_are_what_cat_json_decodes(capsys):
    code, lines = _media(str(TFDS_MEDIA), capsys)
    videos = [line for line in lines if line["type"] == "video"]
    assert code == 0
    assert [(v["index"], v["key"], v["codec"], v["shape"], v["frames"], v["sha256"]) for v in videos] == [
        (i, "video", "png", r["video"]["shape"], r["video"]["shape"][0], r["video"]["sha256"])
        for i, r in enumerate(TFDS_REFERENCE)]
    assert all(v["frame_rate"] is None for v in videos)  # the dataset stores no rate
    assert main(["cat", "--json", str(TFDS_MEDIA)]) == 0
    cat = [json.loads(line)["features"]["video"] for line in capsys.readouterr().out.splitlines()]
    assert [c["sha256"] for c in cat] == [v["sha256"] for v in videos]


def test_sequence_example_png_frames_with_a_frame_rate(tmp_path, capsys):
    frames = _frames(4)
    frames[2][3, 5] = (1, 2, 3)  # PNG is lossless: a single pixel must come back
    record = sequence_example({"video/frame_rate": 25.0, "label": 1},
                              {"frames": [_png(p) for p in frames], "boxes": [[1, 2]] * 4})
    [video] = find_videos(decode_record(record))
    assert (video.source, video.codec, video.frame_count(), video.frame_rate) == ("frames", "png", 4, 25.0)
    assert np.array_equal(video.frame(2), frames[2]) and np.array_equal(video.frame(0), frames[0])
    code, [line] = _media(_file(tmp_path, [record]), capsys)
    assert code == 0
    assert line == {"index": 0, "key": "frames", "type": "video", "codec": "png", "frames": 4,
                    "shape": [4, 24, 32, 3], "frame_rate": 25.0, "sha256": _sha(frames)}


def test_frame_lists_need_two_images_and_one_per_step():
    png = _png(_frames(1)[0])
    one_step = sequence_example(None, {"frames": [png]})
    two_per_step = sequence_example(None, {"frames": [[png, png], [png, png]]})
    not_images = sequence_example(None, {"frames": [b"abc", b"def"]})
    assert [find_videos(decode_record(r)) for r in (one_step, two_per_step, not_images)] == [[], [], []]
    # In an Example, a list of images is a video only under a key naming frames.
    assert find_videos(decode_record(example({"image/encoded": [png, png]}))) == []
    [video] = find_videos(decode_record(example({"clip/frames": [png, png, png], "fps": 6})))
    assert (video.key, video.frame_count(), video.frame_rate) == ("clip/frames", 3, 6.0)


@pytest.mark.parametrize(("fmt", "codec", "container"), [("mp4", "mpeg4", "mp4"), ("webm", "libvpx", "webm")])
def test_encoded_video_counts_sizes_rate_and_round_trips(tmp_path, capsys, fmt, codec, container):
    frames = _frames(5)
    data = _encode(frames, fmt, codec, rate=12)
    assert sniff_video(data) == container
    record = example({"clip/encoded": data, "clip/frame_rate": 99})  # the container's rate comes first
    [video] = find_videos(decode_record(record))
    assert (video.source, video.codec, video.frame_count(), video.frame_rate) == ("encoded", container, 5, 12.0)
    decoded = [video.frame(i) for i in (0, 1, 2, 3, 4)]
    assert all(d.shape == (24, 32, 3) and d.dtype == np.uint8 for d in decoded)
    for got, want in zip(decoded, frames):  # lossy, and YUV 4:2:0: within a few levels on flat colour
        assert np.abs(got.astype(int) - want.astype(int)).max() <= 6
    assert np.array_equal(video.frame(1), decoded[1])  # a step back decodes the same frame again
    code, [line] = _media(_file(tmp_path, [record]), capsys)
    assert code == 0
    assert (line["codec"], line["frames"], line["shape"], line["frame_rate"]) == (container, 5, [5, 24, 32, 3], 12.0)
    assert line["sha256"] == _sha(decoded)


def test_a_step_back_past_the_cache_decodes_from_the_start(monkeypatch):
    from codec.decode import video as video_module

    monkeypatch.setattr(video_module, "CACHE_FRAMES", 2)
    frames = _frames(6)
    [video] = find_videos(decode_record(example({"v": _encode(frames, "mp4", "mpeg4", 10)})))
    last = video.frame(5)
    first = video.frame(0)
    assert np.abs(first.astype(int) - frames[0].astype(int)).max() <= 6
    assert np.array_equal(video.frame(5), last)
    with pytest.raises(VideoDecodeError, match="no frame 6 in 6 frames"):
        video.frame(6)


def test_sniffing_leaves_images_and_audio_alone():
    assert sniff_video(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00") is None
    assert sniff_video(b"\x00\x00\x00\x18ftypM4A \x00\x00\x00\x00") is None
    assert sniff_video(b"RIFF\x00\x00\x00\x00WAVEfmt ") is None
    assert sniff_video(b"RIFF\x00\x00\x00\x00AVI LIST") == "avi"
    assert sniff_video(b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x88matroska") == "mkv"


def test_video_that_does_not_decode_is_a_line_with_an_error(tmp_path, capsys):
    broken = _encode(_frames(3), "mp4", "mpeg4", 10)[:40]
    code, [line] = _media(_file(tmp_path, [example({"video": broken})]), capsys)
    assert code == 1
    assert line["frames"] is None and line["sha256"] is None and line["shape"] is None
    assert "video" in line["error"] and "\n" not in line["error"]


def test_without_pyav_encoded_video_is_a_one_line_hint_and_frame_lists_still_decode(tmp_path, capsys,
                                                                                     monkeypatch):
    data = _encode(_frames(2), "mp4", "mpeg4", 10)
    png = _png(_frames(1)[0])
    monkeypatch.setitem(sys.modules, "av", None)  # as when it is not installed
    path = _file(tmp_path, [example({"video/encoded": data}), sequence_example(None, {"frames": [png, png]})])
    code, lines = _media(path, capsys)
    assert code == 1
    assert lines[0] == {"index": 0, "key": "video/encoded", "type": "video", "codec": "mp4", "frames": None,
                        "shape": None, "frame_rate": None, "sha256": None, "error": VIDEO_HINT}
    assert (lines[1]["codec"], lines[1]["frames"]) == ("png", 2)
    assert main(["media", path]) == 1
    assert f"error: {VIDEO_HINT}" in capsys.readouterr().out


def test_frame_png_keeps_the_pixels():
    for pixels in (_frames(1)[0], np.arange(12, dtype=np.uint8).reshape(3, 4, 1)):
        back = np.asarray(Image.open(io.BytesIO(frame_png(pixels))))
        assert np.array_equal(back.reshape(pixels.shape), pixels)
