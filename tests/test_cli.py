"""The command line itself: help without heavy imports, console scripts installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import run_cli

HEAVY = ("numpy", "cv2", "onnxruntime", "rapidocr")


def modules_loaded_by(*argv: str) -> set[str]:
    code = (
        "import sys\n"
        "from flowocr.cli import cli\n"
        f"try:\n    cli.main(args={list(argv)!r}, prog_name='flowocr', standalone_mode=False)\n"
        "except SystemExit:\n    pass\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.splitlines()[-1].split())


def test_help_imports_nothing_heavy():
    for argv in (["--help"], ["probe", "--help"], ["frames", "--help"]):
        loaded = modules_loaded_by(*argv)
        assert not [m for m in loaded if m.split(".")[0] in HEAVY], argv


def test_help_lists_the_commands():
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("probe", "frames"):
        assert command in result.stdout


def test_console_scripts_are_installed():
    bindir = Path(sys.executable).parent
    assert (bindir / "flowocr").exists()
    assert (bindir / "run_ocr2").exists()
    version = subprocess.run([str(bindir / "flowocr"), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and "flowocr" in version.stdout
