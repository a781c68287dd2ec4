"""A screenshot of a review page (the README's ``docs/review.png``), taken in headless chromium.

    python scripts/review_screenshot.py [PAGE] [-o docs/review.png] [--size 1280x760]

Without ``PAGE`` it runs ``flowocr run fixtures/demo.mp4`` (this interpreter, as a process) into a temporary
folder and takes that run's ``demo.review.html``. The second cue is selected (``j``, ``j``), the video seeked to
it, and its text edited as a reviewer would, so the shot shows the page in use. The PNG is saved with a 256-colour
palette (the page is mostly flat colour; a full-colour shot is three times larger). Needs Debian's ``chromium``
and ``chromium-driver`` and PyPI's ``selenium``. Exit 0 when written, 2 for unusable arguments.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def demo_page(folder: Path) -> Path:
    done = subprocess.run([sys.executable, "-m", "flowocr", "run", str(ROOT / "fixtures" / "demo.mp4"), "-o",
                           str(folder), "--quiet"], capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"flowocr run failed ({done.returncode}): {done.stderr.strip()}")
    return folder / "demo.review.html"


def screenshot(page: Path, out: Path, width: int, height: int) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio",
                f"--window-size={width},{height}"):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(page.resolve().as_uri())
        body = driver.find_element("tag name", "body")
        body.send_keys("j")  # the first cue, accepted
        body.send_keys("a")  # and on to the second
        box = driver.find_element("css selector", "li.cue.current textarea")
        box.send_keys(" (checked)")
        driver.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not driver.execute_script(
            "const v = document.querySelector('video'); return v.readyState >= 2 && !v.seeking"
        ):
            time.sleep(0.05)
        time.sleep(1.0)  # the player's loading spinner fades out
        png = driver.get_screenshot_as_png()
    finally:
        driver.quit()
    from io import BytesIO

    from PIL import Image

    image = Image.open(BytesIO(png)).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", nargs="?", type=Path, help="a review page (default: one of a run of the demo)")
    parser.add_argument("-o", "--out", type=Path, default=ROOT / "docs" / "review.png")
    parser.add_argument("--size", default="1280x760", help="window size WxH (default 1280x760)")
    args = parser.parse_args()
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        parser.error(f"--size: {args.size!r} is not WxH")
    with tempfile.TemporaryDirectory(prefix="flowocr-review-") as tmp:
        page = args.page or demo_page(Path(tmp))
        screenshot(page, args.out, width, height)
    print(f"{args.out} ({args.out.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()
