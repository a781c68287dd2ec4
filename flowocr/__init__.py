"""flowocr: read the text shown in videos, with frame-accurate times.

Importing the package is cheap: nothing heavy (numpy, OpenCV, ONNX Runtime, models) loads until it is used.
"""

__version__ = "0.1.0"
