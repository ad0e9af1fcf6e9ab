"""Hostile ``.npz`` / ``.npy`` eval and calibration data for the fuzz campaign: wrong keys, shapes and dtypes,
object arrays and pickles (a pickle that would create a file if it were ever unpickled), corrupt archives, NaNs,
bad labels and headers that declare huge arrays."""

from __future__ import annotations

import io
import pickle
import zipfile
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

PWNED = "PWNED-by-pickle"  # created in the current directory if a pickle ever runs


class _Exploit:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        import os

        return (os.system, (f"touch {PWNED}",))


@dataclass
class NpzCase:
    kind: str
    data: bytes
    suffix: str = ".npz"


def _npz(arrays: dict[str, object], *, pickles: bool = False) -> bytes:
    buf = io.BytesIO()
    if pickles:
        with zipfile.ZipFile(buf, "w") as zf:
            for name, value in arrays.items():
                member = io.BytesIO()
                np.save(member, np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value,
                        allow_pickle=True)
                zf.writestr(f"{name}.npy", member.getvalue())
    else:
        np.savez(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def _huge_header(shape: tuple[int, ...]) -> bytes:
    """A .npy whose header declares ``shape`` of float32 but holds 16 bytes."""
    header = {"descr": "<f4", "fortran_order": False, "shape": shape}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue() + b"\0" * 16


GOOD = np.random.default_rng(0).standard_normal((8, 1, 4)).astype(np.float32)


@st.composite
def hostile_npz(draw: st.DrawFn) -> NpzCase:
    """Data for the campaign's model (input ``x`` [1, 4] float32, 3 classes)."""
    how = draw(st.sampled_from(["valid", "wrong_key", "extra_key", "no_arrays", "shape", "zero_samples", "dtype",
                                "nan_inf", "object_array", "pickle_exploit", "raw_pickle", "truncate", "flip",
                                "not_zip", "zip_junk_member", "huge_header", "labels", "npy_single", "npy_pickle",
                                "scalar"]))
    n = draw(st.integers(1, 9))
    x = np.random.default_rng(n).standard_normal((n, 1, 4)).astype(np.float32)
    if how == "valid":
        return NpzCase(how, _npz({"x": x}))
    if how == "wrong_key":
        return NpzCase(how, _npz({draw(st.sampled_from(["X", "input", "images", "x ", "labels", "0"])): x}))
    if how == "extra_key":
        return NpzCase(how, _npz({"x": x, draw(st.text(min_size=1, max_size=8)).replace("/", "_"): x}))
    if how == "no_arrays":
        return NpzCase(how, _npz({}))
    if how == "shape":
        shape = tuple(draw(st.lists(st.integers(0, 6), max_size=5)))
        return NpzCase(how, _npz({"x": np.zeros(shape, np.float32)}))
    if how == "zero_samples":
        return NpzCase(how, _npz({"x": np.zeros((0, 1, 4), np.float32)}))
    if how == "dtype":
        dtype = draw(st.sampled_from(["int64", "float16", "float64", "bool", "complex64", "U5", "S3", "uint8",
                                      "datetime64[s]", "V8", [("a", "<f4"), ("b", "<i4")]]))
        return NpzCase(how, _npz({"x": np.zeros((n, 1, 4), dtype=dtype)}))
    if how == "nan_inf":
        bad = x.copy()
        bad.flat[draw(st.integers(0, bad.size - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf, 3e38]))
        return NpzCase(how, _npz({"x": bad}))
    if how == "object_array":
        return NpzCase(how, _npz({"x": [x[0], "text", None]}, pickles=True))
    if how == "pickle_exploit":
        return NpzCase(how, _npz({"x": np.array([_Exploit()], dtype=object)}, pickles=True))
    if how == "raw_pickle":
        return NpzCase(how, pickle.dumps({"x": _Exploit()}))
    if how == "npy_pickle":
        buf = io.BytesIO()
        np.save(buf, np.array([_Exploit()], dtype=object), allow_pickle=True)
        return NpzCase(how, buf.getvalue(), ".npy")
    if how == "truncate":
        raw = _npz({"x": x})
        return NpzCase(how, raw[: draw(st.integers(0, len(raw) - 1))])
    if how == "flip":
        buf = bytearray(_npz({"x": x}))
        for _ in range(draw(st.integers(1, 6))):
            buf[draw(st.integers(0, len(buf) - 1))] ^= 1 << draw(st.integers(0, 7))
        return NpzCase(how, bytes(buf))
    if how == "not_zip":
        return NpzCase(how, draw(st.binary(max_size=200)))
    if how == "zip_junk_member":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("x.npy", draw(st.binary(max_size=100)))
        return NpzCase(how, buf.getvalue())
    if how == "huge_header":
        shape = draw(st.sampled_from([(2**40,), (2**20, 2**20, 4), (2**62, 1, 4), (10**6, 1, 4)]))
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("x.npy", _huge_header(shape))
        return NpzCase(how, buf.getvalue())
    if how == "labels":
        labels = draw(st.sampled_from([np.arange(n), np.arange(n + 3), np.zeros((n, 2)), np.array(["a"] * n),
                                       np.full(n, np.nan), np.full(n, -1), np.full(n, 2**40)]))
        return NpzCase(how, _npz({"x": x, "labels": labels}))
    if how == "npy_single":
        buf = io.BytesIO()
        np.save(buf, draw(st.sampled_from([x, x[0], np.zeros(3), np.zeros((n, 1, 5), np.float32)])))
        return NpzCase(how, buf.getvalue(), ".npy")
    return NpzCase(how, _npz({"x": np.float32(1.0)}))
