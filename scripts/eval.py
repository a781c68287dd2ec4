"""Score flowocr's subtitles for a video against a ground-truth SRT (DESIGN §12).

    python scripts/eval.py VIDEO GT.srt [--pred PRED.srt] [--json]

Without ``--pred`` it runs ``flowocr run VIDEO -o TMPDIR --formats srt`` (this interpreter, as a process) and
scores ``TMPDIR/<stem>.srt``. Frame times come from the video's own frame index (the packet scan), so errors
are in frames of that video. Prints a table, or the whole score as JSON with ``--json``. Exit 0 when scored;
the flowocr exit code when the run failed; 2 for unusable arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path

from flowocr.cues import Score, score_cues
from flowocr.errors import FlowOcrError
from flowocr.output import read_srt
from flowocr.probe import probe, scan_index


def frame_times(video: str) -> list[Fraction]:
    """Presentation time of every frame, seconds from the first frame, exact."""
    index = scan_index(probe(video))
    return [index.seconds(i) for i in range(len(index))]


def predict(video: Path, out_dir: Path) -> Path:
    """Run flowocr on the video into ``out_dir``; the SRT it wrote. Exits with flowocr's code when it failed."""
    argv = [sys.executable, "-m", "flowocr", "run", str(video), "-o", str(out_dir), "--formats", "srt"]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        print(f"eval: flowocr run failed on {video}: {tail[0]}", file=sys.stderr)
        raise SystemExit(done.returncode)
    srt = out_dir / f"{video.stem}.srt"
    if not srt.is_file():
        print(f"eval: flowocr run wrote no {srt.name} in {out_dir}", file=sys.stderr)
        raise SystemExit(1)
    return srt


def table(score: Score, video: str) -> str:
    def errors(values: tuple[int, ...]) -> str:
        return " ".join(f"{v:+d}" for v in values) or "-"

    rows = [
        ("video", video),
        ("truth cues", str(score.truth_cues)),
        ("predicted cues", str(score.pred_cues)),
        ("exact lines", f"{score.exact:.1%}"),
        ("character error rate", f"{score.cer:.2%} ({score.char_errors}/{score.truth_chars})"),
        ("missed cues", str(score.missed)),
        ("phantom cues", str(score.phantom)),
        ("split pieces", str(score.split)),
        ("start error (frames)", errors(score.start_errors)),
        ("end error (frames)", errors(score.end_errors)),
        ("start within 1 frame", f"{score.start_within_1:.1%}"),
        ("end within 1 frame", f"{score.end_within_1:.1%}"),
        ("both within 1 frame", f"{score.within_1:.1%}"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("video")
    parser.add_argument("truth", metavar="GT.srt")
    parser.add_argument("--pred", metavar="PRED.srt", help="score this SRT instead of running flowocr")
    parser.add_argument("--json", action="store_true", help="print the whole score as JSON")
    args = parser.parse_args(argv)

    try:
        truth = read_srt(args.truth)
        times = frame_times(args.video)
        if args.pred:
            pred = read_srt(args.pred)
        else:
            with tempfile.TemporaryDirectory(prefix="flowocr-eval-") as tmp:
                pred = read_srt(predict(Path(args.video), Path(tmp)))
    except FlowOcrError as exc:
        print(f"eval: {exc}", file=sys.stderr)
        return exc.exit_code
    except (OSError, ValueError) as exc:
        print(f"eval: {exc}", file=sys.stderr)
        return 2

    score = score_cues(pred, truth, times)
    if args.json:
        print(json.dumps({"video": args.video, **dataclasses.asdict(score)}, indent=2, ensure_ascii=False))
    else:
        print(table(score, args.video))
    return 0


if __name__ == "__main__":
    sys.exit(main())
