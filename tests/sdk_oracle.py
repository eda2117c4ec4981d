"""The providers' official SDKs as test oracles (test-only dependencies: the `test` extra).

- `typed_dict_problems(value, T)`: where a request body disagrees with an SDK's request type (a TypedDict such as
  `anthropic.types.MessageCreateParams` or `openai.types.chat.CompletionCreateParams`), checked strictly: unknown
  keys, missing required keys, wrong literals and types, all the way down. (pydantic's TypeAdapter would accept
  unknown keys and validates `Iterable[...]` fields only lazily, so it is not used for requests.)
- `botocore_problems(params, operation)`: botocore's own ParamValidator against the `bedrock-runtime` service
  model, the same check boto3 runs before sending.

Imports: the standard library; the SDKs are imported by the callers (pytest.importorskip).
"""
from __future__ import annotations

import collections.abc
import typing
from typing import Any

from typing_extensions import NotRequired, Required, get_args, get_origin, get_type_hints, is_typeddict

_WRAPPERS = {Required, NotRequired, typing.Annotated}


def _unwrap(tp: Any) -> Any:
    while get_origin(tp) in _WRAPPERS or get_origin(tp) is getattr(typing, "Required", None) \
            or get_origin(tp) is getattr(typing, "NotRequired", None):
        tp = get_args(tp)[0]
    return tp


def typed_dict_problems(value: Any, tp: Any, where: str = "body", depth: int = 0) -> list[str]:
    """[] when `value` is an instance of the (SDK) type `tp`; else one line per disagreement."""
    if depth > 60:
        return []
    tp = _unwrap(tp)
    origin = get_origin(tp)
    if tp is Any or tp is object:
        return []
    if origin is typing.Union or (origin is not None and str(origin) == "types.UnionType"):
        branches = [typed_dict_problems(value, arm, where, depth + 1) for arm in get_args(tp)]
        if any(not b for b in branches):
            return []
        return [f"{where}: matches none of {len(branches)} alternatives (e.g. {min(branches, key=len)[0]})"]
    if origin is typing.Literal:
        return [] if value in get_args(tp) else [f"{where}: {value!r} is not one of {get_args(tp)}"]
    if tp is type(None):
        return [] if value is None else [f"{where}: expected null"]
    if is_typeddict(tp):
        if not isinstance(value, dict):
            return [f"{where}: expected an object ({tp.__name__})"]
        hints = get_type_hints(tp, include_extras=True)
        problems = [f"{where}: unknown key {k!r} for {tp.__name__}" for k in value if k not in hints]
        required = {k for k, hint in hints.items() if get_origin(hint) in (Required, getattr(typing, "Required", Required))}
        required |= set(tp.__required_keys__) if getattr(tp, "__total__", True) else set()
        problems += [f"{where}: lacks required {k!r} of {tp.__name__}" for k in sorted(required) if k not in value]
        for key, item in value.items():
            if key in hints:
                problems += typed_dict_problems(item, hints[key], f"{where}.{key}", depth + 1)
        return problems
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence, typing.Iterable, typing.List):
        if not isinstance(value, list):
            return [f"{where}: expected an array"]
        (item_type,) = get_args(tp) or (Any,)
        return [p for i, item in enumerate(value) for p in typed_dict_problems(item, item_type, f"{where}[{i}]",
                                                                               depth + 1)]
    if origin in (dict, collections.abc.Mapping, typing.Dict):
        return [] if isinstance(value, dict) else [f"{where}: expected an object"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{where}: expected a string"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{where}: expected true/false"]
    if tp is int:
        return [] if isinstance(value, int) and not isinstance(value, bool) else [f"{where}: expected an integer"]
    if tp is float:
        return [] if isinstance(value, (int, float)) and not isinstance(value, bool) else [
            f"{where}: expected a number"]
    if isinstance(tp, type) and hasattr(tp, "model_validate"):  # a pydantic model accepted as a param
        try:
            tp.model_validate(value)
            return []
        except Exception as exc:  # noqa: BLE001
            return [f"{where}: {str(exc).splitlines()[0]}"]
    return []  # a type this oracle does not model (e.g. a file): not judged


def botocore_problems(params: dict, service: str, operation: str) -> list[str]:
    """botocore's ParamValidator report for `params` against the operation's input shape ([] when valid)."""
    import botocore.session
    from botocore.validate import ParamValidator

    model = botocore.session.get_session().get_service_model(service)
    report = ParamValidator().validate(params, model.operation_model(operation).input_shape)
    return report.generate_report().splitlines() if report.has_errors() else []


def botocore_output_problems(value: dict, service: str, operation: str) -> list[str]:
    """The same validator over the operation's OUTPUT shape: a reply built as the service model describes it."""
    import botocore.session
    from botocore.validate import ParamValidator

    model = botocore.session.get_session().get_service_model(service)
    report = ParamValidator().validate(value, model.operation_model(operation).output_shape)
    return report.generate_report().splitlines() if report.has_errors() else []
