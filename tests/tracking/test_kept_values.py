"""Rows built from the values a span record keeps equal rows built from its JSON text alone.

`mlflow_rows` reads previews, usage, cost and tags from the values the builder kept, where
MLflow would decode the attribute's stored text. Each row here is built both ways: once as
`bulk_traces.row_trace` makes it (values kept), once with the values dropped (every rule
decodes the text, as before the values were kept). Values whose text MLflow's attribute
clean-up rewrites (a string that is itself JSON) must fall back to the text.
"""

from __future__ import annotations

import dataclasses

import pytest

from llm_eval.schemas import CallRecord, TraceRow, Usage
from llm_eval.tracking.bulk_traces import row_trace
from llm_eval.tracking.mlflow_rows import TraceRows, TraceSpans, trace_rows
from tests.support.rows import make_row

COST = Usage(prompt_tokens=7, completion_tokens=3, total_tokens=10, cost_usd=0.25)

ROWS: dict[str, TraceRow] = {
    "plain": make_row(),
    "json task id": make_row(task_id='{"a": [1, 2]}'),
    "quoted task id": make_row(task_id='"quoted"'),
    "blank then json": make_row(task_id=' ["x"]'),
    "json model": make_row(model='{"name": "m"}'),
    "json reply": make_row(response='{"messages": [{"role": "user", "content": "x"}]}'),
    "messages in the question": make_row(
        messages=[{"role": "user", "content": '"{\\"role\\": \\"user\\"}"'}]
    ),
    "two calls with cost": make_row(
        usage=COST,
        calls=[
            CallRecord(latency_s=0.25, attempts=1, usage=COST),
            CallRecord(latency_s=0.5, attempts=2, usage=COST),
        ],
        messages=[
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "a"},
            {"role": "user", "content": "q2"},
            {"role": "assistant", "content": "a2"},
        ],
    ),
    "error with a json body": make_row(
        status="error", error_message='{"error": {"message": "overloaded", "code": 529}}'
    ),
}


def without_values(trace: TraceSpans) -> TraceSpans:
    spans = [dataclasses.replace(span, values=None) for span in trace.spans]
    return dataclasses.replace(trace, spans=spans)


def rows_of(trace: TraceSpans) -> TraceRows:
    return trace_rows(trace, 1, "file:///store/artifacts", False)


@pytest.mark.parametrize("name", ROWS)
def test_kept_values_build_the_rows_the_text_builds(name: str) -> None:
    trace = row_trace(ROWS[name], "1")
    assert all(span.values is not None for span in trace.spans)
    assert rows_of(trace) == rows_of(without_values(trace))
