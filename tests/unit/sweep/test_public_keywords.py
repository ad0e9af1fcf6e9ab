"""``edgeopt.sweep`` and ``edgeopt.benchmark`` take the typed settings the CLI builds; a keyword set beside the typed
object that replaces it is refused (it would be silently dropped), before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

import edgeopt
from edgeopt.errors import InputError
from edgeopt.settings import MeasureSettings, RemoteSpec
from edgeopt.sweep.options import SweepOptions, level_settings


def test_a_keyword_beside_the_typed_object_that_replaces_it_is_refused(tmp_path: Path):
    model = tmp_path / "m.onnx"  # never opened: the refusal comes first
    options = SweepOptions(eval_data=tmp_path / "eval.npz")
    with pytest.raises(InputError, match=r"^sweep: recipes, min_retention given with options=: set them on the "):
        edgeopt.sweep(model, options=options, recipes=["int8"], min_retention=0.9)
    with pytest.raises(InputError, match=r"^sweep: threads given with measure="):
        edgeopt.sweep(model, options=options, measure=level_settings(), threads=2)
    with pytest.raises(InputError, match=r"^sweep: give eval="):
        edgeopt.sweep(model)
    with pytest.raises(InputError, match=r"^benchmark: iterations, seed given with settings="):
        edgeopt.benchmark(model, settings=MeasureSettings.from_kwargs(), iterations=5, seed=3)
    with pytest.raises(InputError, match=r"^benchmark: host given with remote="):
        edgeopt.benchmark(model, remote=RemoteSpec(), host="pi@board")
