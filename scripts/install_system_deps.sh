#!/usr/bin/env bash
# Installs ffmpeg/ffprobe, a CJK font, chromium with its driver (the review page's browser tests) and the Tesseract
# language data the tests read (Russian, Korean, Hebrew) from
# Debian's packages when they are missing.
# Idempotent: does nothing (and needs no network) when everything is present.
set -euo pipefail

missing=()
command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1 || missing+=(ffmpeg)
if command -v fc-list >/dev/null 2>&1; then
    fc-list :lang=zh 2>/dev/null | grep -q . || missing+=(fonts-noto-cjk)
else
    missing+=(fontconfig fonts-noto-cjk)
fi
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
# Tesseract's data, where Debian puts it (flowocr.ocr.tesseract.TESSDATA_DIRS); tesserocr itself comes from PyPI
for lang in rus kor heb; do
    ls /usr/share/tesseract-ocr/*/tessdata/$lang.traineddata >/dev/null 2>&1 || missing+=(tesseract-ocr-$lang)
done
[ ${#missing[@]} -eq 0 ] && exit 0

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing ${missing[*]} from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then
    echo "installing ${missing[*]} with sudo apt-get" >&2
    sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "flowocr needs: ${missing[*]} — install them with your system's package manager (Debian/Ubuntu: apt-get install ${missing[*]})" >&2
    exit 1
fi
