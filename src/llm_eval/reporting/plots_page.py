"""The HTML page `dvc plots show` and `dvc plots diff` fill, with Vega inlined.

DVC's own page loads Vega, Vega-Lite and Vega-Embed from a CDN, so offline its plots stay
blank. This page carries the three libraries itself (vl-convert ships them as one bundle).
DVC replaces `{plot_divs}` with the plots and `{scripts}` with its CDN `<script>` tags: the
page has no `{scripts}`, so those tags are dropped. `.dvc/config` points `plots.html_template`
at the file; `python -m llm_eval.reporting.plots_page` writes it again after a vl-convert
upgrade.
"""

from __future__ import annotations

import sys
from pathlib import Path

PAGE_PATH = Path(".dvc/plots-page.html")
"""Where the page lives, relative to the repository root (`.dvc/config` names it)."""

VEGA_LITE_VERSION = "5.21"
"""The Vega-Lite of DVC's plot templates (their `$schema` is Vega-Lite v5)."""

DVC_PLACEHOLDERS = ("{plot_divs}", "{scripts}", "{refresh_tag}")

PAGE = """<!DOCTYPE html>
<html>
<head>
    <meta charset="utf-8">
    {refresh_tag}
    <title>DVC Plot</title>
    <!-- Vega, Vega-Lite and Vega-Embed, inlined so the page works with no network. -->
    <script type="text/javascript">
(function () {
BUNDLE
})();
    </script>
    <style>
        table {
            border-spacing: 15px;
        }
    </style>
</head>
<body>
    {plot_divs}
</body>
</html>
"""


def vega_bundle() -> str:
    """Vega, Vega-Lite and Vega-Embed as one script that sets `window.vegaEmbed`."""
    import vl_convert

    # No snippet: vl-convert's default one publishes `window.vegaEmbed` (its stub types the
    # argument as required, the function does not).
    bundle = vl_convert.javascript_bundle(None, vl_version=VEGA_LITE_VERSION)  # type: ignore[arg-type]
    return str(bundle)


def page_html(bundle: str) -> str:
    """The page around `bundle`; refuses a bundle that would break out of its script tag or
    that DVC would fill in as if it were one of its placeholders."""
    if "</script" in bundle.lower():
        raise ValueError("the Vega bundle contains '</script': it cannot be inlined")
    clashes = [p for p in DVC_PLACEHOLDERS if p in bundle]
    if clashes:
        raise ValueError(f"the Vega bundle contains DVC's placeholder {clashes[0]}")
    # The bundle's top-level names stay inside a function, clear of the `var spec` that
    # each of DVC's plot divs declares; it publishes what the divs call on `window`.
    return PAGE.replace("BUNDLE", bundle)


def write_page(root: Path) -> Path:
    """Write the page under `root` (a repository); returns its path."""
    path = root / PAGE_PATH
    path.write_text(page_html(vega_bundle()), encoding="utf-8")
    return path


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path.cwd()
    print(f"wrote {write_page(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
