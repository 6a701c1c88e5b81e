"""Hostile text for the tests that check what the project writes as Markdown, HTML and SVG,
and a parser that lists the elements a page holds."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

HTML_ATTACKS: tuple[str, ...] = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "</script><script src=https://evil.example/x.js></script>",
)
"""Markup a model label, a reply or a server's error text may hold."""

MARKDOWN_ATTACKS: tuple[str, ...] = (
    "![pixel](https://evil.example/p.png)",
    "[click](javascript:alert(1))",
    "`` <img src=x onerror=alert(1)> ``",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "<!-- *open* _em_ ~~gone~~",
    "# heading \\| a|b",
    "1. <b>bold</b>",
    "<https://evil.example/auto>",
)
"""Markdown that would make an image, a link, emphasis or a heading of quoted text."""

ATTACKS: tuple[str, ...] = HTML_ATTACKS + MARKDOWN_ATTACKS


@dataclass
class Element:
    """One start tag: its name and attributes."""

    tag: str
    attrs: tuple[tuple[str, str | None], ...]


class PageParts(HTMLParser):
    """The elements of an HTML page, in order, and its text (script bodies apart)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, tuple(attrs)))
        self._in_script = tag == "script"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, tuple(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        (self.scripts if self._in_script else self.text).append(data)

    @property
    def tags(self) -> list[str]:
        return [element.tag for element in self.elements]

    def handler_attributes(self) -> list[tuple[str, str]]:
        """Every `on...` attribute and every attribute naming a URL off the page."""
        found = []
        for element in self.elements:
            for name, value in element.attrs:
                remote = (value or "").lstrip().lower().startswith(("http:", "https:", "//"))
                if name.startswith("on") or (name in ("src", "href") and remote):
                    found.append((element.tag, f"{name}={value}"))
        return found


def parse_html(page: str) -> PageParts:
    """The elements and text of `page`."""
    parts = PageParts()
    parts.feed(page)
    parts.close()
    return parts
