"""Controllers behind the CLI commands: they do the work after click has parsed the options."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from fractions import Fraction

from flowocr.errors import UsageError


def _emit(line: str) -> None:
    sys.stdout.write(line + "\n")


def probe_command(video: str, *, as_json: bool, count: bool, keyframes: bool) -> None:
    from flowocr.probe import PacketScan, probe
    from flowocr.probe.index import build_index

    info = probe(video)
    facts = info.to_json()
    if count or keyframes:
        scan = PacketScan(info)
        packets = list(scan)
        shown = [p for p in packets if not p.discard]
        if count:
            facts["frames_from_content"] = len(shown)
            facts["truncated"] = scan.truncated
        if keyframes:
            facts["keyframes"] = sum(1 for p in shown if p.key)
        if shown and count:
            index = build_index(shown, info.time_base, info.frame_rate)
            facts["duration_from_content"] = float(index.duration)
    if as_json:
        _emit(json.dumps(facts, ensure_ascii=False))
        return
    rows = [
        ("file", info.path),
        ("container", info.container),
        ("codec", info.codec),
        ("size", f"{info.width}x{info.height}"),
        ("rotation", f"{info.rotation}° (frames are {info.display_width}x{info.display_height})"),
        ("pixel format", info.pix_fmt),
        ("time base", facts["time_base"]),
        ("frame rate", f"{facts['frame_rate']} ({float(info.frame_rate):.3f} fps)"),
        ("start time", _seconds(info.start_time)),
        ("duration", _seconds(info.duration)),
        ("frames (header)", "unknown" if info.frames_from_header is None else str(info.frames_from_header)),
    ]
    if "frames_from_content" in facts:
        truncated = " (file is truncated)" if facts["truncated"] else ""
        rows.append(("frames (content)", f"{facts['frames_from_content']}{truncated}"))
    if "keyframes" in facts:
        rows.append(("keyframes", str(facts["keyframes"])))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        _emit(f"{key:<{width}}  {value}")


def _seconds(value: Fraction | None) -> str:
    return "unknown" if value is None else f"{float(value):.6f} s"


def _say(line: str) -> None:
    sys.stderr.write(f"flowocr: {line}\n")


def _calibrated(
    decode: dict, *, engine: str = "rapidocr", lang: str = "ch", device: str = "auto", say=_say, may_probe: bool = True
) -> dict:  # fmt: skip
    """The decoding options with those the user did not give taken from calibration (``--lanes auto``).

    Calibrates only when something is left to it; the first time on a machine that probes, said in one line.
    """
    from flowocr.calibrate import CONSERVATIVE, auto_decode_settings, fill_decode_options, needs_calibration

    if not needs_calibration(decode):
        return fill_decode_options(decode, CONSERVATIVE)  # fills nothing the user gave
    settings = auto_decode_settings(engine=engine, lang=lang, device=device, say=say, may_probe=may_probe)
    return fill_decode_options(decode, settings)


def _warnings_to_stderr(*, quiet: bool) -> None:
    """Warnings of the ``flowocr`` logger (a CUDA session that fell back to the CPU: :mod:`flowocr.ocr.device`) as
    one line each on stderr, ``flowocr: warning: ...``; none with ``--quiet``. Installed once per process."""
    import logging

    class StderrLines(logging.Handler):
        """Each record as one line on the stderr of the moment (the progress display may have replaced it)."""

        def emit(self, record: logging.LogRecord) -> None:
            sys.stderr.write(f"flowocr: warning: {' '.join(record.getMessage().split())}\n")
            sys.stderr.flush()

    log = logging.getLogger("flowocr")
    if not any(type(h).__name__ == "StderrLines" for h in log.handlers):
        log.addHandler(StderrLines())
        log.propagate = False
    log.setLevel(logging.ERROR if quiet else logging.WARNING)


def _sharded_source(video: str, *, fps: Fraction, decode: dict, aux=None, start=None, end=None):
    """Probe the video, choose its lanes, and build the sharded source (notes go to stderr once)."""
    from flowocr.decode.hwaccel import resolve_lanes
    from flowocr.decode.sharded import ShardedSource, ShardOptions
    from flowocr.probe import probe

    info = probe(video)  # a bad input is reported before any calibration
    asked_for_hw = bool(decode.get("decode_shards") or (decode.get("lanes") and "hw" in decode["lanes"]))
    decode = _calibrated(decode)
    lanes, notes = resolve_lanes(
        video, lanes=decode.get("lanes"), shards=decode.get("decode_shards"), hwaccel=decode.get("hwaccel", "auto")
    )
    if asked_for_hw or decode.get("hwaccel", "auto") != "auto":
        for note in notes:
            sys.stderr.write(f"flowocr: {note}\n")
    options = ShardOptions(
        fps=fps, block_sec=decode["block_sec"], first_block_sec=decode["first_block_sec"],
        budget_mb=decode["budget_mb"], ahead=decode.get("ahead"), aux=aux, start=start, end=end,
    )  # fmt: skip
    return ShardedSource(info, lanes, options), notes


def frames_command(
    video: str, *, fps: Fraction, start: Fraction | None, end: Fraction | None, out_dir: str | None,
    report_path: str | None = None, decode: dict | None = None,
) -> None:  # fmt: skip
    if start is not None and end is not None and end <= start:
        raise UsageError(f"--end ({float(end)}) must be after --start ({float(start)})")
    source, notes = _sharded_source(video, fps=fps, decode=decode or {}, start=start, end=end)
    if out_dir:
        from flowocr.output.writers import make_output_dir

        make_output_dir(out_dir)
        import cv2
    index = source.index
    try:
        for frame in source:
            md5 = hashlib.md5(frame.image.tobytes()).hexdigest()
            record = {"index": frame.index, "pts": frame.pts, "time": float(index.seconds(frame.index)), "md5": md5}
            _emit(json.dumps(record))
            if out_dir:
                path = os.path.join(out_dir, f"{frame.index:06d}.png")
                if not cv2.imwrite(path, frame.image):
                    raise UsageError(f"{path}: cannot write the frame; check that the folder is writable")
    finally:
        source.close()
    report = source.report()
    report["hw_notes"] = notes
    gaps = report["gaps"]["material"]
    if gaps:
        sys.stderr.write(f"flowocr: note: {gaps} grid frames are absent from the source itself; they were skipped\n")
    if report["plan_error"]:
        sys.stderr.write(f"flowocr: note: the packet scan failed part way ({report['plan_error']}); it was run "
                         "again and every frame checked\n")  # fmt: skip
    if report_path:
        from flowocr.output.writers import writing

        with writing(report_path), open(report_path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)


def plan_command(
    video: str, *, as_json: bool, block_sec: Fraction | None, first_block_sec: Fraction | None
) -> None:  # fmt: skip
    """The block plan; block lengths not given come from a stored calibration (never probed here: the
    conservative tier without one)."""
    from flowocr.plan.stream import plan_video
    from flowocr.probe import probe

    info = probe(video)
    if block_sec is None or first_block_sec is None:
        from flowocr.calibrate import auto_decode_settings

        settings = auto_decode_settings(say=_say, may_probe=False)
        block_sec = settings.block_sec if block_sec is None else block_sec
        first_block_sec = settings.first_block_sec if first_block_sec is None else first_block_sec
    blocks, index = plan_video(info, block_sec=block_sec, first_block_sec=first_block_sec)
    rows = []
    for b in blocks:
        end = index.end_pts if b.hi == len(index) else index.pts_of(b.hi)
        rows.append({
            "block": b.number, "lo": b.lo, "hi": b.hi, "seek": b.seek, "frames": b.hi - b.lo,
            "start": float(index.seconds(b.lo)), "end": float((end - index.pts_of(0)) * index.time_base),
        })  # fmt: skip
    if as_json:
        _emit(json.dumps({"video": video, "frames": len(index), "keyframes": len(index.keyframes),
                          "block_sec": float(block_sec), "first_block_sec": float(first_block_sec),
                          "blocks": rows}))  # fmt: skip
        return
    _emit(f"{video}: {len(index)} frames, {len(index.keyframes)} keyframes, {len(rows)} blocks")
    _emit(f"{'block':>5} {'frames [lo, hi)':>18} {'seek':>7} {'start s':>9} {'end s':>9}")
    for r in rows:
        _emit(f"{r['block']:>5} {'[' + str(r['lo']) + ', ' + str(r['hi']) + ')':>18} {r['seek']:>7} "
              f"{r['start']:>9.3f} {r['end']:>9.3f}")  # fmt: skip


def run_command(
    inputs: list[str], *, out_dir: str, fps: Fraction, area: str, lang: str, engine: str, formats: str,
    skip_existing: bool, quiet: bool, decode: dict, extra: dict | None = None, progress: str = "auto",
    cluster: dict | None = None, device: str = "auto",
) -> None:  # fmt: skip
    from flowocr.batch import expand_inputs, failure_reason
    from flowocr.calibrate import CONSERVATIVE, fill_decode_options
    from flowocr.cli.progress import make_progress
    from flowocr.ocr.area import parse_area
    from flowocr.ocr.engine import resolve_engine
    from flowocr.pipeline import RunOptions, VideoRun

    parse_area(area)  # a bad --area is a usage error before any work
    engine = resolve_engine(engine, lang)  # auto -> the engine that reads --lang; a bad pair is a usage error
    _warnings_to_stderr(quiet=quiet)

    def run_options(filled: dict) -> RunOptions:
        return RunOptions(
            fps=fps, area=area, lang=lang, engine=engine, device=device, out_dir=out_dir,
            formats=tuple(f.strip() for f in formats.split(",") if f.strip()),
            lanes=filled.get("lanes"), decode_shards=filled.get("decode_shards"),
            hwaccel=filled.get("hwaccel", "auto"), block_sec=filled["block_sec"],
            first_block_sec=filled["first_block_sec"], budget_mb=filled["budget_mb"], ahead=filled.get("ahead"),
            **(extra or {}),
        )  # fmt: skip

    run_options(fill_decode_options(decode, CONSERVATIVE))  # bad options are usage errors before any work
    videos, failed = expand_inputs(inputs)
    # One plain path is not a batch: its failure is the run's own error (its exit code, its one line).
    single = len(inputs) == 1 and not os.path.isdir(inputs[0]) and not any(ch in inputs[0] for ch in "*?[")
    if (single or len(inputs) == 1 and not videos) and failed:
        # One input naming nothing to run (a missing file, a folder without videos): its one line, not a list.
        from flowocr.errors import MissingInput

        raise MissingInput(failed[0][1])
    if videos:
        from flowocr.ocr.engine import check_engine

        # missing packages or language data: one line, exit 7; --device cuda unusable here: exit 13; before any work
        check_engine(engine, lang=lang, device=device)
        _preload_engine(engine, lang, device)
    # Calibrated once per batch, and only when there is something to run.
    say = (lambda line: None) if quiet else _say
    options = run_options(_calibrated(decode, engine=engine, lang=lang, device=device, say=say) if videos else
                          fill_decode_options(decode, CONSERVATIVE))  # fmt: skip
    progress = make_progress(quiet=quiet, total=len(videos), mode=progress)
    cluster = cluster or {}
    if cluster.get("executor", "local") != "local" or cluster.get("split_minutes"):
        try:
            done = _run_distributed(videos, options, cluster, progress, failed, skip=skip_existing or options.resume)
        finally:
            progress.close()
        _review_index(videos, options, failed, progress, batch=not single)
        _batch_end(videos, failed, done)
        return
    done = 0
    detector = None  # a batch shares one change-detector process (one start instead of one per video)
    try:
        for n, video in enumerate(videos, start=1):
            if _already_complete(n, video, len(videos), options, progress, skip=skip_existing or options.resume):
                continue
            run = None
            try:
                if len(videos) > 1 and not options.no_aux and options.aux_connect is None:
                    detector = _batch_detector(detector)  # a detector that cannot start fails this video only
                run = VideoRun(video, options, listener=progress.listener(n, video),
                               detector=detector.address if detector is not None else None)  # fmt: skip
                for _ in run.cues():
                    pass
            except Exception as exc:  # noqa: BLE001 - flowocr's errors and bugs alike fail this video, not the batch
                if single:
                    raise  # one video: its own error and exit code; a bug shows its traceback (its report too)
                reason = failure_reason(video, exc)
                if run is not None and run.report.get("traceback") and "json" in options.formats:
                    reason += f" (an unexpected error: the traceback is in {options.output(video, 'json')})"
                failed.append((video, reason))
                progress.failed(video, reason)
                continue
            done += 1
            progress.finished(video, run.report)
    finally:
        if detector is not None:
            detector.stop()
        progress.close()
    _review_index(videos, options, failed, progress, batch=not single)
    _batch_end(videos, failed, done)


def _review_index(videos: list[str], options, failed: list[tuple[str, str]], progress, *, batch: bool) -> None:
    """A batch's review index (``index.html``; a folder, a glob or several paths), when it writes review pages;
    says where it is."""
    from flowocr.batch import write_review_index

    if batch and videos and "html" in options.formats:
        progress.review_index(write_review_index(videos, options, dict(failed)))


def _already_complete(n: int, video: str, total: int, options, progress, *, skip: bool) -> bool:
    """Whether ``video`` is skipped (``skip``: --skip-existing or --resume, and its report says complete); says so."""
    from flowocr.batch import report_says_complete

    if skip and report_says_complete(options.output(video, "json")):
        progress.note(f"[{n}/{total}] {video}: skipped (its report says complete)")
        return True
    return False


def _batch_detector(current):
    """The batch's change detector: ``current`` while it runs, a new one when there is none or it died (the
    failure of the run it died in is that run's own; the next run gets a fresh detector)."""
    from flowocr.aux.client import Detector

    if current is not None and current.alive:
        return current
    if current is not None:
        current.stop()
    return Detector(many=True)


def _batch_end(videos: list[str], failed: list[tuple[str, str]], done: int) -> None:
    from flowocr.errors import BatchFailed

    if failed:
        lines = [f"{len(failed)} of {len(videos) + sum(1 for f in failed if f[0] not in videos)} inputs failed:"]
        lines += [f"  {reason}" for _, reason in failed]
        sys.stderr.write("\n".join(lines) + "\n")
        raise BatchFailed(f"{len(failed)} input(s) failed; {done} completed")


def _run_distributed(videos: list[str], options, cluster: dict, progress, failed: list, *, skip: bool) -> int:
    """``--executor ray`` and/or ``--split-minutes``: tasks of :mod:`flowocr.cluster`; failures go to ``failed``
    as a local batch lists them. Returns how many videos completed."""
    from flowocr import cluster as distributed
    from flowocr.errors import FlowOcrError, one_line

    pending = [video for n, video in enumerate(videos, start=1)
               if not _already_complete(n, video, len(videos), options, progress, skip=skip)]  # fmt: skip
    if not pending:
        return 0
    executor = distributed.make_executor(cluster.get("executor", "local"), address=cluster.get("ray_address"),
                                         workers=cluster.get("ray_workers"))  # fmt: skip
    done = 0
    try:
        if not options.resume:
            distributed.clear_checkpoints(pending, options)
        minutes = cluster.get("split_minutes")
        if minutes:
            for video in pending:
                try:
                    report = distributed.run_split(video, options, minutes, executor.submit, executor.gather)
                except Exception as exc:  # noqa: BLE001 - a task's error, listed like a local failure
                    failed.append((video, _task_error(video, exc)))
                    progress.failed(video, _task_error(video, exc))
                    continue
                done += 1
                progress.finished(video, report)
            return done
        results = executor.gather([executor.submit(distributed.video_task, video, options) for video in pending])
        for result in results:
            if "error" in result:
                failed.append((result["video"], result["error"]))
                progress.failed(result["video"], result["error"])
            else:
                done += 1
                progress.finished(result["video"], result["report"])
    except FlowOcrError:
        raise
    except Exception as exc:  # noqa: BLE001 - Ray's own failures, as one line
        what = cluster.get("executor")
        raise distributed.ExecutorUnavailable(f"the {what} executor failed: {one_line(exc)}") from exc
    finally:
        executor.close()
    return done


def _task_error(video: str, exc: BaseException) -> str:
    from flowocr.batch import failure_reason

    return failure_reason(video, getattr(exc, "cause", None) or exc)  # Ray wraps a task's exception


def _preload_engine(engine: str, lang: str, device: str = "auto") -> None:
    """Start loading the OCR models while the run calibrates, probes and starts its decoders. A failure here is
    left for the run itself to raise, with its own message (the Future holding it is dropped)."""
    from flowocr.ocr.engine import get_engine
    from flowocr.pipeline import in_background

    in_background(lambda: get_engine(engine, lang=lang, device=device), name="flowocr-engine-preload")


def langs_command(*, as_json: bool) -> None:
    """``flowocr langs``: every language of :mod:`flowocr.ocr.langs`, its engine, and whether it can be read here
    (the engine's packages and, for Tesseract, its data: else the one line saying what to install)."""
    from flowocr.ocr.engine import unavailable
    from flowocr.ocr.langs import LANGUAGES

    rows = []
    for lang in LANGUAGES.values():
        why = unavailable(lang.engine, lang=lang.code)
        rows.append({"code": lang.code, "name": lang.name, "engine": lang.engine, "installed": why is None,
                     "package": lang.package, "rtl": lang.rtl, "missing": why})  # fmt: skip
    if as_json:
        for row in rows:
            _emit(json.dumps(row, ensure_ascii=False))
        return
    name_w = max(len(r["name"]) for r in rows)
    _emit(f"{'code':<5} {'name':<{name_w}} {'engine':<10} installed")
    for r in rows:
        state = "yes" if r["installed"] else "no: " + (
            f"apt-get install {r['package']}" if r["package"] and "apt-get" in r["missing"] else r["missing"]
        )
        _emit(f"{r['code']:<5} {r['name']:<{name_w}} {r['engine']:<10} {state}")


def calibrate_command(*, show: bool, force: bool, device: str = "auto") -> None:
    """``flowocr calibrate``: measure this machine unless a valid profile is stored (``force``: measure anyway),
    then print the profile and the settings it gives. ``show``: print what is stored, measure nothing.

    Exit 0 when a profile is shown or measured, and for ``--show`` without one (it says so and names the
    conservative settings that apply); :class:`CalibrationFailed` (exit 10) when the probe fails. ``device``: where
    the probe's OCR runs (a CUDA calibration is another entry than a CPU one); ``cuda`` unusable here: exit 13.
    """
    import time

    from flowocr.calibrate import Store, load_or_calibrate
    from flowocr.calibrate.machine import machine_fingerprint, measure
    from flowocr.errors import CalibrationFailed

    if show and force:
        raise UsageError("give either --show or --force, not both")
    from flowocr.ocr.device import resolve_device

    resolve_device(device)  # --device cuda unusable here: its one line, exit 13
    _warnings_to_stderr(quiet=False)
    store = Store()
    fingerprint = machine_fingerprint(device=device)

    def probe():
        return measure(device=device)

    if show:
        for line in calibration_lines(fingerprint, store.entry(fingerprint), now=time.time(), path=store.path):
            _emit(line)
        return
    outcome = load_or_calibrate(fingerprint=fingerprint, probe=probe, store=store, say=_say, may_probe=False)
    if outcome.source != "cached" or force:
        # The automatic back-off after a failure is for runs: asking for a calibration measures now.
        outcome = load_or_calibrate(fingerprint=fingerprint, probe=probe, store=store, say=_say, force=True)
    for note in outcome.notes:
        _say(note)
    entry = store.entry(outcome.fingerprint)
    for line in calibration_lines(outcome.fingerprint, entry, now=time.time(), path=store.path):
        _emit(line)
    if outcome.failure is not None:
        fallback = "the stored profile" if outcome.source == "cached" else "the conservative tier"
        raise CalibrationFailed(f"calibration failed: {outcome.failure}; runs use {fallback} until it succeeds")
    probe_s = f" (the probe took {outcome.profile.measurement.probe_s:.1f} s)" if outcome.source == "calibrated" else ""
    _emit(f"{'result':<12} {outcome.how}{probe_s}")


def calibration_lines(fingerprint, entry, *, now: float, path) -> list[str]:
    """What ``flowocr calibrate --show`` prints: the store, the fingerprint, the profile and its settings."""
    from datetime import datetime, timezone

    from flowocr.calibrate import CONSERVATIVE, MAX_AGE_S

    fp = fingerprint
    models = ", ".join(f"{name} {digest}" for name, digest in fp.models) or "-"
    lines = [
        f"{'store':<12} {path}",
        f"{'fingerprint':<12} {fp.key}",
        f"{'  ffmpeg':<12} {fp.ffmpeg}",
        f"{'  hwaccels':<12} {', '.join(fp.hwaccels) or 'none'}",
        f"{'  gpu':<12} {fp.gpu or 'none'}",
        f"{'  cpu':<12} {fp.cpu_model} ({fp.cpu_count} CPUs)",
        f"{'  engine':<12} {fp.engine}",
        f"{'  device':<12} {fp.device}",
        f"{'  models':<12} {models}",
    ]
    profile = entry.profile if entry is not None else None
    if profile is None:
        lines.append(f"{'measured':<12} never: no calibration stored for this machine (flowocr calibrate measures it)")
        settings = CONSERVATIVE
    else:
        m = profile.measurement
        when = datetime.fromtimestamp(profile.measured_at, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        age = profile.age(now)
        state = (f"valid for another {_duration(MAX_AGE_S - age)}" if profile.valid(now)
                 else "expired: the next run measures again")  # fmt: skip
        lines.append(f"{'measured':<12} {when}, age {_duration(age)} ({state})")
        hw = f"{m.hw_ratio:.3f} ({m.hwaccel})" if m.hw_ratio is not None else "none"
        lines.append(f"{'ratios':<12} sw {m.sw_ratio:.3f}, hw {hw}, ocr {m.ocr_ratio:.3f}  "
                     f"(processing s / video s; {m.clip}, {m.clip_seconds:.1f} s)")  # fmt: skip
        if m.hw_ratio is None and m.hw_note:
            lines.append(f"{'  no hw':<12} {m.hw_note}")
        settings = profile.settings() if profile.valid(now) else CONSERVATIVE
    balance = "" if settings.balance is None else f" (balance {settings.balance:.3f}: best lane at 1080p / OCR)"
    lines.append(f"{'tier':<12} {settings.tier}{balance}")
    lines.append(f"{'settings':<12} {settings.describe()}")
    if entry is not None and entry.failed_at is not None:
        lines.append(f"{'last failure':<12} {_duration(now - entry.failed_at)} ago: {entry.failure}")
    return lines


def _duration(seconds: float) -> str:
    """A short age: ``42 s``, ``12 min``, ``3.5 h``, ``6.9 days``."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 36 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
