"""How big a label is drawn, without a font engine: per-character advance widths and a box type.

The widths are the larger of DejaVu Sans (what ``system-ui`` resolves to on a bare Linux, the widest common sans)
and Liberation Sans (Arial's metrics), in thousandths of an em, so an estimate is never narrower than the drawn
text in the fonts a report meets; the chart test measures the real boxes in Chromium.
"""

from __future__ import annotations

from dataclasses import dataclass

_GROUPS = {
    250: "'", 300: "ijlI,. ", 350: "f-/:;\\|", 400: "rt!()[]", 450: '"', 500: "szJ*`", 550: "cL?_",
    600: "aekovxyFT", 650: "bdghnpquEKPSY0123456789${}", 700: "ABCRVXZ", 750: "DHNU", 800: "wGOQ&",
    850: "M#+<=>^~", 950: "m%", 1000: "W@",
}
_WIDTH = {ch: w / 1000 for w, chars in _GROUPS.items() for ch in chars}
_OTHER = 0.9  # any other character (ellipsis, <=, a letter with an accent, CJK is wider but rare here)
BOLD = 1.14  # bold glyphs are up to this much wider (DejaVu Sans Bold vs Book)
ASCENT, DESCENT = 0.93, 0.24  # DejaVu Sans, in em: the box a browser reports runs from ascent to descent


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle in SVG user units (y grows downwards)."""

    x0: float
    y0: float
    x1: float
    y1: float

    def intersects(self, other: Box, pad: float = 0.0) -> bool:
        """Whether the two overlap by more than nothing once each is grown by ``pad`` on every side."""
        return (self.x0 - pad < other.x1 and other.x0 - pad < self.x1 and self.y0 - pad < other.y1
                and other.y0 - pad < self.y1)

    def inside(self, other: Box) -> bool:
        return self.x0 >= other.x0 and self.y0 >= other.y0 and self.x1 <= other.x1 and self.y1 <= other.y1

    def grow(self, pad: float) -> Box:
        return Box(self.x0 - pad, self.y0 - pad, self.x1 + pad, self.y1 + pad)


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Estimated drawn width of ``text`` at font size ``size`` (px), never less than the real one in the fonts
    above."""
    return sum(_WIDTH.get(ch, _OTHER) for ch in text) * size * (BOLD if bold else 1.0)


def text_box(x: float, y: float, text: str, size: float, anchor: str = "start", bold: bool = False) -> Box:
    """The box of ``text`` drawn at baseline ``(x, y)`` with ``text-anchor`` ``anchor``."""
    w = text_width(text, size, bold)
    left = x if anchor == "start" else x - w if anchor == "end" else x - w / 2
    return Box(left, y - ASCENT * size, left + w, y + DESCENT * size)


def shorten(text: str, size: float, max_width: float) -> str:
    """``text`` cut with an ellipsis so it fits ``max_width`` (the full text goes in a tooltip)."""
    if text_width(text, size) <= max_width:
        return text
    while text and text_width(text + "\u2026", size) > max_width:
        text = text[:-1]
    return text + "\u2026"
