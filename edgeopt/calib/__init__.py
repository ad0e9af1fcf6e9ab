"""Calibration and evaluation data: ``.npz`` keyed by input name, ``.npy``, a folder of images, or random inputs
(with a loud warning). See docs/calibration.md."""

from .base import CalibrationError, InputSpec, model_inputs, split_samples
from .images import ColorOrder, ImagePreprocessing, Layout
from .provider import DataSource
from .random_data import RANDOM_WARNING

__all__ = [
    "RANDOM_WARNING",
    "CalibrationError",
    "ColorOrder",
    "DataSource",
    "ImagePreprocessing",
    "InputSpec",
    "Layout",
    "model_inputs",
    "split_samples",
]
