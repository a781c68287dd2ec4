"""The tier table: measured speeds of this machine -> how to cut, decode and buffer (pure, no I/O).

Inputs (all measured by the probe, see :mod:`flowocr.calibrate.machine`), as ``ratio = processing seconds /
video seconds``:

- ``sw_ratio`` / ``hw_ratio``: one decoder lane (software / hardware) doing a lane's whole job (decode, pick
  the grid frames, convert them to BGR, make the aux stream), scaled from the probe clip to 1080p by pixel
  count (decode cost grows with pixels; 640 x 360 -> 1080p is x9). ``hw_ratio`` is None when no hwaccel
  initialises here.
- ``ocr_ratio``: the OCR engine reading *every* grid frame at the default ``--fps 2`` (seconds per frame x 2).
  The detector sees the long side at 960 px whatever the frame size, so this does not grow with resolution.

The one number that decides the tier is the **balance** ``b = best lane ratio / ocr_ratio``: how many lanes
it would take to decode as fast as OCR reads every grid frame. OCR reads far fewer than every frame (the
change detector reuses the text of unchanged frames; we assume it reads about one in ``READ_SHARE`` = 4), so
keeping OCR fed takes ``ceil(4 b)`` lanes.

    tier          balance b          lanes                block  first block  ahead       budget
    ocr-bound     b < 0.25           2                    30 s   2 s          lanes       256 MB
    balanced      0.25 <= b < 1      ceil(4 b), >= 2      20 s   2 s          lanes + 1   512 MB
    decode-bound  b >= 1             ceil(4 b), >= 2      10 s   1 s          2 x lanes   1024 MB
    conservative  (nothing valid)    sw,sw                20 s   2 s          2           256 MB

Lanes are capped by the CPUs: at most ``cpu_count // 2`` software lanes (at least 2; 1 on a one-CPU machine;
never more than 8), because the OCR runtime uses every core and each ffmpeg decodes with several threads:
more software lanes than that only take CPU from the OCR they are meant to feed.

Why each column is what it is:

- **ocr-bound** (decoding is more than 4x faster than reading every frame): OCR is the bottleneck and one lane
  keeps up; a second lane decodes the next block while the first block is read, so a block start never stalls
  the consumer. Frames decoded further ahead would only wait in memory, hence ``ahead`` = lanes and the small
  budget. Long blocks (30 s) because a fast decoder spends a larger share of a block on starting ffmpeg and
  seeking to the keyframe.
- **balanced**: more lanes as the balance grows; one block ahead beyond one per lane, so a lane that finishes
  early starts the next block instead of idling while the consumer finishes its block; a middle budget.
- **decode-bound** (one lane is slower than OCR reading every frame): decoding is the bottleneck. Lanes up to
  the cap, twice as many blocks ahead as lanes (block decode times vary; a finished lane should never wait for
  the consumer), the largest budget so that lanes do not stall on it, short blocks (10 s: start costs are
  small next to a slow decode, and short blocks spread over more lanes), and a 1 s first block for a fast first
  result.
- **hardware lanes**: when a hwaccel initialises, the first lanes are hw: two when a hw lane is at least as
  fast as a sw lane, one when it is slower (it still takes decoding off the CPUs that OCR needs). hw lanes do
  not count against the CPU cap. The balance uses the faster kind.
- **conservative**: what flowocr did before calibration (two sw lanes, 20 s blocks, 2 s first block, one block
  ahead per lane) with a modest budget; used when no valid measurement exists (not yet measured, the probe
  failed, or ``FLOWOCR_CALIBRATION=conservative``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

LaneKind = Literal["sw", "hw"]

#: One grid frame in this many is assumed to reach the OCR engine (the change detector reuses the others).
READ_SHARE = 4
#: Balance below which OCR is the bottleneck (``ocr-bound``).
OCR_BOUND_BELOW = 0.25
#: Balance from which decoding is the bottleneck (``decode-bound``).
DECODE_BOUND_FROM = 1.0
MIN_LANES = 2
MAX_SW_LANES = 8
MAX_HW_LANES = 2
#: The resolution the tiers are for: decode ratios of the probe clip are scaled to it by pixel count.
REFERENCE_PIXELS = 1920 * 1080


@dataclass(frozen=True)
class Settings:
    """How a run cuts, decodes and buffers. ``lanes`` in order (hw first); ``ahead`` is a block count.

    ``tier`` names the row of the table that chose them; ``balance`` is the number that chose the row (None
    for the conservative tier).
    """

    tier: str
    lanes: tuple[LaneKind, ...]
    block_sec: Fraction
    first_block_sec: Fraction
    ahead: int
    budget_mb: float
    balance: float | None = None

    def __post_init__(self) -> None:
        if not self.lanes or any(k not in ("sw", "hw") for k in self.lanes):
            raise ValueError(f"invalid lanes ({','.join(self.lanes) or 'none'}); supported kinds are sw, hw")
        if self.block_sec <= 0 or self.first_block_sec < 0:
            raise ValueError(f"invalid block lengths {self.block_sec}, {self.first_block_sec}")
        if self.ahead < 1 or self.budget_mb < 0:
            raise ValueError(f"invalid ahead {self.ahead} or budget {self.budget_mb}")

    @property
    def lanes_arg(self) -> str:
        """The lanes as ``--lanes`` takes them: ``"hw,sw"``."""
        return ",".join(self.lanes)

    def describe(self) -> str:
        """One line: ``lanes sw,sw  block 20 s  first block 2 s  ahead 2  budget 256 MB``."""
        return (f"lanes {self.lanes_arg}  block {_sec(self.block_sec)} s  first block {_sec(self.first_block_sec)} s"
                f"  ahead {self.ahead}  budget {self.budget_mb:g} MB")  # fmt: skip


def _sec(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


CONSERVATIVE = Settings(
    tier="conservative", lanes=("sw", "sw"), block_sec=Fraction(20), first_block_sec=Fraction(2), ahead=2,
    budget_mb=256.0,
)  # fmt: skip


def sw_lane_cap(cpu_count: int) -> int:
    """Most software lanes for ``cpu_count`` CPUs: half of them, at least 2 (1 on one CPU), at most 8."""
    if cpu_count <= 1:
        return 1
    return max(MIN_LANES, min(MAX_SW_LANES, cpu_count // 2))


def choose_settings(*, sw_ratio: float, hw_ratio: float | None, ocr_ratio: float, cpu_count: int) -> Settings:
    """The row of the tier table for these ratios (at the reference resolution) and CPU count.

    Raises ValueError for a ratio that is not positive (a probe that measured nothing).
    """
    for name, value in (("sw_ratio", sw_ratio), ("hw_ratio", hw_ratio), ("ocr_ratio", ocr_ratio)):
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{name} must be a positive number, got {value}")
    hw_lanes = 0
    if hw_ratio is not None:
        hw_lanes = MAX_HW_LANES if hw_ratio <= sw_ratio else 1
    best = min(sw_ratio, hw_ratio) if hw_ratio is not None else sw_ratio
    balance = best / ocr_ratio
    sw_cap = sw_lane_cap(cpu_count)
    wanted = math.ceil(balance * READ_SHARE)
    count = max(min(MIN_LANES, sw_cap + hw_lanes), min(wanted, sw_cap + hw_lanes))
    hw_count = min(count, hw_lanes)
    lanes: tuple[LaneKind, ...] = ("hw",) * hw_count + ("sw",) * (count - hw_count)
    if balance < OCR_BOUND_BELOW:
        return Settings("ocr-bound", lanes, Fraction(30), Fraction(2), count, 256.0, balance)
    if balance < DECODE_BOUND_FROM:
        return Settings("balanced", lanes, Fraction(20), Fraction(2), count + 1, 512.0, balance)
    return Settings("decode-bound", lanes, Fraction(10), Fraction(1), 2 * count, 1024.0, balance)


def reference_ratio(ratio: float, pixels: int) -> float:
    """A decode ratio measured on ``pixels`` pixels per frame, scaled to :data:`REFERENCE_PIXELS`."""
    if pixels <= 0:
        raise ValueError(f"pixels must be positive, got {pixels}")
    return ratio * REFERENCE_PIXELS / pixels
