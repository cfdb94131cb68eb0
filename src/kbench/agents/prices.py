"""Prices of model tokens, for the cost of a run; a table the user extends.

A cost is only as good as its price, and prices change: every turn stores its
token counts (the facts) and the cost computed from the price in force, and
the manifest records the price used, so a cost can be recomputed later. A
model the table does not know has an unknown cost (None), never a guessed one.

Keys are ``provider/model`` or a bare ``model``; a key also matches a dated or
suffixed name (``gpt-4o`` matches ``gpt-4o-2024-08-06``), the longest key
winning. A user's file (``--prices FILE``, TOML or JSON) adds or replaces
entries::

    ["openai/my-finetune"]
    input_per_mtok = 3.0     # USD per million input tokens
    output_per_mtok = 12.0   # USD per million output tokens
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping

# As the vendors listed them (USD per million tokens, standard tier, no caching or batch discount).
PRICES_AS_OF = "2025-06"
BUILTIN: dict[str, tuple[float, float]] = {
    "openai/gpt-4o": (2.50, 10.00),
    "openai/gpt-4o-mini": (0.15, 0.60),
    "openai/gpt-4.1": (2.00, 8.00),
    "openai/gpt-4.1-mini": (0.40, 1.60),
    "openai/gpt-4.1-nano": (0.10, 0.40),
    "openai/o1": (15.00, 60.00),
    "openai/o3": (2.00, 8.00),
    "openai/o3-mini": (1.10, 4.40),
    "openai/o4-mini": (1.10, 4.40),
    "anthropic/claude-opus-4": (15.00, 75.00),
    "anthropic/claude-sonnet-4": (3.00, 15.00),
    "anthropic/claude-3-7-sonnet": (3.00, 15.00),
    "anthropic/claude-3-5-sonnet": (3.00, 15.00),
    "anthropic/claude-3-5-haiku": (0.80, 4.00),
}


class PriceError(Exception):
    """A price file that cannot be read or holds something that is not a price."""


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float
    key: str = ""  # the table entry that matched
    source: str = f"builtin ({PRICES_AS_OF})"

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """USD for one request; None when a token count is unknown."""
        if input_tokens is None or output_tokens is None:
            return None
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1e6

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def builtin_table() -> dict[str, Price]:
    return {key: Price(i, o, key) for key, (i, o) in BUILTIN.items()}


def load_prices(path: str | Path, table: Mapping[str, Price] | None = None) -> dict[str, Price]:
    """``table`` (the built-in one by default) with the entries of a TOML or JSON file."""
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
        data = tomllib.loads(raw) if path.suffix.lower() == ".toml" else json.loads(raw)
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError and TOMLDecodeError are ValueErrors
        raise PriceError(f"price file {path}: cannot be read ({exc})") from exc
    if not isinstance(data, dict):
        raise PriceError(f"price file {path}: expected a table of models")
    merged = dict(builtin_table() if table is None else table)
    for key, entry in data.items():
        try:
            price = Price(float(entry["input_per_mtok"]), float(entry["output_per_mtok"]), key, str(path))
        except (TypeError, KeyError, ValueError) as exc:
            raise PriceError(
                f"price file {path}: entry {key!r} needs numbers input_per_mtok and output_per_mtok"
            ) from exc
        if price.input_per_mtok < 0 or price.output_per_mtok < 0:
            raise PriceError(f"price file {path}: entry {key!r} has a negative price")
        merged[key] = price
    return merged


def price_for(provider: str, model: str, table: Mapping[str, Price] | None = None) -> Price | None:
    """The price of ``provider/model``: an exact key first, then the longest key the
    name extends (``gpt-4o`` for ``gpt-4o-2024-08-06``); None when none fits."""
    table = builtin_table() if table is None else table
    names = (f"{provider}/{model}", model)
    for name in names:
        if name in table:
            return table[name]
    best: tuple[int, Price] | None = None
    for key, price in table.items():
        for name in names:
            if name.startswith(key + "-") and (best is None or len(key) > best[0]):
                best = (len(key), price)
    return best[1] if best else None
