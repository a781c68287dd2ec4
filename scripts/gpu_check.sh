#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, as one short script (issue 18): run it from the repository root of a machine
# with a GPU, in a venv made by `make deps` and then given ONNX Runtime's CUDA build:
#
#     pip uninstall -y onnxruntime onnxruntime-gpu && pip install 'onnxruntime-gpu[cuda,cudnn]'
#     bash scripts/gpu_check.sh                # outputs in $OUT if set, else in a new temporary folder
#
# It installs nothing. Steps (each under its own time limit; about 3-5 minutes in all, at most 9):
#   1. env:         nvidia-smi -L, onnxruntime's version and providers, ffmpeg's hwaccels
#   2. calibrate:   flowocr calibrate --force --device cuda (a private cache: the user's is untouched)
#   3. hw lanes:    the decode equality test with hardware lanes (tests/test_sharded.py, cuda hwaccel)
#   4. gpu:         tests/test_gpu.py (a run on CUDA writes the cues of the run on the CPU) and tests/test_device.py
#   5. bench:       scripts/bench.py run --generate subs1080p60 --device cuda (the run's timing split included)
# Every step writes <step>.txt (and the tests a JUnit XML) into the output folder, and summary.txt says which passed.
# The exit status is 0 only when every step passed. PYTHON overrides the interpreter (default: .venv/bin/python).

set -u
cd "$(dirname "$0")/.."
OUT="${OUT:-$(mktemp -d -t flowocr-gpu-check-XXXXXX)}"
mkdir -p "$OUT"
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
export XDG_CACHE_HOME="$OUT/cache"  # calibration stored here, not in the user's cache
export PYTHONUNBUFFERED=1
failed=0
: > "$OUT/summary.txt"

step() {  # step NAME SECONDS COMMAND...: run it with a time limit, its output in $OUT/NAME.txt
    local name=$1 limit=$2 started rc
    shift 2
    started=$(date +%s)
    echo "== $name: $*" | tee -a "$OUT/summary.txt"
    timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.txt" 2>&1
    rc=$?
    local line="   $name: exit $rc after $(( $(date +%s) - started )) s"
    [ "$rc" -eq 124 ] && line="$line (over its limit of $limit s)"
    echo "$line" | tee -a "$OUT/summary.txt"
    tail -n 5 "$OUT/$name.txt" | sed 's/^/   | /'
    [ "$rc" -eq 0 ] || failed=1
}

# fails without a GPU or without the CUDA provider: the GPU tests below would only be skipped
step env 30 bash -c "set -e; nvidia-smi -L; ffmpeg -hide_banner -hwaccels; '$PY' -m flowocr --version; '$PY' -c '
import onnxruntime as o
print(\"onnxruntime\", o.__version__, o.get_available_providers())
assert \"CUDAExecutionProvider\" in o.get_available_providers(), \"no CUDAExecutionProvider: install onnxruntime-gpu\"
'"
step calibrate 60 "$PY" -m flowocr calibrate --force --device cuda
step hw_lanes 100 "$PY" -m pytest -q -rs -p no:cacheprovider tests/test_sharded.py -k hw_lanes_equal_sw_lanes \
    --junitxml="$OUT/hw_lanes.xml"
step gpu 150 "$PY" -m pytest -q -rs -p no:cacheprovider tests/test_gpu.py tests/test_device.py \
    --junitxml="$OUT/gpu.xml"
step bench 210 "$PY" scripts/bench.py run --generate subs1080p60 --device cuda

echo "outputs: $OUT" | tee -a "$OUT/summary.txt"
exit "$failed"
