"""The report quotes labels, replies, error texts and settings as text: rendered to HTML, it
holds no element the project did not write, and every quoted string reads as it was."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest
from markdown_it import MarkdownIt

from llm_eval.reporting import render_report
from llm_eval.reporting.plan import RunPlan, StopNote
from llm_eval.schemas import ToolCallRecord, TraceRow
from tests.support.markup import ATTACKS, PageParts, parse_html
from tests.support.rows import make_row

CHART = "../docs/images/language-accuracy.svg"
"""The one chart the report below embeds: the only image it may hold."""


def _rows(text: Callable[[int], str]) -> list[TraceRow]:
    """Three models over the Greek, tool and AIMO3 benchmarks, two epochs; `text(i)` fills
    every field that comes from a config, a data file or a provider."""
    rows = []
    models = [("prov/a", text(0)), (f"prov/{text(1)}", text(2)), ("mock/c", text(3))]
    for m, (model, label) in enumerate(models):
        common = {"model": model, "model_label": label, "provider": text(4),
                  "simulated": model.startswith("mock"), "finished_at": text(16),
                  "settings": {"reasoning_effort": text(5), "temperature": text(6)}}  # fmt: skip
        for epoch in (0, 1):
            for i, status in enumerate(("correct", "incorrect", "error", "incorrect")):
                rows.append(make_row(
                    **common, benchmark="language_understanding", task_id=f"{text(7)}-{i}",
                    status=status, answer=text(8), extracted=text(9 + m % 2),
                    error_kind=text(10), error_message=text(11), category=text(12),
                    difficulty="hard", epoch=epoch,
                ))  # fmt: skip
            for benchmark in ("aimo3_reference", "sample_tools"):
                rows.append(make_row(
                    **common, benchmark=benchmark, task_id=text(13), status="incorrect",
                    answer=text(0), extracted=text(14), epoch=epoch,
                    task_type="tool_calling" if benchmark == "sample_tools" else "single_turn",
                    tool_calls=[ToolCallRecord(id="c", name="python_exec", arguments="{}",
                                               error=text(15))],
                ))  # fmt: skip
    return rows


def _report(text: Callable[[int], str]) -> str:
    stop = StopNote(text(1), "budget", text(2), text(3), text(4))
    plan = RunPlan({text(5): {"language_understanding": 4}}, [stop])
    return render_report(
        _rows(text),
        title=text(6),
        chart_paths={"language-accuracy": CHART},
        expected_tasks={"language_understanding": 5},
        provenance={"git_commit": text(7), "suite_version": text(8)},
        prices={"prov/a": text(9)},
        plan=plan,
    )


def _attack(i: int) -> str:
    return ATTACKS[i % len(ATTACKS)]


def _plain(i: int) -> str:
    return f"plain text {i}"


def _as_html(markdown: str) -> PageParts:
    """The report as a permissive renderer shows it: CommonMark with raw HTML allowed, GFM
    tables and strikethrough."""
    renderer = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    return parse_html(renderer.render(markdown))


@pytest.fixture(scope="module")
def hostile() -> PageParts:
    return _as_html(_report(_attack))


def test_quoted_markup_makes_no_element(hostile: PageParts) -> None:
    assert "script" not in hostile.tags and "a" not in hostile.tags
    assert not hostile.handler_attributes()
    images = [dict(e.attrs).get("src") for e in hostile.elements if e.tag == "img"]
    assert images == [CHART]


def test_elements_are_those_of_a_report_with_plain_text(hostile: PageParts) -> None:
    plain = _as_html(_report(_plain))
    assert Counter(hostile.tags) == Counter(plain.tags)


@pytest.mark.parametrize("attack", ATTACKS)
def test_quoted_text_reads_as_it_was(hostile: PageParts, attack: str) -> None:
    assert attack in "".join(hostile.text)
