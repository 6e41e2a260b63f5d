"""The inferred feature spec on a process pool (:mod:`codec.parallel.pool`) or on Beam: the tasks
:func:`codec.stats.pool.plan_stats` plans, each part's :class:`~codec.stats.schema.FileSchema` folded
together with ``merge``.

``merge`` is exact, so the spec is the one a single process infers, byte for
byte. A ``--where`` filter runs in the workers, on each record's number in the
whole set, as it does for ``stats``.
"""
from __future__ import annotations

from codec.stats.pool import StatsRunner, StatsTask

TYPE_CHECKING = False
if TYPE_CHECKING:
    from codec.stats.schema import FileSchema

__all__ = ["SchemaRunner", "pool_schema"]


class SchemaRunner(StatsRunner):
    """A worker's spec inference: the payload and filter decided once (as for statistics), then one task at a time."""

    def _new_result(self):
        from codec.stats.schema import FileSchema

        return FileSchema(payload=self.payload)


def pool_schema(source, tasks: list[StatsTask], setup: dict, workers: int | None,
                run=None) -> tuple[FileSchema, bool]:
    """The spec of ``source`` from ``tasks`` on the pool (or ``run``, a stand-in for
    codec.parallel.pool.run_tasks: Beam's), and whether a worker met problems in the data.

    ``setup`` is :func:`codec.stats.pool.stats_setup`'s: the same arguments as for statistics.
    """
    from codec.stats.pool import pool_merge
    from codec.stats.schema import FileSchema

    result = FileSchema(payload=source.payload)
    return result, pool_merge(source, result, SchemaRunner, tasks, setup, workers, run)
