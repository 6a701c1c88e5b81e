"""MLflow 3.17's rules for what its SQL store writes, in plain Python, for `mlflow_rows`.

Each function here repeats one MLflow helper (named in its docstring) for the inputs the
`run` and `score` stages produce: span attributes that are JSON text, trace tags of our own,
`correct` feedback. Importing MLflow costs about 2 s of CPU, more than the whole record of a
run; these copies cost nothing to import. `tests/tracking/test_sql_writes.py` writes the same
rows through MLflow's API and through these copies and compares every column, so a new MLflow
that changes a rule fails there rather than leaving rows MLflow would not have written.
"""

from __future__ import annotations

import functools
import json
import math
import os
import posixpath
import re
import urllib.parse
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any


class SpanAttributeKey:
    """`mlflow.tracing.constant.SpanAttributeKey`: the span attributes MLflow reads."""

    EXPERIMENT_ID = "mlflow.experimentId"
    REQUEST_ID = "mlflow.traceRequestId"
    INPUTS = "mlflow.spanInputs"
    OUTPUTS = "mlflow.spanOutputs"
    SPAN_TYPE = "mlflow.spanType"
    CHAT_USAGE = "mlflow.chat.tokenUsage"
    LLM_COST = "mlflow.llm.cost"
    MODEL = "mlflow.llm.model"
    MODEL_PROVIDER = "mlflow.llm.provider"
    USER_ID = "user.id"
    SESSION_ID = "session.id"
    TRACE_TAG_PREFIX = "mlflow.traceTag."


CONVERSATION_ID = "gen_ai.conversation.id"
"""`GenAiSemconvKey.CONVERSATION_ID`, the other attribute `log_spans` takes a session from."""


class TraceTagKey:
    """`mlflow.tracing.constant.TraceTagKey` (the two this store write uses)."""

    TRACE_NAME = "mlflow.traceName"
    SPANS_LOCATION = "mlflow.trace.spansLocation"


ARTIFACT_LOCATION_TAG = "mlflow.artifactLocation"  # mlflow.utils.mlflow_tags
SPANS_IN_TRACKING_STORE = "TRACKING_STORE"  # SpansLocation.TRACKING_STORE
TRACE_FOLDER_NAME = "traces"  # SqlAlchemyStore.TRACE_FOLDER_NAME
ARTIFACTS_FOLDER_NAME = "artifacts"  # SqlAlchemyStore.ARTIFACTS_FOLDER_NAME
ASSESSMENT_ID_PREFIX = "a-"  # mlflow.tracing.constant
SOURCE_RUN_ID = "mlflow.assessment.sourceRunId"  # AssessmentMetadataKey.SOURCE_RUN_ID


class TraceState(StrEnum):
    """`mlflow.entities.trace_state.TraceState`."""

    STATE_UNSPECIFIED = "STATE_UNSPECIFIED"
    OK = "OK"
    ERROR = "ERROR"
    IN_PROGRESS = "IN_PROGRESS"


class EntityAssociationType:
    """`mlflow.entities.entity_type.EntityAssociationType` (the two a run link uses)."""

    RUN = "run"
    TRACE = "trace"


TOKEN_KEYS = ("input_tokens", "output_tokens", "total_tokens")
CACHE_TOKEN_KEYS = (
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "cache_creation_input_tokens_above_1hr",
)
TOKEN_COLUMN_BY_KEY = {key: key for key in (*TOKEN_KEYS, *CACHE_TOKEN_KEYS)}
"""`trace_analytics.TOKEN_COLUMN_BY_KEY`: usage key -> `trace_info` column (same names)."""
COST_COLUMN_BY_KEY = {key: key for key in ("input_cost", "output_cost", "total_cost")}
"""`trace_analytics.COST_COLUMN_BY_KEY`: cost key -> column (same names)."""

MODEL_DIMENSION_MAX_LENGTH = 500
MAX_TRACE_NAME_LENGTH = 4096  # MAX_CHARS_IN_TRACE_INFO_TAGS_VALUE
MAX_SESSION_ID_LENGTH = 250  # MAX_CHARS_IN_TRACE_INFO_METADATA
MAX_TRACE_TAG_KEY_LENGTH = 250
MAX_TRACE_TAG_VAL_LENGTH = 8000
PREVIEW_MAX_LENGTH = 1000  # TRACE_REQUEST_RESPONSE_PREVIEW_MAX_LENGTH_OSS (not Databricks)
_BIGINT = (-(2**63), 2**63 - 1)


class MlflowRuleError(ValueError):
    """A value MLflow's store would refuse (it raises `MlflowException` there)."""


# --------------------------------------------------------------------------- environment


def env_flag(name: str, default: bool) -> bool:
    """`_BooleanEnvironmentVariable.get`: true/false/1/0 in any case; anything else is an
    error, as MLflow makes it."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    if raw.lower() not in ("true", "false", "1", "0"):
        raise MlflowRuleError(f"{name} must be one of true, false, 1, 0; got {raw!r}")
    return raw.lower() in ("true", "1")


# --------------------------------------------------------------------------- JSON text


UNPARSED: Any = object()
"""No decoded value given: the function decodes the text itself."""


def try_parse_json_string(value: Any) -> Any:
    """`sqlalchemy_store._try_parse_json_string`: the string a JSON text encodes, else the
    value unchanged."""
    try:
        parsed = json.loads(value)
    except (json.JSONDecodeError, TypeError):
        return value
    return parsed if isinstance(parsed, str) else value


def try_json_loads(value: Any) -> Any:
    """`mlflow.tracing.utils.try_json_loads`."""
    try:
        return json.loads(value)
    except (json.JSONDecodeError, TypeError):
        return value


def sanitize_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """`otel.translation.sanitize_attributes`, the one step of `translate_span_when_storing`
    that touches our spans: an attribute that is JSON text of a string which is itself JSON
    of a string, object or list (e.g. an error message that is a provider's JSON body)
    loses one layer of encoding."""
    cleaned: dict[str, Any] = dict(attributes)
    for key, value in attributes.items():
        # Most values are JSON of a word, a number or an object: turned away on their first
        # two characters before the full test.
        if not isinstance(value, str):
            continue
        first = value[:1]
        if (first == '"' and value[1:2] not in _AFTER_QUOTE) or first not in _JSON_STRING_STARTS:
            continue
        if not _may_be_encoded_twice(value):
            continue
        try:
            inner = json.loads(value)
            if isinstance(inner, str) and isinstance(json.loads(inner), str | dict | list):
                cleaned[key] = inner
        except json.JSONDecodeError:
            pass
    return cleaned


_JSON_STRING_STARTS = frozenset('" \t\n\r')
_AFTER_QUOTE = frozenset("{[ \\")
"""What follows the opening quote of a string `_may_be_encoded_twice` can accept."""
"""What JSON text of a string can start with: its quote, or blanks before it."""


def _may_be_encoded_twice(value: Any) -> bool:
    """False only where `sanitize_attributes` cannot change the value, so most attributes
    are not parsed at all: it must be JSON of a string whose text starts (after blanks) with
    `"`, `{` or `[` - in JSON, a first character of `\\"`, `{`, `[`, a blank, or a `\\u` escape."""
    if not isinstance(value, str) or value[:1] not in _JSON_STRING_STARTS:
        return False
    body = value.lstrip(" \t\n\r")
    if not body.startswith('"'):
        return False
    first = body[1:2]
    return first in ("{", "[", " ") or (first == "\\" and body[2:3] in ('"', "t", "n", "r", "u"))


# --------------------------------------------------------------------------- numbers


def finite_float_or_none(value: Any) -> float | None:
    """`trace_analytics.finite_float_or_none`."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def token_count_or_none(value: Any) -> int | None:
    """`trace_analytics.token_count_or_none`: a whole number that fits a BIGINT, else None."""
    if type(value) is int:  # the usual case, without the decimal round trip
        return value if _BIGINT[0] <= value <= _BIGINT[1] else None
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, TypeError, ValueError):
        return None
    if (
        not number.is_finite()
        or number != number.to_integral_value()
        or not _BIGINT[0] <= number <= _BIGINT[1]
    ):
        return None
    return int(number)


def bounded_model_dimension(value: Any) -> str | None:
    """`trace_analytics.bounded_model_dimension`."""
    return value[:MODEL_DIMENSION_MAX_LENGTH] if isinstance(value, str) else None


def assessment_aggregate(value: Any) -> tuple[float | None, bool]:
    """`trace_analytics.assessment_aggregate`: (aggregate_value, is_numeric_value)."""
    if isinstance(value, bool):
        return (1.0 if value else 0.0), False
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:
            return None, False
        return (number, True) if math.isfinite(number) else (None, False)
    if isinstance(value, str) and value.strip().lower() in ("yes", "no"):
        return (1.0 if value.strip().lower() == "yes" else 0.0), False
    return None, False


# --------------------------------------------------------------------------- aggregation


@dataclass
class SpanAggregationNode:
    """`mlflow.tracing.utils.SpanAggregationNode`."""

    span_id: str
    parent_id: str | None
    data: dict[str, Any] | None


def span_aggregation_node(
    span_id: str,
    parent_id: str | None,
    attributes: dict[str, Any],
    key: str,
    parsed: Any = UNPARSED,
) -> SpanAggregationNode:
    """`sqlalchemy_store._span_aggregation_node`: the span's usage or cost object, if any
    (`parsed`: what `try_json_loads` of the attribute's text gives, where the caller knows
    it)."""
    value = parsed
    if value is UNPARSED:
        value = attributes.get(key)
        if isinstance(value, str):
            value = try_json_loads(value)
    return SpanAggregationNode(span_id, parent_id, value if isinstance(value, dict) else None)


def _aggregate_from_nodes(
    nodes: list[SpanAggregationNode],
    keys: tuple[str, ...],
    default: float,
    optional_keys: tuple[str, ...] = (),
) -> dict[str, Any] | None:
    """`mlflow.tracing.utils._aggregate_from_nodes`, step for step: a span's numbers count
    unless an ancestor has some. The walk order is MLflow's, so float sums come out the
    same to the last bit."""
    totals: dict[str, Any] = dict.fromkeys(keys, default)
    has_data = False
    node_ids = {node.span_id for node in nodes}
    children: defaultdict[str, list[SpanAggregationNode]] = defaultdict(list)
    roots: list[SpanAggregationNode] = []
    for node in nodes:
        if node.parent_id and node.parent_id in node_ids:
            children[node.parent_id].append(node)
        else:
            roots.append(node)
    stack = [(root, False) for root in roots]
    while stack:
        node, ancestor_has_data = stack.pop()
        data = node.data
        if data is not None and not ancestor_has_data:
            for key in keys:
                totals[key] += data.get(key, default)
            for key in optional_keys:
                if key in data:
                    totals[key] = totals.get(key, default) + data[key]
            has_data = True
        below = ancestor_has_data or data is not None
        stack.extend((child, below) for child in children.get(node.span_id, []))
    return totals if has_data else None


def aggregate_usage_from_span_nodes(nodes: list[SpanAggregationNode]) -> dict[str, Any] | None:
    """`mlflow.tracing.utils.aggregate_usage_from_span_nodes`."""
    return _aggregate_from_nodes(nodes, TOKEN_KEYS, 0, CACHE_TOKEN_KEYS)


def aggregate_cost_from_span_nodes(nodes: list[SpanAggregationNode]) -> dict[str, Any] | None:
    """`mlflow.tracing.utils.aggregate_cost_from_span_nodes`."""
    return _aggregate_from_nodes(nodes, tuple(COST_COLUMN_BY_KEY), 0.0)


# --------------------------------------------------------------------------- previews


def truncated_preview(text: str, role: str, parsed: Any = UNPARSED) -> str:
    """`tracing.utils.truncation._get_truncated_preview` for a JSON attribute text: the
    last `role` message's text when the object holds chat messages (`messages`, `choices`,
    `input`, `output`, `request`), else the text itself; cut to 1,000 characters (1,000 is
    MLflow's limit for every tracking URI but Databricks'). `parsed`: what `text` decodes
    to, where the caller knows it."""
    content: Any = None
    obj = parsed
    if obj is UNPARSED:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            obj = None
    if obj is not None and (messages := _messages(obj)):
        content = _message_text(_last_message(messages, role))
    content = content or text
    if not isinstance(content, str):  # MLflow's len() fails there and keeps no preview
        raise TypeError(f"message text is {type(content).__name__}, not str")
    if len(content) <= PREVIEW_MAX_LENGTH:
        return content
    return content[: PREVIEW_MAX_LENGTH - 3] + "..."


def _messages(obj: Any) -> list[dict[str, Any]] | None:
    """`truncation._try_extract_messages`."""
    if not isinstance(obj, dict):
        return None
    if (messages := obj.get("messages")) and isinstance(messages, list):
        return [item for item in messages if _is_message(item)]
    choices = obj.get("choices")
    if choices and isinstance(choices, list) and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if message and _is_message(message):
            return [message]
    if (items := obj.get("input")) and isinstance(items, list):
        return [item for item in items if _is_message(item)]
    if (items := obj.get("output")) and isinstance(items, list):
        return [item for item in items if _is_message(item)]
    if "request" in obj:
        return _messages(obj["request"])
    return None


def _is_message(item: Any) -> bool:
    return isinstance(item, dict) and "role" in item and "content" in item


def _last_message(messages: list[dict[str, Any]], role: str) -> dict[str, Any]:
    """The last message of `role`, else the last message."""
    return next((m for m in reversed(messages) if m.get("role") == role), messages[-1])


def _message_text(message: dict[str, Any]) -> Any:
    """`truncation._get_text_content_from_message` (its first text part for a list)."""
    content = message.get("content")
    if isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                return part
            if isinstance(part, dict) and part.get("type") in ("text", "output_text"):
                return part.get("text")
        return None
    return content if isinstance(content, str) else ""


# --------------------------------------------------------------------------- validation


def length_limited(
    what: str, limit: int, value: str | None, *, truncate: bool = False
) -> str | None:
    """`utils.validation._validate_length_limit`: too long is an error, or (`truncate` and
    MLFLOW_TRUNCATE_LONG_VALUES, on by default) cut to the limit."""
    if value is None or len(value) <= limit:
        return value
    if truncate and env_flag("MLFLOW_TRUNCATE_LONG_VALUES", True):
        return value[:limit]
    raise MlflowRuleError(f"{what} exceeds the maximum length of {limit} characters")


def validate_trace_name(value: str | None) -> str | None:
    """`trace_analytics.validate_trace_name`."""
    return length_limited("Trace name", MAX_TRACE_NAME_LENGTH, value)


def validate_session_id(value: str | None) -> str | None:
    """`trace_analytics.validate_session_id`."""
    return length_limited("Session ID", MAX_SESSION_ID_LENGTH, value)


_TAG_NAME = re.compile(r"^[/\w.\- :]*$")  # validate_param_and_metric_name, not on Windows


def validate_trace_tag(key: str, value: str) -> tuple[str, str]:
    """`utils.validation._validate_trace_tag`: a key of word characters, `/.- :` that names
    no other path; the value cut to 8,000 characters."""
    _check_trace_tag_key(key)
    return key, str(length_limited("value", MAX_TRACE_TAG_VAL_LENGTH, value, truncate=True))


@functools.lru_cache(maxsize=1024)
def _check_trace_tag_key(key: str) -> None:
    """The key half of `validate_trace_tag` (a pure function of the key: remembered, since
    every trace carries the same few keys)."""
    if not _TAG_NAME.match(key):
        raise MlflowRuleError(f"invalid trace tag key {key!r}")
    normal = posixpath.normpath(key)
    if normal != key or normal == "." or normal.startswith(("..", "/")):
        raise MlflowRuleError(f"trace tag key {key!r} would resolve to {normal!r}")
    length_limited("key", MAX_TRACE_TAG_KEY_LENGTH, key)


def source_type(value: str) -> str:
    """`AssessmentSourceType._standardize`: upper case, the old AI_JUDGE as LLM_JUDGE."""
    standard = value.upper()
    standard = "LLM_JUDGE" if standard == "AI_JUDGE" else standard
    if standard not in ("SOURCE_TYPE_UNSPECIFIED", "LLM_JUDGE", "HUMAN", "CODE"):
        raise MlflowRuleError(f"invalid assessment source type {value!r}")
    return standard


# --------------------------------------------------------------------------- URIs


def append_to_uri_path(uri: str, *paths: str) -> str:
    """`utils.uri.append_to_uri_path`: `paths` joined onto the URI's path component."""
    path = ""
    for subpath in paths:
        path = _join_posix(path, subpath)
    parsed = urllib.parse.urlparse(uri)
    if ".." in _decoded(parsed.query):  # validate_query_string
        raise MlflowRuleError(f"invalid query string in {uri!r}")
    if not parsed.scheme:
        return _join_posix(uri, path)
    prefix = ""
    if not parsed.path.startswith("/"):
        # As MLflow: urlunparse would make a relative `file:` path absolute.
        prefix = parsed.scheme + ":"
        parsed = parsed._replace(scheme="")
    return prefix + urllib.parse.urlunparse(parsed._replace(path=_join_posix(parsed.path, path)))


def _join_posix(prefix: str, suffix: str) -> str:
    """`uri._join_posixpaths_and_append_absolute_suffixes`."""
    if not prefix:
        return suffix
    return posixpath.join(prefix, suffix.lstrip(posixpath.sep))


def _decoded(url: str) -> str:
    """`uri._decode`: unquoted until it stops changing (at most 10 times)."""
    for _ in range(10):
        parsed = urllib.parse.urlunparse(urllib.parse.urlparse(urllib.parse.unquote(url)))
        if parsed == url:
            return url
        url = parsed
    raise MlflowRuleError("failed to decode url")
