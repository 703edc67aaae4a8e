"""Money: integer micro-dollars, prices in micro-dollars per million tokens.

Costs are rounded UP (never understated). A model without a price has an unknown cost
(None): flagged as unpriced, never silently free.
"""

from __future__ import annotations

from dataclasses import dataclass

MTOK = 1_000_000


def ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def is_priced(price_in: int | None, price_out: int | None) -> bool:
    return price_in is not None and price_out is not None


def cost_micros(tokens_in: int | None, tokens_out: int | None, price_in: int | None,
                price_out: int | None) -> int | None:
    """The cost of one call; None when the model is unpriced. Unknown token counts count 0
    (the caller counts them with `tokens` first when it can)."""
    if price_in is None or price_out is None:
        return None
    if min(tokens_in or 0, tokens_out or 0, price_in, price_out) < 0:
        raise ValueError("token counts and prices cannot be negative")
    return ceil_div((tokens_in or 0) * price_in + (tokens_out or 0) * price_out, MTOK)


@dataclass(frozen=True)
class Price:
    input_per_mtok: int | None
    output_per_mtok: int | None

    @property
    def priced(self) -> bool:
        return is_priced(self.input_per_mtok, self.output_per_mtok)

    def cost(self, tokens_in: int | None, tokens_out: int | None) -> int | None:
        return cost_micros(tokens_in, tokens_out, self.input_per_mtok, self.output_per_mtok)


def dollars(micros: int | None) -> str:
    """`$1.234567`, or `unpriced`."""
    if micros is None:
        return "unpriced"
    sign = "-" if micros < 0 else ""
    whole, frac = divmod(abs(micros), MTOK)
    return f"{sign}${whole}.{frac:06d}"
