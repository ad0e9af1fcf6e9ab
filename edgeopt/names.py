"""Runtime and format names: open vocabularies, checked against the registry (:mod:`edgeopt.registry`).

Which runtimes and formats exist is decided by the registry (built-ins plus ``edgeopt.runtimes`` /
``edgeopt.formats`` entry points), not by a closed enum: a :class:`RuntimeName` or :class:`ModelFormat` is a
``str`` that was checked to be a registered name when it was made, so targets, recipes and results validate
plug-in names with no change here, and JSON holds the plain string. The constants (``RuntimeName.ONNXRUNTIME``)
name the built-ins for call sites; ``RuntimeName.all()`` lists every registered one, plug-ins included.

One object per name (``RuntimeName("onnx") is RuntimeName.ONNX``), so identity comparisons written for the former
enums keep working. The registry never imports this module (names depend on the registry, not the reverse).
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from .registry import LazyRegistry, RegistryError, format_registry, runtime_registry

N = TypeVar("N", bound="RegisteredName")


class UnknownNameError(RegistryError, ValueError):
    """A runtime or format name nothing registers (a ValueError too, so pydantic reports it as a field error)."""


class _Builtin:
    """A class constant naming a built-in (``RuntimeName.ONNXRUNTIME``): made without asking the registry (the
    contract tests check that each constant is registered)."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __get__(self, obj: object, owner: type[N]) -> N:
        return owner.intern(self.value)


class RegisteredName(str):
    """A name the registry of :attr:`kind` knows; subclasses say which registry and declare the built-ins."""

    kind: ClassVar[str] = "name"
    _builtins: ClassVar[frozenset[str]] = frozenset()
    _interned: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._interned = {}
        cls._builtins = frozenset(v.value for v in vars(cls).values() if isinstance(v, _Builtin))

    @classmethod
    def registry(cls) -> LazyRegistry[Any]:
        """The registry the names are checked against."""
        raise NotImplementedError

    @classmethod
    def constants(cls: type[N]) -> list[N]:
        """The built-ins declared as class constants, in declaration order."""
        return [cls.intern(v.value) for v in vars(cls).values() if isinstance(v, _Builtin)]

    @classmethod
    def all(cls: type[N]) -> list[N]:
        """Every registered name (built-ins first, then plug-ins), each as this type."""
        return [cls.intern(name) for name in cls.registry().names()]

    @classmethod
    def intern(cls: type[N], text: str) -> N:
        """The one object for ``text``, unchecked (callers have checked it, or it is a constant)."""
        found = cls._interned.get(text)
        if found is None:
            found = cls._interned.setdefault(text, str.__new__(cls, text))
        return found

    def __new__(cls: type[N], value: object) -> N:
        """``value`` as a checked name.

        Raises:
            UnknownNameError: not a registered name (the message lists the known ones, with "did you mean").
        """
        if isinstance(value, cls):
            return value
        if not isinstance(value, str):
            raise UnknownNameError(f"a {cls.kind} name is a string, got {type(value).__name__} {value!r}")
        text = str.__str__(value)
        if text not in cls._builtins and text not in cls.registry():
            try:
                cls.registry().get(text)  # raises the registry's "did you mean" error
            except RegistryError as exc:
                raise UnknownNameError(str(exc)) from None
        return cls.intern(text)

    @property
    def value(self) -> str:
        """The plain string (what the former enum's ``.value`` gave)."""
        return str.__str__(self)

    def __repr__(self) -> str:
        return str.__repr__(self)  # messages quote it like the plain string

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str.__str__(self),))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """Validated from a string (unknown: the registry's one-line message), serialized as the plain string."""
        return core_schema.no_info_after_validator_function(
            cls, core_schema.str_schema(), serialization=core_schema.to_string_ser_schema())


class RuntimeName(RegisteredName):
    """A runtime the agent runs models with: a built-in or a plug-in (``edgeopt.runtimes`` entry point)."""

    kind = "runtime"
    ONNXRUNTIME = _Builtin("onnxruntime")
    OPENVINO = _Builtin("openvino")
    TFLITE = _Builtin("tflite")
    TENSORRT = _Builtin("tensorrt")
    COREML = _Builtin("coreml")
    NULL = _Builtin("null")

    @classmethod
    def registry(cls) -> LazyRegistry[Any]:
        return runtime_registry()


class ModelFormat(RegisteredName):
    """What a model file (or an optimize artifact) is; decides which runtimes load it and how it is converted.

    One type for the files ``bench`` detects and the artifacts passes exchange (``passes.base.ArtifactFormat`` is
    this class). Plug-in formats (``edgeopt.formats`` entry points) are accepted.
    """

    kind = "format"
    ONNX = _Builtin("onnx")
    # a .pt2 ExportedProgram, a TorchScript file, or a "package.module:factory" spec
    PYTORCH = _Builtin("pytorch")
    OPENVINO_IR = _Builtin("openvino_ir")  # model.xml + model.bin
    TFLITE = _Builtin("tflite")
    COREML = _Builtin("coreml")  # .mlpackage directory or .mlmodel file
    # ONNX prepared for TensorRT (explicit QDQ, S8/S8)
    TENSORRT_ONNX = _Builtin("tensorrt_onnx")
    # a serialized engine: specific to one GPU and TensorRT version
    TENSORRT_ENGINE = _Builtin("tensorrt_engine")
    HF_LLM = _Builtin("hf_llm")  # Hugging Face decoder LLM folder (docs/llm.md)
    ONNXRUNTIME_GENAI = _Builtin("onnxruntime_genai")  # onnxruntime-genai folder (genai_config.json)
    OPENVINO_GENAI = _Builtin("openvino_genai")  # OpenVINO GenAI IR folder (openvino_model.xml)

    @classmethod
    def registry(cls) -> LazyRegistry[Any]:
        return format_registry()


__all__ = ["ModelFormat", "RegisteredName", "RuntimeName", "UnknownNameError"]
