"""One engine per task (issue 30 item 4): a command asks the model's kind for its task entry
(:mod:`edgeopt.dispatch`), never "is this an LLM?"."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgeopt.deploy import DeployedFile, Deployment, DeploymentMeasured, save_deployment
from edgeopt.dispatch import entry, kind_of, zoo_kind
from edgeopt.errors import InputError
from edgeopt.registry import BUILTIN_KINDS, RegistryError, get_kind
from edgeopt.registry.kind_spec import GENERATIVE, TASKS, TENSOR, KindDescriptor, MetricSpec


def _deployment(folder: Path, model: str, fmt: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / model).write_bytes(b"x")
    record = Deployment(name="level", recipe="fp32", model=model, format=fmt, runtime="onnxruntime",
                        runtime_version="1", files=(DeployedFile(path=model, sha256="0" * 64, size_bytes=1,
                                                                 role="model"),),
                        measured=DeploymentMeasured(target="local", metric="agreement", min_retention=0.99,
                                                    retention=1.0, latency_ms=1.0, size_bytes=1))
    return save_deployment(folder, record)


def test_a_deployment_folder_and_its_record_are_the_kind_of_what_they_deploy(tmp_path: Path):
    # model_kind alone takes a folder no format claims as the folder formats' kind (generative): a one-pass
    # deployment folder (deployment.json + model.onnx) is a tensor model, told by its record's format
    record = _deployment(tmp_path / "recommended", "model.onnx", "onnx")
    assert kind_of(record.parent).name == TENSOR and kind_of(record).name == TENSOR
    llm = tmp_path / "llm"
    llm.mkdir()
    (llm / "genai_config.json").write_text("{}")
    (llm / "deployment.json").write_text("{}")  # an LLM deployment: the folder is claimed, the record not read
    assert kind_of(llm).name == GENERATIVE and kind_of(llm / "deployment.json").name == GENERATIVE
    assert kind_of(tmp_path / "m.onnx").name == TENSOR and kind_of(tmp_path / "m.gguf").name == GENERATIVE


def test_a_zoo_name_is_the_kind_of_the_format_the_zoo_writes():
    assert zoo_kind("tiny-llama").name == GENERATIVE and zoo_kind("mobilenet-tiny").name == TENSOR
    with pytest.raises(InputError, match="unknown zoo model 'nope'"):
        zoo_kind("nope")


@pytest.mark.parametrize("name", list(BUILTIN_KINDS))
def test_every_built_in_kind_names_an_entry_for_every_task_and_each_loads(name: str):
    kind = get_kind(name)
    for task in TASKS:
        assert kind.task_path(task) is not None, (name, task)
        assert callable(entry(kind, task)), (name, task)


def test_a_plug_in_kind_gets_the_generic_engines_entries_and_is_told_what_it_lacks():
    toy = KindDescriptor(name="toy", summary="a toy kind", agent_command="run",
                         metrics=(MetricSpec(name="rtf", unit="ratio"),), rank_metric="rtf")
    assert toy.task_path("bench_cli") == "edgeopt.cli.bench_kind_cmd:bench_generic"
    assert toy.task_path("qualify") == "edgeopt.qualify.kind_engine:run_kind_qualification"
    with pytest.raises(RegistryError, match="kind toy has no sweep cli entry.*sweep_cli='module:function'"):
        entry(toy, "sweep_cli")
    own = toy.model_copy(update={"sweep_cli": "edgeopt.cli.sweep_cmd:sweep_tensor"})
    assert entry(own, "sweep_cli").__name__ == "sweep_tensor"
