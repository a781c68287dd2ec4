"""One table of the options shared by several commands: default, type, bounds and help, in one place.

Commands take their shared options from here (``@option("fps")``), so an option's default and help can
never differ between commands, and the README documents this table. The decoding options that calibration
fills in default to "not given" (``--lanes auto``, None for the others): see :mod:`flowocr.calibrate.auto`.
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
    "decode_shards": OptionSpec(
        ("--decode-shards",), None, click.IntRange(1, 64),
        "Decode with N lanes of the best kind available (hw where it initialises, else sw). Default: calibrated "
        "(see --lanes).",
    ),
    "lanes": OptionSpec(
        ("--lanes",), "auto", str,
        "Explicit lanes, e.g. sw,sw,hw (a hw lane that cannot start is sw), or auto: lanes, and every decoding "
        "option not given, from this machine's calibration (flowocr calibrate; the first run measures it).",
    ),
    "hwaccel": OptionSpec(
        ("--hwaccel",), "auto", click.Choice(["auto", "cuda", "vaapi", "qsv"]),
        "Hardware decoder for hw lanes; auto tries cuda, vaapi, qsv.",
    ),
    "block_sec": OptionSpec(
        ("--block-sec",), None, FRACTION, "Block length in seconds (cut at keyframes). Default: calibrated (20 s "
        "without calibration).",
        minimum=Fraction(1, 100),
    ),
    "first_block_sec": OptionSpec(
        ("--first-block-sec",), None, FRACTION,
        "Length of the short first block, for fast first results (0: no short first block). Default: calibrated "
        "(2 s without calibration).",
    ),
    "budget_mb": OptionSpec(
        ("--budget-mb",), None, click.FloatRange(0),
        "Byte budget of decoded frames buffered ahead, in MB. Default: calibrated (256 without calibration).",
    ),
    "ahead": OptionSpec(
        ("--ahead",), None, click.IntRange(1, 256),
        "Blocks decoding or waiting at most. Default: calibrated with calibrated lanes, else one per lane.",
    ),
}

OPTIONS.update({
    "area": OptionSpec(
        ("--area",), "full", str,
        "Text area to OCR: full, bottom (lower 30%), top (upper 30%), auto (the band where text recurs), or X,Y,W,H "
        "as fractions (0,0.7,1,0.3) or pixels.",
    ),
    "lang": OptionSpec(
        ("--lang",), "ch", str,
        "Recognition language: ch (Chinese and English), en, ja, fr, de, ko, ru, ar, ... (flowocr langs lists them).",
    ),
    "engine": OptionSpec(
        ("--engine",), "auto", click.Choice(["auto", "rapidocr", "tesseract", "paddle"]),
        "OCR engine; auto: the one that reads --lang (flowocr langs).",
    ),
    "device": OptionSpec(
        ("--device",), "auto", click.Choice(["auto", "cpu", "cuda"]),
        "Where the OCR models run: cuda (an NVIDIA GPU, with onnxruntime-gpu: extra flowocr[gpu]), cpu, or auto: "
        "cuda where onnxruntime has its CUDA provider and a GPU is present, else cpu.",
    ),
    "formats": OptionSpec(
        ("--formats",), "srt,vtt,ass,txt,jsonl,json,html", str,
        "Outputs to write, comma-separated: srt, vtt, ass, txt, jsonl (per-frame results), json (run report), html "
        "(the review page <stem>.review.html).",
    ),
})

OPTIONS.update({
    "aux_scale": OptionSpec(
        ("--aux-scale",), 0.35, click.FloatRange(0.05, 1.0),
        "Scale of the aux stream sent to the change detector (at most 320 px wide).",
    ),
    "aux_connect": OptionSpec(
        ("--aux-connect",), None, str, "Use a change detector already running at HOST:PORT (flowocr aux-serve).",
    ),
})

DECODE_OPTIONS = ("decode_shards", "lanes", "hwaccel", "block_sec", "first_block_sec", "budget_mb", "ahead")


def option(name: str):
    """The click option for ``OPTIONS[name]``, with its bounds checked by a callback."""
    spec = OPTIONS[name]

    def check(ctx, param, value):
        if value is not None and spec.minimum is not None and value < spec.minimum:
            raise click.BadParameter(f"must be at least {spec.minimum}")
        return value

    show = None if spec.default is None else str(spec.default)
    return click.option(
        *spec.flags, name, type=spec.type, default=spec.default, show_default=show, help=spec.help, callback=check,
    )  # fmt: skip


def decode_options(func):
    """All decoding options of :data:`DECODE_OPTIONS`, in order."""
    for name in reversed(DECODE_OPTIONS):
        func = option(name)(func)
    return func
