"""``--runner`` and ``--beam-option`` turned into Beam's PipelineOptions, and where results land."""
from __future__ import annotations

from codec.errors import UsageError

__all__ = ["RUNNERS", "RUNNER_CLASSES", "beam_flags", "pipeline_options", "results_folder"]

# The command line's runner names; "local" is the codec's own loop, no Beam.
RUNNER_CLASSES = {
    "direct": "DirectRunner",
    "prism": "PrismRunner",
    "dataflow": "DataflowRunner",
    "flink": "FlinkRunner",
    "spark": "SparkRunner",
}
RUNNERS = ("local", *RUNNER_CLASSES)
# Runners whose workers may be other machines: their results need storage every worker can reach.
_DISTRIBUTED = ("dataflow", "flink", "spark")


def beam_flags(runner: str, beam_options: list[str] | None) -> list[str]:
    """Beam's own command-line flags: ``--runner=...`` and each ``KEY=VALUE`` as ``--KEY=VALUE``.

    A bare ``KEY`` is a flag (``save_main_session``). A ``runner`` among the
    options is refused: ``--runner`` says it.
    """
    flags = [f"--runner={RUNNER_CLASSES[runner]}"]
    for option in beam_options or ():
        key, sep, value = option.partition("=")
        key = key.strip().lstrip("-")
        if not key or any(c.isspace() for c in key):
            raise UsageError(f"bad --beam-option {option!r}: expected KEY=VALUE, e.g. project=my-project")
        if key.replace("-", "_") == "runner":
            raise UsageError("give the runner with --runner, not --beam-option runner=...")
        flags.append(f"--{key}={value}" if sep else f"--{key}")
    return flags


def pipeline_options(runner: str, beam_options: list[str] | None):
    """Beam's PipelineOptions for ``runner`` and the user's ``--beam-option`` values."""
    from apache_beam.options.pipeline_options import PipelineOptions

    return PipelineOptions(beam_flags(runner, beam_options))


def results_folder(runner: str, options) -> tuple[str, bool]:
    """Where the workers write their per-shard results for this process to read, and whether it
    is a local temporary folder to remove afterwards.

    Local runners use a temporary folder; a distributed runner uses its
    ``temp_location`` (Dataflow requires one anyway), which every worker reaches.
    """
    import uuid

    from apache_beam.options.pipeline_options import GoogleCloudOptions

    temp = options.view_as(GoogleCloudOptions).temp_location
    if temp:
        return temp.rstrip("/") + f"/tfrlens-{uuid.uuid4().hex}", False
    if runner in _DISTRIBUTED:
        raise UsageError(f"--runner {runner} needs storage its workers share for their results: "
                         "--beam-option temp_location=gs://BUCKET/tmp")
    import tempfile

    return tempfile.mkdtemp(prefix="tfrlens-beam-"), True

