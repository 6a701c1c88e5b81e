"""Quote outside text as text in what a browser shows: the Markdown report and plot data.

Model labels, replies, expected answers, server error messages, task ids, categories and
settings come from configs, data files and providers. The report renders them as text
(never as HTML, a link, an image or emphasis), whatever Markdown renderer shows it, and
the plot data DVC inlines in its page's `<script>` blocks can neither close nor open one.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any
from urllib.parse import quote

_MARKDOWN_PUNCTUATION = re.compile(r"[\\`*|~]")
"""Characters that start inline Markdown anywhere in a line (code, emphasis, strikethrough)
or split a table cell; each gets a backslash."""

_FLANKING_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
"""An `_` not between two letters or digits: only these can open or close emphasis, so
`language_understanding` stays as typed."""

_LINK_BRACKET = re.compile(r"\](?=[(\[:]|$)")
"""A `]` that makes a link, an image or a link definition: before `(`, `[` or `:`, or last
(the report's own text follows it). `[A]` in a name stays as typed."""

_CHARACTER_REFERENCE = re.compile(
    r"&(?=#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{1,31};)"
)
"""An `&` that a renderer would decode with what follows (`&lt;`); `R&D` stays as typed."""

_BLOCK_START = re.compile(r"^(?:[#+\-=\[]|\d{1,9}(?=[.)]))")
"""What turns the start of a list item into a heading, a nested list, a rule or a task
checkbox."""

_TABLE_PIPE = re.compile(r"(?<!\\)((?:\\\\)*)\|")
"""A `|` after an even number of backslashes: GFM splits the table row there."""

_BACKTICK_RUN = re.compile(r"`+")

PLOT_LESS_THAN = "\u2039"
"""What `<` becomes in a plot label: `‹`, so no label holds `</script` or `<!--`."""


def plain(value: Any, cap: int | None = None) -> str:
    """`value` as one line: None or NaN empty, whitespace runs folded to one space (a
    newline would end a table row or a list item), cut to `cap` characters with `…`."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    text = " ".join(str(value).split())
    if cap is not None and len(text) > cap:
        text = text[: cap - 1] + "…"
    return text


def md_text(value: Any, cap: int | None = None) -> str:
    """Markdown that renders as `value`'s text: `<`, `>` (and an `&` that would start an
    entity) as entities, which every renderer decodes and none reads as markup; inline
    punctuation backslash-escaped; a leading `#`, `-`, `+`, `=`, `[` or `1.` escaped so a list
    item cannot become a heading or a checkbox."""
    text = _CHARACTER_REFERENCE.sub("&amp;", plain(value, cap))
    text = text.replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKDOWN_PUNCTUATION.sub(lambda m: "\\" + m.group(0), text)
    text = _FLANKING_UNDERSCORE.sub(r"\\_", text)
    text = _LINK_BRACKET.sub(r"\\]", text)
    match = _BLOCK_START.match(text)
    if match is None:
        return text
    if match.group(0)[0].isdigit():
        end = match.end()
        return f"{text[:end]}\\{text[end:]}"
    return "\\" + text


def md_code(value: Any, cap: int | None = None) -> str:
    """A code span holding `value` verbatim (`—` when empty): nothing inside a code span is
    markup, and its fence is one backtick longer than the longest run inside."""
    text = plain(value, cap)
    if not text:
        return "—"
    fence = "`" * (max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0) + 1)
    if text.startswith("`") or text.endswith("`"):
        text = f" {text} "  # the renderer strips one space each side
    return f"{fence}{text}{fence}"


def html_text(value: Any, cap: int | None = None) -> str:
    """Text inside raw HTML the report writes (`<summary>`): entities only, as HTML reads
    no Markdown escape."""
    return html.escape(plain(value, cap), quote=True)


def table_cell(markdown: str) -> str:
    """Markdown made safe as one GFM table cell: on one line, every `|` escaped.

    Text from `md_text` is unchanged (its pipes are escaped already); inside a code span GFM
    removes the backslash again, so the span still shows `|`. (GFM cannot show an odd run of
    backslashes before a `|` in a cell's code span: it shows one backslash fewer.)"""
    return _TABLE_PIPE.sub(r"\1\\|", " ".join(markdown.split()))


def md_url(path: str) -> str:
    """A relative path as a link destination: all but letters, digits, `/`, `.`, `-`,
    `_` and `~` percent-encoded (a space, `)` or `>` would end it early)."""
    return quote(path, safe="/")


def json_for_html(data: Any) -> str:
    """Pretty, key-sorted JSON whose strings hold no `<`, `>` or `&` (written `\\u003c`, ...)
    nor JavaScript line breaks, so it may be inlined in an HTML `<script>` as it is."""
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)
    # Outside strings JSON has none of these characters, so replacing them in the whole
    # text escapes them inside strings only.
    for char in "<>&\u2028\u2029":
        text = text.replace(char, f"\\u{ord(char):04x}")
    return text + "\n"


def plot_label(label: str) -> str:
    """A label for plot data that DVC inlines in a page: `<` becomes `‹`.

    DVC writes the data into `<script>` blocks with `json.dumps`, which keeps `<`: a label's
    `</script>` would end the block and the rest would run as the page's own HTML."""
    return label.replace("<", PLOT_LESS_THAN)
