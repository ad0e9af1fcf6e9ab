"""How a field of a kind's settings model reads on the command line: :class:`Flag`, put on the field as
``Annotated[type, Flag(...)]`` metadata (plain data: no click here).

A kind declares its settings once, as a typed model: its ``workload`` model (``KindDescriptor.workload``, the bench
settings) and its ``sweep_options`` model. ``edgeopt bench`` and ``edgeopt sweep`` derive one flag per field that
carries a :class:`Flag` (edgeopt/cli/kind_flags.py), the way ``cli/measure_options.py`` derives the measurement flags
from ``MeasureSettings``; a field without one is not a flag (it takes the command's shared setting of its name, e.g.
``threads``, or its default). What the flag looks like follows from the field's type:

- ``tuple[int, ...]`` (a list-valued axis): ``--name N[,N...]``, one comma list given once, each value >= ``min``;
  nothing given keeps the field's default;
- ``list[str] | None``: ``--name TEXT``, a comma-separated list (None when not given);
- ``bool``: ``--name/--no-name`` (give both in ``name``), its default shown;
- ``int`` / ``float`` / ``str``: one value, its default shown, an ``int`` bounded below by the field's ``ge``.

A field of another type with a Flag is refused when the command is built (a ValueError naming the flag), and so is
one flag name two kinds declare differently.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Flag:
    """The command-line form of one settings field.

    Attributes:
        name: the flag as typed, e.g. ``--prompt-tokens``, or ``--kv-probe/--no-kv-probe`` for a bool.
        help: the flag's help text, verbatim (say the default of a list-valued axis here: ``[default: 128]``).
        min: smallest value of each item of a list-valued axis.
    """

    name: str
    help: str
    min: int | None = None

    def __post_init__(self) -> None:
        if not self.name.startswith("--"):
            raise ValueError(f"Flag {self.name!r}: a flag name starts with '--', e.g. --prompt-tokens")
