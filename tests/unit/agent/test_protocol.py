import json

import pytest

from edgeopt_agent.protocol import PROTOCOL_VERSION, ProtocolError, RawRun, Request


def test_request_round_trips_through_json():
    req = Request(model_path="/m.onnx", iterations=5, shapes={"x": [1, 3]}, runtime_options={"providers": ["A"]})
    again = Request.from_dict(json.loads(json.dumps(req.to_dict())))
    assert again == req


def test_unknown_request_field_is_refused_with_its_name():
    with pytest.raises(ProtocolError, match="iteratons"):
        Request.from_dict({"model_path": "m", "iteratons": 3})


def test_other_protocol_version_is_refused():
    with pytest.raises(ProtocolError, match="protocol version 99"):
        Request.from_dict({"model_path": "m", "protocol_version": 99})
    assert RawRun.from_dict({"status": "ok"}).protocol_version == PROTOCOL_VERSION


def test_non_object_is_refused():
    with pytest.raises(ProtocolError, match="expected a JSON object"):
        RawRun.from_dict([1, 2])  # type: ignore[arg-type]
