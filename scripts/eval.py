"""Score flowocr's subtitles against ground truth (DESIGN §12, §13): one video, or a whole corpus by category.

    python scripts/eval.py VIDEO GT.srt [--pred PRED.srt] [--json]
    python scripts/eval.py corpus DIR [--vs naive] [--json OUT.json] [--jobs 1] [--only NAME,...]
                                      [--run-args "..."] [--keep DIR] [--one-lang]

**One video.** Without ``--pred`` it runs ``flowocr run VIDEO -o TMPDIR --formats srt`` (this interpreter, as a
process) and scores ``TMPDIR/<stem>.srt``. Frame times come from the video's own frame index (the packet scan), so
errors are in frames of that video. Prints a table, or the whole score as JSON with ``--json``. Exit 0 when
scored; the flowocr exit code when the run failed; 2 for unusable arguments.

**A corpus** (a folder made by ``scripts/make_corpus.py``: ``corpus.json`` listing the videos, and per video NAME
its file, ``NAME.srt`` (the subtitle truth) and ``NAME.json`` (categories, cue attributes, overlays)). For each
video, in one pass: ffmpeg's own decode of the file is timed (``ffmpeg -threads 0 -i F -map 0:v:0 -f null -``,
wall), then ``flowocr run VIDEO -o TMP --formats srt,json,jsonl -q`` (plus ``--lang`` of the video's lines, as its
user would give it: the JSON's ``categories.lang``, ``es`` for a Spanish video; not with ``--one-lang`` or a
``--lang`` in ``--run-args``; plus ``--run-args``) as a process, timed (wall); its report gives ``ocr.calls`` and
``complete``, its SRT the predictions. With ``--vs naive`` the naive method (``flowocr.read.naive``: OCR of every
frame at 3 fps, in this process, the engine loaded once; its result is cached per video file in
``$XDG_CACHE_HOME/flowocr/naive``, wall time included; the language's opening marks added as ``flowocr run`` adds
them) reads the same video and is scored the same way. Scoring, the overlay rule (a reading of a logo is counted as
``overlay``, not as a phantom; overlays are never missed) and every column are defined in
``flowocr/cues/corpus.py``. One line per video is printed as it is done, then the totals, the per-category table
and, with ``--vs naive``, the rows where flowocr is worse than naive. ``--json OUT.json`` writes all of it with
per-video details; ``--keep DIR`` keeps each video's outputs (SRT, JSONL, report; naive's SRT as ``NAME.naive.srt``)
in ``DIR/NAME/``. ``--jobs N`` reads N videos at once (the run/decode ratios then measure a shared machine). The
machine is calibrated first (``flowocr calibrate``, which measures only when no valid calibration is stored; skipped
with ``FLOWOCR_CALIBRATION=conservative``), so the first video's time holds no calibration. Exit 0 when every video
was read; 8 when some run failed (those count as predicting nothing); 2 for an unusable corpus or arguments. """

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from fractions import Fraction
from pathlib import Path

from flowocr.cues import Score, score_cues
from flowocr.cues.corpus import (
    MethodOutcome,
    VideoOutcome,
    category_rows,
    method_outcome,
    overlays_of,
    report_json,
    table_lines,
    totals,
    totals_lines,
    truth_cues,
    video_categories,
    video_line,
    worse_than_naive,
)
from flowocr.errors import FlowOcrError
from flowocr.output import read_srt, write_srt
from flowocr.probe import probe, scan_index

VIDEO_SUFFIXES = (".mp4", ".mkv", ".webm", ".mov", ".avi", ".ts", ".m4v")


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


# --- corpus ----------------------------------------------------------------------------------------------------


def load_meta(folder: Path, name: str) -> dict:
    """``NAME.json`` of a corpus video; {} when there is none."""
    path = folder / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def video_file(folder: Path, name: str, meta: dict) -> Path:
    """The video of ``name``: the JSON's ``video``, else the first ``NAME.<video suffix>`` in the folder."""
    if meta.get("video"):
        return folder / meta["video"]
    for suffix in VIDEO_SUFFIXES:
        if (folder / f"{name}{suffix}").is_file():
            return folder / f"{name}{suffix}"
    raise ValueError(f"{folder}: no video file for {name!r} (no {name}.json naming one, no {name}.mp4 or alike)")


def time_decode(video: Path) -> float:
    """Wall seconds of ffmpeg's own decode of the video stream (the limit bench.py measures too)."""
    argv = ["ffmpeg", "-v", "error", "-nostdin", "-threads", "0", "-i", str(video), "-map", "0:v:0", "-f", "null", "-"]
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


@dataclasses.dataclass(frozen=True)
class RunResult:
    """What one ``flowocr run`` gave: predicted cues, OCR calls, wall seconds, completeness and why not."""

    pred: list
    ocr_calls: int
    seconds: float
    complete: bool
    error: str | None


def run_flowocr(video: Path, out_dir: Path, run_args: list[str], python: str | None = None) -> RunResult:
    """``flowocr run`` on one video into ``out_dir`` as a process (of ``python``, default this interpreter), timed;
    a failed run predicts nothing."""
    argv = [python or sys.executable, "-m", "flowocr", "run", str(video), "-o", str(out_dir), "--formats",
            "srt,json,jsonl", "-q", *run_args]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    report_path = out_dir / f"{video.stem}.report.json"
    report = json.loads(report_path.read_text()) if report_path.is_file() else {}
    calls = int((report.get("ocr") or {}).get("calls") or 0)
    srt = out_dir / f"{video.stem}.srt"
    if done.returncode != 0 or not report.get("complete") or not srt.is_file():
        tail = done.stderr.strip().splitlines()[-1:] or [report.get("error") or f"exit code {done.returncode}"]
        return RunResult([], calls, seconds, False, f"exit {done.returncode}: {tail[0]}")
    return RunResult(read_srt(srt), calls, seconds, True, None)


def naive_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "flowocr" / "naive"


def cached_naive(video: Path, engine):
    """The naive method's result for ``video``, cached per file (path, size, mtime) and version of the naive
    module and the engine's module (``naive_cache_dir()``): it is deterministic, and reading a corpus at 3 fps
    takes as long as our runs."""
    import hashlib
    import pickle

    import flowocr.read.naive as naive

    stat = video.stat()
    key = hashlib.sha256(f"{video.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    key.update(Path(naive.__file__).read_bytes())
    key.update(Path(sys.modules[type(engine).__module__].__file__).read_bytes())  # the engine's own code too
    path = naive_cache_dir() / f"{video.stem}-{key.hexdigest()[:16]}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    result = naive.naive_cues(str(video), engine=engine)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(result))
    tmp.replace(path)
    return result


def given_lang(run_args: list[str]) -> str | None:
    """The ``--lang`` that ``run_args`` give (``--lang xx`` or ``--lang=xx``), None where they give none."""
    for k, a in enumerate(run_args):
        if a.startswith("--lang="):
            return a.split("=", 1)[1]
        if a == "--lang" and k + 1 < len(run_args):
            return run_args[k + 1]
    return None


def video_lang(meta: dict, run_args: list[str]) -> str | None:
    """The ``--lang`` a user of this video gives (its JSON's ``categories.lang``: ``es`` for a Spanish video), None
    when the JSON names none or ``run_args`` already give one."""
    if given_lang(run_args) is not None:
        return None
    lang = (meta.get("categories") or {}).get("lang")
    return str(lang) if lang else None


def evaluate_video(
    folder: Path, name: str, *, run_args: list[str], keep: Path | None, engine, python: str | None = None,
    own_lang: bool = True,
) -> VideoOutcome:
    """One corpus video read by flowocr (and by the naive method when ``engine`` is given), scored. With
    ``own_lang`` each reads it in the language of its lines (:func:`video_lang`), as its user would."""
    from flowocr.ocr.langs import DEFAULT_LANG, as_written

    meta = load_meta(folder, name)
    lang = video_lang(meta, run_args) if own_lang else None
    if lang:
        run_args = [*run_args, "--lang", lang]
    video = video_file(folder, name, meta)
    entries = read_srt(folder / (meta.get("srt") or f"{name}.srt"))
    index = scan_index(probe(str(video)))
    times = [index.seconds(i) for i in range(len(index))]
    truth = truth_cues(entries, times, index.duration, meta.get("cues") or ())
    overlays = overlays_of(meta)
    decode_s = time_decode(video)
    with tempfile.TemporaryDirectory(prefix="flowocr-eval-") as tmp:
        out_dir = keep / name if keep else Path(tmp)
        run = run_flowocr(video, out_dir, run_args, python)
    ours = method_outcome(run.pred, truth, times, overlays, ocr_calls=run.ocr_calls, seconds=run.seconds,
                          complete=run.complete, error=run.error)  # fmt: skip
    naive: MethodOutcome | None = None
    if engine is not None:

        result = cached_naive(video, engine)
        if keep:
            (keep / name).mkdir(parents=True, exist_ok=True)
            write_srt(result.cues, keep / name / f"{name}.naive.srt")
        # as a run writes its lines: for its language (the video's own, else --lang in run_args, else the default)
        pred = [(c.start, c.end, as_written(lang or given_lang(run_args) or DEFAULT_LANG, c.text))
                for c in result.cues]  # fmt: skip
        naive = method_outcome(pred, truth, times, overlays, ocr_calls=result.ocr_calls, seconds=result.seconds)
    return VideoOutcome(name, video_categories(meta), truth, decode_s, ours, naive)


def calibrate() -> None:
    """Calibrate this machine now (nothing when a valid calibration is stored), so no video's time holds it. Not
    with ``FLOWOCR_CALIBRATION=conservative``, where runs read no calibration (and ``calibrate`` would measure)."""
    if os.environ.get("FLOWOCR_CALIBRATION", "").strip().lower() == "conservative":
        return
    done = subprocess.run([sys.executable, "-m", "flowocr", "calibrate"], capture_output=True, text=True)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        print(f"eval: flowocr calibrate failed ({tail[0]}); runs use the conservative settings", file=sys.stderr)


def corpus_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="eval.py corpus", description="Score flowocr over a corpus folder.")
    parser.add_argument("dir", help="the corpus folder (with corpus.json)")
    parser.add_argument("--vs", choices=["naive"], help="also read every video with the naive method")
    parser.add_argument("--json", metavar="OUT.json", help="write totals, rows and per-video details here")
    parser.add_argument("--jobs", type=int, default=1, help="videos read at once (default 1)")
    parser.add_argument("--only", metavar="NAME,...", help="only these videos of the corpus")
    parser.add_argument("--run-args", default="", help='more options for flowocr run, one string ("--fps 3")')
    parser.add_argument("--keep", metavar="DIR", help="keep each video's outputs in DIR/NAME/")
    parser.add_argument("--one-lang", dest="own_lang", action="store_false",
                        help="read every video with flowocr's default --lang, not the language of its lines")
    parser.add_argument("--python", metavar="PY", help="run flowocr with this interpreter (another checkout's venv, "
                        "or a script setting PYTHONPATH): compare two versions on one corpus")  # fmt: skip
    # "--run-args --no-aux": argparse would take the value for an option of ours; bind it to --run-args first.
    argv = list(argv)
    for k in range(len(argv) - 1):
        if argv[k] == "--run-args":
            argv[k : k + 2] = [f"--run-args={argv[k + 1]}"]
            break
    args = parser.parse_args(argv)
    folder = Path(args.dir)
    try:
        listing = json.loads((folder / "corpus.json").read_text(encoding="utf-8"))
        names = [str(n) for n in listing["videos"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"eval: {folder}: not a corpus folder (corpus.json with a list of videos): {exc}", file=sys.stderr)
        return 2
    if args.only:
        wanted = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            print(f"eval: --only names videos the corpus lacks: {', '.join(unknown)}", file=sys.stderr)
            return 2
        names = [n for n in names if n in wanted]
    if args.jobs < 1:
        print(f"eval: --jobs must be at least 1, got {args.jobs}", file=sys.stderr)
        return 2
    keep = Path(args.keep) if args.keep else None
    run_args = shlex.split(args.run_args)

    calibrate()
    engine = None
    if args.vs == "naive":
        from flowocr.ocr.engine import get_engine

        engine = get_engine()
    done: dict[str, VideoOutcome] = {}
    broken: dict[str, str] = {}
    lock = threading.Lock()

    def one(name: str) -> None:
        try:
            outcome = evaluate_video(folder, name, run_args=run_args, keep=keep, engine=engine, python=args.python,
                                     own_lang=args.own_lang)
        except (FlowOcrError, OSError, ValueError, subprocess.CalledProcessError) as exc:
            with lock:
                broken[name] = f"{type(exc).__name__}: {exc}"
                print(f"{name}  NOT SCORED: {broken[name]}", flush=True)
            return
        with lock:
            done[name] = outcome
            print(f"[{len(done) + len(broken)}/{len(names)}] {video_line(outcome)}", flush=True)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for future in as_completed([pool.submit(one, name) for name in names]):
            future.result()

    videos = [done[n] for n in names if n in done]
    if not videos:
        print("eval: no video was scored", file=sys.stderr)
        return 2 if not broken else 8
    rows = category_rows(videos)
    print()
    print("\n".join(totals_lines(totals(videos), videos)))
    print()
    print("\n".join(table_lines(rows)))
    if args.vs:
        worse = worse_than_naive(rows)
        print()
        print(f"rows where flowocr is worse than naive: {len(worse) or 'none'}")
        for row, columns in worse:
            print(f"  {row.label}: {', '.join(columns)}")
    if args.json:
        data = {"corpus": str(folder), "seed": listing.get("seed"), "run_args": run_args, "vs": args.vs,
                **report_json(videos), "not_scored": broken}  # fmt: skip
        Path(args.json).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    failed = broken or any(not v.ours.complete for v in videos)
    return 8 if failed else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "corpus":
        return corpus_main(argv[1:])
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="A corpus folder: eval.py corpus DIR ... (see eval.py corpus --help)",
    )
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
