"""One table of the options shared by several commands: default, type, bounds and help, in one place.

Commands take their shared options from here (``@option("fps")``), so an option's default and help can
never differ between commands, and the README documents this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import click


class FractionType(click.ParamType):
    """A positive or zero rational given as ``2``, ``0.5`` or ``30000/1001`` (kept exact)."""

    name = "number"

    def convert(self, value: Any, param, ctx) -> Fraction:
        if isinstance(value, Fraction):
            return value
        try:
            result = Fraction(str(value).strip())
        except (ValueError, ZeroDivisionError):
            self.fail(f"{value!r} is not a number (examples: 2, 0.5, 30000/1001)", param, ctx)
        if result < 0:
            self.fail(f"{value} must not be negative", param, ctx)
        return result


FRACTION = FractionType()


@dataclass(frozen=True)
class OptionSpec:
    flags: tuple[str, ...]
    default: Any
    type: Any
    help: str
    minimum: Any = None


OPTIONS: dict[str, OptionSpec] = {
    "fps": OptionSpec(
        ("--fps",),
        Fraction(2),
        FRACTION,
        "Samples per second of the time grid (exact rational, e.g. 2 or 30000/1001).",
        minimum=Fraction(1, 3600),
    ),
}


def option(name: str):
    """The click option for ``OPTIONS[name]``, with its bounds checked by a callback."""
    spec = OPTIONS[name]

    def check(ctx, param, value):
        if value is not None and spec.minimum is not None and value < spec.minimum:
            raise click.BadParameter(f"must be at least {spec.minimum}")
        return value

    return click.option(
        *spec.flags, name, type=spec.type, default=spec.default, show_default=str(spec.default),
        help=spec.help, callback=check,
    )  # fmt: skip
