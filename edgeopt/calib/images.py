"""Calibration data from a folder of images, preprocessed like the model's training data.

The preprocessing block comes from the recipe (``preprocessing:``) or the Python API: resize (shorter side),
center crop, scale, mean/std, NCHW or NHWC, RGB or BGR. Pillow does the decoding (``pip install pillow``).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from .base import CalibrationError, InputSpec

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".ppm", ".pgm")


class Layout(str, Enum):
    NCHW = "nchw"
    NHWC = "nhwc"


class ColorOrder(str, Enum):
    RGB = "rgb"
    BGR = "bgr"


class ImagePreprocessing(BaseModel):
    """How to turn an image file into a model input (the defaults suit most ImageNet-style CNNs but mean/std)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    resize_shorter_px: int | None = Field(
        default=None,
        ge=1,
        description="Resize the shorter side to this many pixels, keeping the aspect ratio, then crop. "
        "None: resize straight to the crop size.",
    )
    crop_px: tuple[int, int] | None = Field(
        default=None, description="Center crop [height, width] in pixels; None: the model input's height and width."
    )
    scale: float = Field(default=1.0 / 255.0, gt=0, description="Pixel values (0..255) are multiplied by this first.")
    mean: tuple[float, ...] = Field(default=(0.0, 0.0, 0.0), description="Per-channel mean subtracted after scaling.")
    std: tuple[float, ...] = Field(default=(1.0, 1.0, 1.0), description="Per-channel std divided by after the mean.")
    layout: Layout = Field(default=Layout.NCHW, description="Tensor layout of the model input: nchw or nhwc.")
    color: ColorOrder = Field(default=ColorOrder.RGB, description="Channel order the model expects: rgb or bgr.")

    @model_validator(mode="after")
    def _channels(self) -> ImagePreprocessing:
        if len(self.mean) not in (1, 3) or len(self.std) not in (1, 3):
            raise ValueError("mean and std take 1 or 3 values (one per channel)")
        if any(s == 0 for s in self.std):
            raise ValueError("std values must not be 0")
        return self


def image_files(folder: Path) -> list[Path]:
    """Image files directly in ``folder`` (and one level of class sub-folders), sorted for reproducibility."""
    files = [p for p in folder.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()]
    return sorted(files)


def load_images(
    folder: Path,
    spec: InputSpec,
    pp: ImagePreprocessing,
    limit: int | None,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Decode and preprocess up to ``limit`` images into one array ``[N, *input dims]``.

    Raises:
        CalibrationError: no images, Pillow missing, an unreadable image, or a size the input cannot take.
    """
    try:
        from PIL import Image
    except ImportError as exc:
        raise CalibrationError(
            "reading a folder of images needs Pillow: pip install 'edgeopt[images]' "
            "(or pass an .npz of preprocessed arrays)"
        ) from exc
    channels, height, width = _geometry(spec, pp, folder)
    files = image_files(folder)[:limit] if limit else image_files(folder)
    if not files:
        raise CalibrationError(f"{folder}: no image files ({', '.join(IMAGE_SUFFIXES)}); put calibration images there")
    out = np.empty((len(files), *_input_dims(spec, channels, height, width, pp)), dtype=spec.dtype)
    for i, path in enumerate(files):
        try:
            with Image.open(path) as img:
                pixels = _preprocess(img.convert("L" if channels == 1 else "RGB"), height, width, pp)
        except OSError as exc:
            raise CalibrationError(f"cannot read image {path} ({exc}); remove it or fix the file") from exc
        out[i] = _to_tensor(pixels, channels, pp).reshape(out.shape[1:]).astype(spec.dtype)
        if progress:
            progress(i + 1, len(files))
    return out


def _geometry(spec: InputSpec, pp: ImagePreprocessing, folder: Path) -> tuple[int, int, int]:
    if len(spec.dims) != 4:
        raise CalibrationError(
            f"{folder}: input '{spec.name}' has dims {list(spec.dims)}, not an image batch "
            "(4 dims); pass an .npz instead"
        )
    c_axis, h_axis, w_axis = (1, 2, 3) if pp.layout is Layout.NCHW else (3, 1, 2)
    channels = spec.dims[c_axis]
    if not isinstance(channels, int) or channels not in (1, 3):
        raise CalibrationError(
            f"{folder}: input '{spec.name}' dims {list(spec.dims)} have {channels} channels on "
            f"the {pp.layout.value} channel axis; set preprocessing.layout or pass an .npz"
        )
    if pp.crop_px is not None:
        return channels, pp.crop_px[0], pp.crop_px[1]
    h, w = spec.dims[h_axis], spec.dims[w_axis]
    if not (isinstance(h, int) and h > 0 and isinstance(w, int) and w > 0):
        raise CalibrationError(
            f"input '{spec.name}' has dynamic height/width {list(spec.dims)}: set "
            "preprocessing.crop_px [height, width] in the recipe"
        )
    return channels, h, w


def _input_dims(spec: InputSpec, c: int, h: int, w: int, pp: ImagePreprocessing) -> tuple[int, ...]:
    return (1, c, h, w) if pp.layout is Layout.NCHW else (1, h, w, c)


def _preprocess(img: Any, height: int, width: int, pp: ImagePreprocessing) -> np.ndarray:
    from PIL import Image

    if pp.resize_shorter_px:
        factor = pp.resize_shorter_px / min(img.size)
        img = img.resize(
            (max(width, round(img.size[0] * factor)), max(height, round(img.size[1] * factor))),
            Image.Resampling.BILINEAR,
        )
        left, top = (img.size[0] - width) // 2, (img.size[1] - height) // 2
        img = img.crop((left, top, left + width, top + height))
    else:
        img = img.resize((width, height), Image.Resampling.BILINEAR)
    return np.asarray(img, dtype=np.float32)


def _to_tensor(pixels: np.ndarray, channels: int, pp: ImagePreprocessing) -> np.ndarray:
    x = pixels.reshape(pixels.shape[0], pixels.shape[1], channels) * pp.scale
    if channels == 3 and pp.color is ColorOrder.BGR:
        x = x[:, :, ::-1]
    mean = np.asarray(pp.mean[:channels], dtype=np.float32)
    std = np.asarray(pp.std[:channels], dtype=np.float32)
    x = (x - mean) / std
    return x.transpose(2, 0, 1) if pp.layout is Layout.NCHW else x
