"""Tables that fit the terminal: columns are chosen by width, numbers are never cut, units are human.

Rich shrinks every column of a table wider than the console and cuts cells with an ellipsis ("4,…"), which turns
numbers into lies. :func:`fit_table` instead measures what each column needs, keeps numbers whole (``no_wrap``,
``min_width``), lets only text columns marked ``flexible`` wrap, and leaves out the lowest-priority columns (and
columns with nothing in them) until the table fits; the caller prints which ones were left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

from ..untrusted import clean_text

_EMPTY = {"", "-"}


@dataclass(frozen=True)
class Col:
    """One column: its header, how important it is, and whether its text may wrap."""

    header: str
    priority: int = 0  # higher: kept longer when the terminal is narrow
    numeric: bool = True  # right-aligned, never wrapped or cut
    flexible: bool = False  # text that may wrap onto more lines (names, descriptions)
    flex_min: int = 14  # the narrowest a flexible column gets


def human_count(value: float | None) -> str:
    """``14340`` -> ``14,340``, ``12.5`` -> ``12.5``, ``0.01234`` -> ``0.0123``: no exponents."""
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.3g}" if abs(value) < 10 else f"{value:.1f}"
    return f"{value:.3g}" if value else "0"


def human_bytes(size: int | float) -> str:
    """``4_123_456`` -> ``3.93 MiB``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB"):
        if abs(value) < 1024:
            return f"{value:.0f} {unit}" if unit == "B" or value >= 100 else f"{value:.3g} {unit}"
        value /= 1024
    return f"{value:.3g} GiB" if value < 100 else f"{value:,.0f} GiB"


def _need(col: Col, cells: Sequence[str]) -> int:
    if col.flexible:  # the header may wrap on words like the cells
        words = max((len(w) for w in col.header.split()), default=0)
        return max(words, min(col.flex_min, max((len(c) for c in cells), default=0)))
    return max(len(col.header), max((len(c) for c in cells), default=0))


def _flex_widths(keep: list[int], cols: Sequence[Col], cells: dict[int, list[str]], need: dict[int, int],
                 spare: int) -> dict[int, int]:
    """Share the ``spare`` width among the flexible columns, in proportion to what they lack, capped at their
    longest cell (so a short column never takes room a long description could use)."""
    flex = [i for i in keep if cols[i].flexible]
    want = {i: max(0, max((len(c) for c in cells[i]), default=0) - need[i]) for i in flex}
    widths = {i: need[i] for i in flex}
    while spare > 0 and any(want[i] > widths[i] - need[i] for i in flex):
        lacking = [i for i in flex if want[i] > widths[i] - need[i]]
        share = max(1, spare // len(lacking))
        for i in lacking:
            add = min(share, want[i] - (widths[i] - need[i]), spare)
            widths[i] += add
            spare -= add
    return widths


def fit_table(title: str | None, cols: Sequence[Col], rows: Sequence[Sequence[str]], width: int,
              ) -> tuple[Table, list[str]]:
    """A table of ``rows`` under ``cols`` no wider than ``width``, and the headers of the columns left out.

    Columns whose cells are all empty (``-``) go first, then the lowest-priority ones (the last of equals first),
    until the columns' needs (numbers whole, flexible text at ``flex_min``) plus borders and padding fit.
    """
    columns = list(range(len(cols)))
    # cells are data (runtime versions and device names come from devices): cleaned, shown as text, never markup
    cells = {i: [clean_text(str(r[i])) for r in rows] for i in columns}
    dropped: list[int] = [i for i in columns if rows and all(c in _EMPTY for c in cells[i]) and i != 0]
    keep = [i for i in columns if i not in dropped]
    need = {i: _need(cols[i], cells[i]) for i in columns}

    def total(ids: list[int]) -> int:
        return sum(need[i] + 3 for i in ids) + 1  # one border and a padding of 1 on each side per column

    while total(keep) > width and len(keep) > 1:
        victim = min(reversed(keep[1:]), key=lambda i: cols[i].priority)
        keep.remove(victim)
        dropped.append(victim)
    widths = _flex_widths(keep, cols, cells, need, width - total(keep))
    table = Table(title=Text(clean_text(title)) if title is not None else None)
    for i in keep:
        col = cols[i]
        if col.flexible:
            table.add_column(col.header, overflow="fold", width=widths[i])
        else:
            table.add_column(col.header, justify="right" if col.numeric else "left", no_wrap=True,
                             min_width=need[i])
    for n in range(len(rows)):
        table.add_row(*(Text(cells[i][n]) for i in keep))
    return table, [cols[i].header for i in sorted(dropped)]
