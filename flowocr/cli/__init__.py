"""The command line: ``flowocr`` (a click group) and ``run_ocr2`` (the same as ``flowocr run``).

The CLI only parses: each command turns its options into plain values and calls a controller in
:mod:`flowocr.cli.commands`, which imports the heavy parts when it runs, so that ``flowocr --help`` is instant.
Errors are mapped to one line and an exit code here, in one place.
"""

from __future__ import annotations

import os
import sys

import click

from flowocr import __version__
from flowocr.cli.options import FRACTION, decode_options, option


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="flowocr")
def cli() -> None:
    """Read the text shown in videos, with frame-accurate times."""


@cli.command("probe")
@click.argument("video", type=click.Path(dir_okay=True, path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print the facts as one JSON object.")
@click.option("--count", is_flag=True, help="Also count frames from the content (a packet scan, no decoding).")
@click.option("--keyframes", is_flag=True, help="Also count keyframes (a packet scan, no decoding).")
def probe_cmd(video: str, as_json: bool, count: bool, keyframes: bool) -> None:
    """Print the facts of VIDEO: codec, size, rotation, pixel format, time base, rate, start, duration."""
    from flowocr.cli import commands

    commands.probe_command(video, as_json=as_json, count=count, keyframes=keyframes)


@cli.command("frames")
@click.argument("video", type=click.Path(dir_okay=True, path_type=str))
@option("fps")
@click.option("--start", type=FRACTION, default=None, help="First time to include, seconds from the first frame.")
@click.option("--end", type=FRACTION, default=None, help="Stop before this time, seconds from the first frame.")
@click.option(
    "-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=str), default=None,
    help="Also write each frame as DIR/<index>.png.",
)  # fmt: skip
@decode_options
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Write the decode report (blocks, lanes, peak buffer, gaps) as JSON to FILE.")  # fmt: skip
def frames_cmd(video: str, fps, start, end, out_dir: str | None, report_path: str | None, **decode) -> None:
    """Print one JSON line per grid frame of VIDEO: index, pts, time (s from the first frame), md5 of bgr24.

    The lines are the same whatever the sharding options."""
    from flowocr.cli import commands

    commands.frames_command(video, fps=fps, start=start, end=end, out_dir=out_dir, report_path=report_path,
                            decode=decode)  # fmt: skip


@cli.command("plan")
@click.argument("video", type=click.Path(dir_okay=True, path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Print the plan as one JSON object.")
@option("block_sec")
@option("first_block_sec")
def plan_cmd(video: str, as_json: bool, block_sec, first_block_sec) -> None:
    """Print the block plan of VIDEO: frames [lo, hi) of each block, its seek keyframe and times."""
    from flowocr.cli import commands

    commands.plan_command(video, as_json=as_json, block_sec=block_sec, first_block_sec=first_block_sec)


@cli.command("run")
@click.argument("inputs", nargs=-1, required=True, type=str, metavar="VIDEO|DIR|GLOB...")
@click.option("-o", "--out", "out_dir", type=click.Path(file_okay=False, path_type=str), default="flowocr-out",
              show_default=True, help="Folder for the outputs DIR/<stem>.<ext>.")  # fmt: skip
@option("fps")
@option("area")
@click.option("--whole-area", is_flag=True,
              help="OCR the whole text area every time, not only the bands of it that hold text strokes.")
@option("lang")
@option("engine")
@option("device")
@option("formats")
@decode_options
@click.option("--no-aux", is_flag=True,
              help="Run without the change detector: OCR decided by a pixel test, cue times on the sample grid.")
@option("aux_scale")
@option("aux_connect")
@click.option("--keep-overlays", is_flag=True,
              help="Write overlays (a logo, a watermark, a permanent title: text that stays in one place while other "
              "text comes and goes) as cues too; by default they are only in the JSONL and the report.")
@click.option("--exact-boundaries", is_flag=True,
              help="Check each cue start and end that the change detector placed by a level step or a burst with "
              "looks at the text's box at full size, and seek it where they disagree: more boundaries on their "
              "frame, at the price of a decode from the keyframe per boundary checked (1080p: about 1.6-1.9x the "
              "run time).")
@click.option("--reader-log", is_flag=True,
              help="Write the reader's decision for every frame it was fed (read or reuse, and why: the detector's "
              "events, the pixel test's counts, the texts) to <stem>.reader.jsonl in the output folder.")
@click.option("--skip-existing", is_flag=True, help="Skip videos whose report in the output folder says complete.")
@click.option("--resume", is_flag=True,
              help="Continue stopped or killed runs from their checkpoint (<stem>.resume.json); videos whose report "
              "says complete are skipped.")  # fmt: skip
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where videos are read: here, or on Ray (one task per video; extra flowocr[ray]).")
@click.option("--ray-address", default=None, help="Ray cluster to use (e.g. ray://head:10001); default: a local "
              "Ray instance started and stopped for this run.")
@click.option("--ray-workers", type=click.IntRange(1, 1024), default=None,
              help="CPUs of the local Ray instance (default: all).")
@click.option("--split-minutes", type=FRACTION, default=None,
              help="Read each video as ranges of about M minutes in parallel tasks, stitched into the result of one "
              "reading (with --executor ray across workers).")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors and the final failure list.")
@click.option("--progress", "progress_mode", type=click.Choice(["auto", "rich", "plain", "json"]), default="auto",
              show_default=True, help="How progress is shown: auto (rich on a terminal, else plain lines), rich, "
              "plain, or json (one JSON object per line on stdout, for scripts).")  # fmt: skip
def run_cmd(inputs, out_dir, fps, area, whole_area, lang, engine, device, formats, no_aux, aux_scale, aux_connect,
            keep_overlays, exact_boundaries, reader_log, skip_existing, resume, executor, ray_address, ray_workers,
            split_minutes, quiet, progress_mode, **decode) -> None:  # fmt: skip
    """OCR videos: write subtitles (SRT, WebVTT, ASS), text, per-frame JSONL and a JSON run report.

    A folder (its video files) or several videos make a batch: a failure is listed at the end with its reason,
    the others go on, and the exit code is non-zero if any failed."""
    from flowocr.cli import commands

    commands.run_command(list(inputs), out_dir=out_dir, fps=fps, area=area, lang=lang, engine=engine, device=device,
                         formats=formats, skip_existing=skip_existing, quiet=quiet, progress=progress_mode,
                         decode=decode,
                         extra={"no_aux": no_aux, "aux_scale": aux_scale, "aux_connect": aux_connect,
                              "whole_area": whole_area, "resume": resume, "reader_log": reader_log,
                                "keep_overlays": keep_overlays, "exact_boundaries": exact_boundaries},
                         cluster={"executor": executor, "ray_address": ray_address, "ray_workers": ray_workers,
                                  "split_minutes": split_minutes})  # fmt: skip


@cli.command("langs")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per language.")
def langs_cmd(as_json: bool) -> None:
    """List the languages --lang accepts: code, name, the engine that reads it, and whether it is installed here
    (for Tesseract: tesserocr and the language's data; else the package to install)."""
    from flowocr.cli import commands

    commands.langs_command(as_json=as_json)


@cli.command("calibrate")
@click.option("--show", is_flag=True, help="Print the stored calibration of this machine; measure nothing.")
@click.option("--force", is_flag=True, help="Measure again even if the stored calibration is still valid.")
@option("device")
def calibrate_cmd(show: bool, force: bool, device: str) -> None:
    """Measure how fast this machine decodes and reads (a few seconds), and store it for `--lanes auto`.

    The result is kept in the user cache (XDG_CACHE_HOME/flowocr/calibration.json) for 7 days, per machine
    fingerprint (ffmpeg and its hwaccels, GPU, CPU, OCR engine, models and device); a run measures it by itself the
    first time. Prints the fingerprint, the ratios measured, their age and the settings they give."""
    from flowocr.cli import commands

    commands.calibrate_command(show=show, force=force, device=device)


@cli.command("aux-serve")
@click.option("--listen", default="127.0.0.1:0", show_default=True,
              help="HOST:PORT to listen on (port 0: any free port; the address is printed).")
@click.option("--once", is_flag=True, help="Serve one aux stream, then exit.")
@click.option("--until-stdin-closes", is_flag=True, help="Exit when standard input ends (flowocr's own use).")
def aux_serve_cmd(listen: str, once: bool, until_stdin_closes: bool) -> None:
    """Run the change detector on its own; `flowocr run --aux-connect HOST:PORT` sends it the aux stream."""
    from flowocr.aux.server import serve

    try:
        serve(listen, once=once, until_stdin_closes=until_stdin_closes)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--listen") from exc


def main(argv: list[str] | None = None, prog_name: str = "flowocr") -> None:
    """Entry point: run the click group, print flowocr errors as one line, exit with their code."""
    from flowocr.errors import FlowOcrError, one_line

    # numpy's OpenBLAS starts a worker per CPU that spins for ~0.1 s CPU after import; flowocr multiplies small
    # vectors only, so a command (and the detector process it starts, which inherits this) keeps one thread.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _stop_on_signals()
    try:
        cli.main(args=argv, prog_name=prog_name, standalone_mode=False)
    except click.exceptions.Abort as exc:  # click's wrapping of a KeyboardInterrupt (Ctrl-C, SIGTERM)
        _stop_children()
        _interrupted(prog_name, exc.__cause__)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except FlowOcrError as exc:
        _stop_children()
        click.echo(f"{prog_name}: error: {one_line(exc)}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt as exc:
        _stop_children()
        _interrupted(prog_name, exc)
    except BrokenPipeError:
        # The reader of our output went away (`| head`): stop quietly, like other Unix tools.
        _stop_children()
        sys.stderr.close()
        sys.exit(0)
    sys.exit(0)


def run_ocr2_main() -> None:
    """``run_ocr2 ARGS`` is ``flowocr run ARGS`` (kept for existing shell scripts)."""
    main(["run", *sys.argv[1:]], prog_name="run_ocr2")


def _stop_children() -> None:
    if "flowocr.ffmpeg" in sys.modules:
        sys.modules["flowocr.ffmpeg"].stop_all()


def _interrupted(prog_name: str, cause: BaseException | None) -> None:
    """One line and the exit code of a stop from outside: 143 for SIGTERM, 130 for Ctrl-C."""
    from flowocr.errors import Terminated

    if isinstance(cause, Terminated):
        click.echo(f"{prog_name}: terminated (SIGTERM); every child process was stopped", err=True)
        sys.exit(Terminated.exit_code)
    click.echo(f"{prog_name}: interrupted", err=True)
    sys.exit(130)


def _stop_on_signals() -> None:
    """SIGTERM (``kill``, a service manager, a CI time limit) stops a run the way Ctrl-C does: it raises
    :class:`~flowocr.errors.Terminated` in the main thread, so every ``finally`` stops the lanes, the scan and the
    detector, keeps what was written and writes the report (``complete: false``). A second SIGTERM while that
    clean-up runs is ignored, so that nothing is left behind (SIGKILL still ends the process at once). Both also
    record the stop (:func:`~flowocr.errors.request_stop`): one raised where Python drops exceptions (a callback
    of the import system) still stops the run at its next frame."""
    import signal
    import threading

    from flowocr.errors import Terminated, request_stop

    def on_sigterm(signum, frame) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        error = Terminated("stopped by SIGTERM")
        request_stop(error)
        raise error

    def on_sigint(signum, frame) -> None:
        error = KeyboardInterrupt()
        request_stop(error)
        raise error

    default_hook = sys.unraisablehook

    def quiet_stops(unraisable) -> None:
        # a stop raised where Python drops exceptions (a weakref or GC callback) is recorded by request_stop and
        # stops the run at its next frame: not printed as "Exception ignored in ... Traceback" before the one line
        if not isinstance(unraisable.exc_value, (KeyboardInterrupt, Terminated)):
            default_hook(unraisable)

    if threading.current_thread() is threading.main_thread():
        sys.unraisablehook = quiet_stops
        signal.signal(signal.SIGTERM, on_sigterm)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where the parent ignores Ctrl-C
            signal.signal(signal.SIGINT, on_sigint)
