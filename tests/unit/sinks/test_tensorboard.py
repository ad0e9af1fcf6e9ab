"""History as TensorBoard scalars (issue 16, item 11): the event file is read back with our own TFRecord/protobuf
reader (CRCs checked) and, when the `tensorboard` package is installed, with TensorBoard's own loader."""

from __future__ import annotations

import importlib.util
import struct

import pytest

from edgeopt.cli.main import main
from edgeopt.history import HistoryStore
from edgeopt.sinks.tensorboard_events import Scalar, crc32c, read_scalars, write_scalars
from edgeopt.sinks.tensorboard_history import history_scalars
from tests.synthetic_results import bench_result, samples


def test_crc32c_known_value():
    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value


def test_scalars_round_trip_and_a_flipped_byte_is_caught(tmp_path):
    points = [Scalar("net@local/onnxruntime/latency_ms_p50", step, 1.5 * step, 1_700_000_000.0 + step)
              for step in range(1, 4)]
    path = write_scalars(tmp_path / "tb", points)
    assert "tfevents" in path.name
    back = read_scalars(path)
    assert [(s.tag, s.step, s.wall_time) for s in back] == [(p.tag, p.step, p.wall_time) for p in points]
    assert [s.value for s in back] == pytest.approx([p.value for p in points])
    data = bytearray(path.read_bytes())
    data[-6] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="CRC mismatch"):
        read_scalars(path)


def test_history_cli_writes_scalars_of_the_listed_runs(tmp_path, capsys):
    db = tmp_path / "h.sqlite3"
    store = HistoryStore(db)
    for i, level in enumerate((1.0, 1.1, 0.9)):
        store.record(bench_result(samples(200, level, seed=i)))
    assert main(["history", "--history-db", str(db), "--tensorboard", str(tmp_path / "tb"), "--json"]) == 0
    assert "TensorBoard scalars of 3 run(s)" in capsys.readouterr().err
    (path,) = (tmp_path / "tb").iterdir()
    back = read_scalars(path)
    p50 = [s for s in back if s.tag == "net@local/onnxruntime/latency_ms_p50"]
    assert [s.step for s in p50] == [1, 2, 3]
    assert [s.value for s in p50] == pytest.approx([r.latency_ms_p50 for r in sorted(store.runs(), key=lambda r: r.id)],
                                                   rel=1e-6)
    assert {s.tag.rsplit("/", 1)[1] for s in back} >= {"latency_ms_p99", "throughput_ips", "memory_mb_peak"}
    assert len(back) == len(history_scalars(store.runs()))


def test_tensorboards_own_reader_agrees(tmp_path):
    if importlib.util.find_spec("tensorboard") is None:
        pytest.skip("tensorboard is not installed (pip install tensorboard): our own reader checked the file above")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    write_scalars(tmp_path, [Scalar("a/b", 7, 2.5, 1_700_000_000.0)])
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    (event,) = acc.Scalars("a/b")
    assert event.step == 7 and event.value == pytest.approx(2.5)


def test_float_values_are_single_precision_like_tensorboard():
    assert struct.unpack("<f", struct.pack("<f", 0.1))[0] != 0.1  # why the comparisons above use approx
