"""How much a URL's passes have fetched, and how fast (no Qt): the status bar's "120.5 MB fetched, 48.2 MB/s"."""
from __future__ import annotations

import time
from collections import deque

RATE_WINDOW = 3.0  # seconds of fetching the throughput is averaged over


class FetchMeter:
    """Throughput of a byte counter, over the last RATE_WINDOW seconds of samples (no Qt)."""

    def __init__(self, window: float = RATE_WINDOW) -> None:
        self.window = window
        self._samples: deque[tuple[float, int]] = deque()

    def reset(self, fetched: int | None = None, now: float | None = None) -> None:
        """Start again; from ``fetched`` bytes now, when given (a pass starts: its first rate is its own)."""
        self._samples.clear()
        if fetched is not None:
            self._samples.append((time.monotonic() if now is None else now, fetched))

    def sample(self, fetched: int, now: float | None = None) -> float:
        """Record the counter's value now; bytes per second since the window's oldest sample (0 at first)."""
        now = time.monotonic() if now is None else now
        samples = self._samples
        if samples and fetched < samples[-1][1]:  # a new counter (the file reopened)
            samples.clear()
        samples.append((now, fetched))
        while len(samples) > 2 and now - samples[1][0] >= self.window:
            samples.popleft()
        t0, b0 = samples[0]
        return (fetched - b0) / (now - t0) if now > t0 else 0.0
