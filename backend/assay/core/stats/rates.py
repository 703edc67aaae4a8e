"""What each rate on screen means, defined once; the run summary, the run dashboard and
the leaderboard all count through here, and the SPA's rates.ts says the same in words.

- success rate: of the calls sent (succeeded + failed), the share that got a reply.
  A skipped cell (cancelled, out of budget) was never sent: it is neither a success nor
  a failure, and every screen that shows the rate shows the skipped count beside it.
- pass rate: of the scores with a verdict, the share that passed, for one scorer.
- failures: cells whose call failed (sent, no usable reply); skipped cells are counted
  apart, as never sent."""

from __future__ import annotations


def sent(succeeded: int, failed: int) -> int:
    """Calls sent: the denominator of the success rate."""
    return succeeded + failed


def success_rate(succeeded: int, failed: int) -> float | None:
    """succeeded / (succeeded + failed), rounded to 6 places; None before any call ended."""
    n = sent(succeeded, failed)
    return round(succeeded / n, 6) if n else None


def pass_rate(passed: int, judged: int) -> float | None:
    """passed / scores with a verdict; None without a verdict."""
    return round(passed / judged, 6) if judged else None
