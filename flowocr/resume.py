"""Checkpoints of a run, so that ``flowocr run --resume`` continues a run that was stopped or killed (DESIGN §6–7).

A run writes ``<stem>.resume.json`` beside its outputs at *quiet points*: a sampled frame that showed no text,
fed when the cue builder holds no open cue. Everything before such a frame is final (its cues are in the
checkpoint, its per-frame lines in the JSONL up to ``jsonl_bytes``), and everything after it depends on the past
only through a few values the checkpoint keeps:

- ``frame``: the last frame fed. A resumed run decodes from the block holding it (its keyframe on), feeds the
  change detector from this frame (the detector's left context: one frame, its receptive field) and reads the
  sampled frames after it;
- ``ref_index``: the frame whose strokes the reuse test compares with (the last frame OCR'd or found empty);
  the resumed run decodes it again;
- the cues so far, the run's counters, and where the JSONL stopped.

A cue that spans the stopping point is thus never cut: the checkpoint before it is taken before its text
appeared, and the resumed run reads it whole. With the same video and the same options, a resumed run writes
the same SRT and JSONL as one that was never stopped (tested with SIGKILL at several moments). The checkpoint
is replaced atomically (at most every ``CHECKPOINT_EVERY_S``) and deleted when the run completes.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from flowocr.cues.model import Cue

#: At most one checkpoint per this many seconds of wall time (``FLOWOCR_CHECKPOINT_SECONDS`` overrides it).
CHECKPOINT_EVERY_S = 1.0


def checkpoint_every_s() -> float:
    try:
        return max(0.0, float(os.environ.get("FLOWOCR_CHECKPOINT_SECONDS", CHECKPOINT_EVERY_S)))
    except ValueError:
        return CHECKPOINT_EVERY_S
VERSION = 1
#: Options that change what a run reads: a checkpoint made with other values is not resumed.
RESULT_OPTIONS = ("fps", "area", "whole_area", "lang", "engine", "no_aux", "aux_scale", "exact_boundaries")


@dataclass
class Checkpoint:
    video: dict[str, Any]  # path, size, mtime_ns: the same file, unchanged
    options: dict[str, Any]  # the RESULT_OPTIONS of the run
    frame: int
    ref_index: int | None
    jsonl_bytes: int | None  # None: the run writes no JSONL
    cues: list[Cue]
    stats: dict[str, Any] = field(default_factory=dict)
    aux: dict[str, Any] = field(default_factory=dict)
    version: int = VERSION

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["cues"] = [_cue_json(c) for c in self.cues]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Checkpoint:
        data = dict(data)
        data["cues"] = [_cue_from_json(c) for c in data["cues"]]
        return cls(**data)


def video_identity(path: str) -> dict[str, Any]:
    st = os.stat(path)
    return {"path": os.path.abspath(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def result_options(options: Any) -> dict[str, Any]:
    return {name: _plain(getattr(options, name)) for name in RESULT_OPTIONS}


def checkpoint_path(report_path: Path) -> Path:
    """``<stem>.resume.json`` beside the run report ``<stem>.report.json``."""
    name = report_path.name.removesuffix(".report.json")
    return report_path.with_name(name + ".resume.json")


def save(path: Path, checkpoint: Checkpoint) -> None:
    """Replace the checkpoint atomically (a kill at any moment leaves the old one or the new one); a full disk is
    :class:`~flowocr.errors.OutputError` and leaves no temp file."""
    from flowocr.output.writers import writing

    tmp = path.with_name(path.name + ".tmp")
    try:
        with writing(path):
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(checkpoint.to_json(), f, ensure_ascii=False)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def load(path: Path, *, video: str, options: Any) -> tuple[Checkpoint | None, str]:
    """The checkpoint at ``path`` if it belongs to this video and these options, else None; and why."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, "no checkpoint: starting from the beginning"
    except (OSError, ValueError) as exc:
        return None, f"the checkpoint {path} cannot be read ({exc}): starting from the beginning"
    try:
        checkpoint = Checkpoint.from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        return None, f"the checkpoint {path} is not one of this version ({exc}): starting from the beginning"
    if checkpoint.version != VERSION:
        return None, f"the checkpoint {path} is of another version: starting from the beginning"
    if checkpoint.video != video_identity(video):
        return None, f"{video} changed since the checkpoint was written: starting from the beginning"
    if checkpoint.options != result_options(options):
        changed = sorted(k for k in RESULT_OPTIONS if checkpoint.options.get(k) != result_options(options)[k])
        return None, f"options differ from the stopped run's ({', '.join(changed)}): starting from the beginning"
    return checkpoint, f"resuming after frame {checkpoint.frame} ({len(checkpoint.cues)} cues already found)"


def remove(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".tmp")):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Fraction) else value


def _fraction(text: str) -> Fraction:
    return Fraction(text)


def _cue_json(cue: Cue) -> dict[str, Any]:
    data = asdict(cue)
    data["start"], data["end"] = str(cue.start), str(cue.end)
    data["box"] = list(cue.box)
    return data


def _cue_from_json(data: dict[str, Any]) -> Cue:
    data = dict(data)
    data["start"], data["end"] = _fraction(data["start"]), _fraction(data["end"])
    data["box"] = tuple(data["box"])
    return Cue(**data)
