"""Outside text quoted in Markdown renders as the same text, wherever the report puts it."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from llm_eval.reporting.escape import (
    html_text,
    json_for_html,
    md_code,
    md_text,
    plain,
    plot_label,
    table_cell,
)
from tests.support.markup import ATTACKS, parse_html

RENDERER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])

# Markdown and HTML punctuation, digits, letters, spaces and a few non-ASCII characters.
TEXT = st.text(alphabet=st.sampled_from("<>&;#!*_`~[]()|\\-+=.:/ aZ09é→\n\t"), max_size=40)


def _rendered(markdown: str) -> tuple[list[str], str]:
    """The element names and text of `markdown` rendered to HTML."""
    parts = parse_html(RENDERER.render(markdown))
    return parts.tags, "".join(parts.text).strip()


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_text_in_a_list_item_renders_as_itself(text: str) -> None:
    tags, shown = _rendered(f"- {md_text(text)} after")
    assert tags == ["ul", "li"]
    assert shown == f"{plain(text)} after".strip()


@settings(max_examples=300, deadline=None)
@given(TEXT, st.sampled_from(["(x)", "[x]", ": x", "]", ""]))
def test_text_right_before_the_reports_own_text_stays_text(text: str, after: str) -> None:
    tags, shown = _rendered(f"{md_text(text)}{after}")
    assert set(tags) <= {"p"}
    assert shown == f"{plain(text)}{after}".strip()


def _cell(markdown: str) -> tuple[list[str], str]:
    """The element names and the cell's text of a one-cell table holding `markdown`."""
    parts = parse_html(RENDERER.render(f"| h |\n|---|\n| {table_cell(markdown)} |"))
    return parts.tags, "".join(t for t in parts.text if t.strip())[1:]


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_text_and_code_in_a_table_cell_render_as_themselves(text: str) -> None:
    table = ["table", "thead", "tr", "th", "tbody", "tr", "td"]
    assert _cell(md_text(text)) == (table, plain(text))
    # GFM keeps only an even run of backslashes before a `|` in a cell: in a code span an
    # odd run shows one backslash fewer.
    code = re.sub(r"(?<!\\)\\((?:\\\\)*)\|", r"\1|", plain(text))
    assert _cell(md_code(text)) == ([*table, "code"] if code else table, code or "—")


def test_a_code_span_fence_outruns_every_backtick_run_inside() -> None:
    assert md_code("a `` b") == "```a `` b```"
    assert md_code("`x`") == "`` `x` ``"
    assert md_code("") == "—" and md_code(None) == "—"
    assert md_code("abcdef", cap=4) == "`abc…`"


def test_block_starts_and_emphasis_are_escaped_and_names_stay_readable() -> None:
    assert md_text("# x") == "\\# x" and md_text("- x") == "\\- x"
    assert md_text("12. x") == "12\\. x" and md_text("3) x") == "3\\) x"
    assert md_text("language_understanding") == "language_understanding"
    assert md_text("_em_ *em*") == "\\_em\\_ \\*em\\*"
    assert md_text("<b>&amp;</b>") == "&lt;b&gt;&amp;amp;&lt;/b&gt;"
    assert md_text("R&D [local] a<b") == "R&D [local] a&lt;b"
    assert md_text("Llama [A]") == "Llama [A\\]"  # the report's text may follow
    assert md_text("[x] y") == "\\[x] y" and md_text("x [a](b)") == "x [a\\](b)"


def test_table_cells_escape_each_unescaped_pipe_once() -> None:
    assert table_cell(md_text("a|b")) == md_text("a|b") == "a\\|b"
    assert table_cell("`a|b`") == "`a\\|b`"
    assert table_cell("`a\\\\|b`") == "`a\\\\\\|b`"  # after two backslashes the pipe splits
    assert table_cell("x\ny") == "x y"


def test_html_text_is_entities_only() -> None:
    assert html_text('<a href="x">\n') == "&lt;a href=&quot;x&quot;&gt;"


def test_json_for_html_holds_no_markup_and_reads_back_the_same() -> None:
    data = [{"model": attack} for attack in ATTACKS] + [{"model": "a\u2028b & c"}]
    text = json_for_html(data)
    assert not any(char in text for char in "<>&\u2028\u2029")
    assert json.loads(text) == data


def test_a_plot_label_holds_no_less_than_sign() -> None:
    assert plot_label("</script><!--") == "\u2039/script>\u2039!--"
