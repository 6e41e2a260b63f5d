"""TensorBoard image, text and audio summaries as media: ImageRefs and AudioRefs keyed by tag, the Event's tree
named by tag with its scalar and text first, ``media --json`` and ``export --format images|audio`` on a log."""
from __future__ import annotations

import json
import os

import pytest

from codec.cli.main import main
from codec.decode.audio import decode_audio, find_audio
from codec.decode.decoder import build_tree, decode_record
from codec.decode.event_media import event_caption
from codec.decode.events import EventPayload
from codec.decode.images import find_images
from tests.event_media_logs import IMAGES, RECORDS, TEXT, media_events, wav, write_media_log

pytest.importorskip("soundfile")

CLIP = wav()


@pytest.fixture(scope="module")
def decoded():
    payload = EventPayload()
    return {name: decode_record(media_events(CLIP)[i], payload) for name, i in RECORDS.items()}


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def test_tf2_and_tf1_image_summaries_are_image_refs_keyed_by_tag(decoded):
    tf2 = find_images(decoded["tf2_images"])
    assert [(r.key, r.value_index, r.step, r.format, r.width, r.height) for r in tf2] == [
        ("samples", 0, None, "PNG", 6, 4), ("samples", 1, None, "PNG", 6, 4)]
    assert [r.data for r in tf2] == [IMAGES["red"], IMAGES["green"]]  # the size strings are no images
    [tf1] = find_images(decoded["tf1_image"])
    assert (tf1.key, tf1.width, tf1.height, tf1.data) == ("input", 5, 3, IMAGES["blue"])
    [later] = find_images(decoded["tf2_image_later"])  # no plugin named: known by its layout and bytes
    assert (later.key, later.data) == ("samples", IMAGES["grey"])
    for name in ("scalar", "tf2_text", "tf2_audio", "tf1_audio", "tf1_scalar", "tf1_text"):
        assert find_images(decoded[name]) == [], name


def test_tf2_and_tf1_audio_summaries_are_audio_refs_keyed_by_tag(decoded):
    [tf2] = find_audio(decoded["tf2_audio"])
    [tf1] = find_audio(decoded["tf1_audio"])
    assert [(r.key, r.codec, r.value_index, r.data) for r in (tf2, tf1)] == [("speech", "wav", 0, CLIP),
                                                                          ("voice", "wav", 0, CLIP)]
    audio = decode_audio(tf1)
    assert (audio.sample_rate, audio.frames, audio.channels) == (8000, 800, 1)
    # TF1's content_type ("audio/wav") and TF2's label column are not clips
    for name in ("scalar", "tf2_images", "tf1_image", "tf2_text", "tf1_scalar", "tf1_text"):
        assert find_audio(decoded[name]) == [], name


def test_an_audio_summary_whose_clip_is_empty_says_so():
    [ref] = find_audio(EventPayload().decode(media_events(b"")[RECORDS["tf2_audio"]]))
    assert (ref.key, ref.codec, ref.problem) == ("speech", "unknown", "speech: empty (0 bytes)")


def _node(tree, *names):
    for name in names:
        tree = next(child for child in tree.children if child.name == name)
    return tree


def test_the_tree_names_summary_values_by_tag_with_their_scalar_and_text_first(decoded):
    tree = build_tree(decoded["scalar"])
    assert _node(tree, "time (UTC)").values == ["2026-11-27T10:30:32.500Z"]
    assert _node(tree, "step").values == [1]
    loss = _node(tree, "summary", "loss")
    assert (loss.dtype, loss.children[0].name, loss.children[0].values) == ("scalars", "scalar", [0.5])
    assert loss.values == [0.5]  # the tag's own row shows it too
    assert (_node(tree, "summary").role, len(_node(tree, "summary").children)) == ("map", 1)
    text = _node(build_tree(decoded["tf2_text"]), "summary", "notes")
    assert (text.dtype, text.children[0].name, text.children[0].values) == ("text", "text", [TEXT])
    assert _node(build_tree(decoded["tf1_text"]), "summary", "log", "text").values == ["first", "second"]
    images = _node(build_tree(decoded["tf2_image_later"]), "summary", "samples")
    assert (images.dtype, images.children[0].name, images.children[0].values) == ("images", "images",
                                                                                  [IMAGES["grey"]])
    voice = _node(build_tree(decoded["tf1_audio"]), "summary", "voice")
    assert (voice.dtype, voice.children[0].name, voice.children[0].values) == ("audio", "clips", [CLIP])
    acc = _node(build_tree(decoded["tf1_scalar"]), "summary", "acc")
    assert acc.dtype == "simple_value" and _node(acc, "simple_value").values == [0.75]
    # paths stay the message's, so a value row still names its field
    assert _node(tree, "summary", "loss", "tag").path == ("summary", "value", 0, "tag")


def test_an_events_caption_names_its_media_tags_step_and_run(decoded):
    assert event_caption(decoded["tf2_images"].message, "train") == "samples · step 2 · train"
    assert event_caption(decoded["tf1_audio"].message, None) == "voice · step 6"
    assert event_caption(decoded["scalar"].message, "eval") == "loss · step 1 · eval"


def test_media_json_lists_the_clips_of_a_log_folder_with_their_run(capsys, tmp_path):
    write_media_log(tmp_path)
    code, out, err = run(capsys, "media", "--json", tmp_path)
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0, err
    assert [(x["index"], x["key"], x["run"], x["codec"], x["sample_rate"], x["frames"]) for x in lines] == [
        (RECORDS["tf2_audio"], "speech", "train", "wav", 8000, 800),
        (RECORDS["tf1_audio"], "voice", "train", "wav", 8000, 800)]


def test_export_images_writes_the_summaries_png_bytes_unchanged(capsys, tmp_path):
    write_media_log(tmp_path / "log")
    out = tmp_path / "images"
    code, _, err = run(capsys, "export", "--format", "images", "--to", out, tmp_path / "log")
    assert code == 0, err
    written = {name: (out / name).read_bytes() for name in sorted(os.listdir(out))}
    assert written == {"000002_samples.png": IMAGES["red"], "000002_samples_1.png": IMAGES["green"],
                       "000003_input.png": IMAGES["blue"], "000008_samples.png": IMAGES["grey"]}


def test_export_audio_writes_the_summaries_wav_bytes_unchanged(capsys, tmp_path):
    write_media_log(tmp_path / "log")
    out = tmp_path / "audio"
    code, _, err = run(capsys, "export", "--format", "audio", "--to", out, tmp_path / "log")
    assert code == 0, err
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == {"000005_speech.wav": CLIP,
                                                                             "000006_voice.wav": CLIP}


def test_a_filter_on_a_summary_tag_finds_its_events(capsys, tmp_path):
    write_media_log(tmp_path)
    code, out, _ = run(capsys, "cat", "--json", "--workers", "1", "--where", 'summary.value.tag == "samples"', tmp_path)
    assert code == 0
    assert [json.loads(line)["index"] for line in out.splitlines()] == [RECORDS["tf2_images"],
                                                                       RECORDS["tf2_image_later"]]


def test_tensorflows_own_image_and_text_summaries_are_read(capsys, tmp_path):
    """tests/fixtures/formats/logs was written by TensorFlow: tf.summary.image (two 8x8 PNGs every tenth step)
    and tf.summary.text in each run."""
    from codec.sources.tfrecord_file import TFRecordFile
    from tests.builders import FIXTURES

    logs = FIXTURES / "formats" / "logs"
    code, _, err = run(capsys, "export", "--format", "images", "--to", tmp_path / "images", logs)
    assert code == 0, err
    starts = [4, 20, 36, 54, 70, 86]  # train's events, then eval's (50 each)
    assert sorted(os.listdir(tmp_path / "images")) == sorted(
        f"{i:06d}_samples{suffix}.png" for i in starts for suffix in ("", "_1"))
    payload, texts = EventPayload(), []
    for run_name in ("train", "eval"):
        [path] = (logs / run_name).iterdir()
        with TFRecordFile(os.fspath(path)) as f:
            f.build_index()
            for i in range(len(f)):
                tree = build_tree(payload.decode(f.read(i).data))
                summary = [n for n in tree.children if n.name == "summary"]
                texts += [n.values[0] for n in (summary[0].children if summary else []) if n.dtype == "text"]
    assert texts == [f"step {step} of {name}" for name in ("train", "eval") for step in (0, 10, 20)]
