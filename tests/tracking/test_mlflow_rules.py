"""`mlflow_rules` gives what MLflow's own helpers give, on our inputs and on the edge cases
around them (the column test in `test_sql_writes.py` covers the rows we write; this covers
the values those rows could come to hold)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llm_eval.tracking import mlflow_rules as rules

pytestmark = pytest.mark.slow

ATTRIBUTE_VALUES = [
    '"plain"', '"{\\"error\\": {\\"code\\": 529}}"', '"[1, 2]"', '"\\"quoted\\""', '" {}"',
    '"\\n[1]"', '"\\u007b\\"a\\": 1}"', '"\\u0020[]"', '"1"', '"true"', '"{not json"', '""',
    '{"a": 1}', "5", "not json", '  "[3]"', '"\\t\\"x\\""', '"null"',
]  # fmt: skip


def test_attributes_are_sanitized_as_mlflow_sanitizes_them() -> None:
    from mlflow.tracing.otel.translation import sanitize_attributes

    attributes = {str(index): value for index, value in enumerate(ATTRIBUTE_VALUES)}
    assert rules.sanitize_attributes(attributes) == sanitize_attributes(dict(attributes))


PREVIEW_INPUTS: list[Any] = [
    {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "Γεια"}]},
    {"messages": [{"role": "assistant", "content": "only"}]},
    {"messages": [{"role": "user", "content": [{"type": "text", "text": "part"}]}]},
    {"messages": [{"role": "user", "content": [{"type": "image"}]}]},
    {"messages": []},
    {"choices": [{"message": {"role": "assistant", "content": "c"}}]},
    {"input": [{"role": "user", "content": "i"}]},
    {"output": [{"role": "assistant", "content": "o"}]},
    {"request": {"input": [{"role": "user", "content": "r"}]}},
    {"response": "x" * 1500, "status": "correct"},
    {"messages": [{"role": "user", "content": "y" * 999}]},
    {"messages": [{"role": "user", "content": "z" * 1001}]},
    [1, 2],
    "a bare string",
]


@pytest.mark.parametrize("role", ["user", "assistant"])
def test_previews_are_cut_as_mlflow_cuts_them(role: str) -> None:
    from mlflow.tracing.utils.truncation import _get_truncated_preview

    for value in PREVIEW_INPUTS:
        text = json.dumps(value, ensure_ascii=False)
        assert rules.truncated_preview(text, role) == _get_truncated_preview(text, role=role)
    assert rules.truncated_preview("not json {", role) == _get_truncated_preview(
        "not json {", role=role
    )


@pytest.mark.parametrize(
    "root",
    ["file:///shared/artifacts", "/abs/root", "rel/root", "s3://bucket/x?y=1", "file:rel",
     "mlflow-artifacts:/1", "file:///with%20space/"],
)  # fmt: skip
def test_artifact_locations_are_joined_as_mlflow_joins_them(root: str) -> None:
    from mlflow.utils.uri import append_to_uri_path

    parts = ("traces", "tr-" + "a" * 32, "artifacts")
    assert rules.append_to_uri_path(root, *parts) == append_to_uri_path(root, *parts)


@pytest.mark.parametrize(
    ("key", "value"),
    [("llm_eval.task_id", "t1"), ("a b:c/d-e", "v"), ("../up", "v"), ("/abs", "v"),
     ("a//b", "v"), ("a/./b", "v"), (".", "v"), ("bad!", "v"), ("k" * 251, "v"),
     ("long", "v" * 9000), ("Ελληνικά", "τιμή")],
)  # fmt: skip
def test_trace_tags_are_validated_as_mlflow_validates_them(key: str, value: str) -> None:
    from mlflow.exceptions import MlflowException
    from mlflow.utils.validation import _validate_trace_tag

    try:
        expected: Any = _validate_trace_tag(key, value)
    except MlflowException:
        expected = "refused"
    try:
        got: Any = rules.validate_trace_tag(key, value)
    except rules.MlflowRuleError:
        got = "refused"
    assert got == expected


NUMBERS: list[Any] = [
    None, True, False, 0, 7, 1.5, -2.0, "3", "3.5", "yes", " No ", "x",
    float("inf"), float("nan"), 10**400, 2**63, 2**63 - 1, [1], {"a": 1},
]  # fmt: skip


def test_numbers_are_read_as_mlflow_reads_them() -> None:
    from mlflow.store.tracking.utils import trace_analytics as analytics

    for value in NUMBERS:
        assert rules.token_count_or_none(value) == analytics.token_count_or_none(value), value
        float_value = rules.finite_float_or_none(value)
        assert float_value == analytics.finite_float_or_none(value), value
        assert rules.assessment_aggregate(value) == analytics.assessment_aggregate(value), value


def test_usage_and_cost_sum_over_the_span_tree_as_mlflow_sums_them() -> None:
    from mlflow.tracing.utils import SpanAggregationNode as MlflowNode
    from mlflow.tracing.utils import aggregate_cost_from_span_nodes, aggregate_usage_from_span_nodes

    tree = [  # a parent with usage hides its children's; cost on leaves only
        ("r", None, {"input_tokens": 1}, None),
        ("a", "r", {"input_tokens": 5, "cache_read_input_tokens": 2}, {"total_cost": 0.1}),
        ("b", "orphan", {"output_tokens": 3, "total_tokens": 3}, {"total_cost": 0.2}),
        ("c", "b", {"output_tokens": 9}, {"input_cost": 0.3, "total_cost": 0.7}),
        ("d", None, None, {"total_cost": 1e-17}),
    ]
    usage = [rules.SpanAggregationNode(s, p, u) for s, p, u, _ in tree]
    cost = [rules.SpanAggregationNode(s, p, c) for s, p, _, c in tree]
    assert rules.aggregate_usage_from_span_nodes(usage) == aggregate_usage_from_span_nodes(
        [MlflowNode(s, p, u) for s, p, u, _ in tree]
    )
    assert rules.aggregate_cost_from_span_nodes(cost) == aggregate_cost_from_span_nodes(
        [MlflowNode(s, p, c) for s, p, _, c in tree]
    )
    assert rules.aggregate_cost_from_span_nodes(cost[:1]) is None


def test_source_types_are_standardized_as_mlflow_does() -> None:
    from mlflow.entities import AssessmentSource

    for value in ("CODE", "human", "llm_judge"):
        assert rules.source_type(value) == AssessmentSource(source_type=value).source_type
    with pytest.raises(rules.MlflowRuleError):
        rules.source_type("ROBOT")
