"""`dvc plots show` writes a page that draws offline: Vega inlined, no script from the web."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from llm_eval.reporting.escape import plot_label
from llm_eval.reporting.metrics import write_plot_data
from llm_eval.reporting.plots_page import PAGE_PATH, page_html, vega_bundle
from tests.conftest import REPO
from tests.pipeline.test_dvc_pipeline import copy_pipeline, dvc
from tests.support.markup import ATTACKS, parse_html
from tests.support.rows import make_row

REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc\s*=\s*[\"']?(https?:)?//", re.I)


def shown_page(tmp_path: Path, labels: Sequence[str] = ()) -> str:
    """`dvc plots show` in a copy of the pipeline holding the committed plots data, or the
    plots data the report stage writes for models with `labels`."""
    repo = copy_pipeline(tmp_path / "llm-eval")
    for name in [
        "results/plots/models.json",
        *(f"docs/images/{p.name}" for p in (REPO / "docs/images").glob("*.svg")),
    ]:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, repo / name)
    if labels:
        rows = [make_row(model=f"m{i}", model_label=label) for i, label in enumerate(labels)]
        write_plot_data(repo / "results/plots/models.json", rows)
    dvc(repo, "plots", "show", "--out", "shown")
    return (repo / "shown" / "index.html").read_text(encoding="utf-8")


def test_plots_page_inlines_vega_and_loads_no_script_from_the_web(tmp_path: Path) -> None:
    page = shown_page(tmp_path)
    assert not REMOTE_SCRIPT.search(page), "a <script> loads from the web"
    assert "cdn.jsdelivr.net" not in page
    assert "window.vegaEmbed=" in page  # the inlined bundle defines what the divs call
    assert page.count("vegaEmbed('#") == 3  # the three data plots of dvc.yaml
    assert "{plot_divs}" not in page and "{scripts}" not in page


def test_a_label_holding_markup_adds_no_element_or_script_to_the_page(tmp_path: Path) -> None:
    """A label's `</script>` cannot end the data block DVC writes it into, nor a `<!--`
    swallow the page: the page has the elements of the page of plain labels."""
    plain = parse_html(shown_page(tmp_path / "plain"))
    hostile = parse_html(shown_page(tmp_path / "hostile", ATTACKS))
    assert hostile.tags == plain.tags
    scripts = [dict(e.attrs) for e in hostile.elements if e.tag == "script"]
    assert len(scripts) == 4 and not any("src" in attrs for attrs in scripts)
    assert not hostile.handler_attributes()
    data = "".join(hostile.scripts)
    assert all(json.dumps(plot_label(label)) in data for label in ATTACKS)


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to run the page's script")
def test_plots_page_library_script_runs_with_no_network(tmp_path: Path) -> None:
    """The page's first script, run in node (no DOM, no network), defines the `vegaEmbed`
    that each of DVC's plot divs calls."""
    page = shown_page(tmp_path)
    library = re.findall(r"<script[^>]*>(.*?)</script>", page, flags=re.S)[0]
    program = f"globalThis.window = globalThis;\n{library}\nconsole.log(typeof vegaEmbed);\n"
    (tmp_path / "library.js").write_text(program, encoding="utf-8")
    done = subprocess.run(
        ["node", str(tmp_path / "library.js")], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "function"


@pytest.mark.slow
def test_committed_page_is_the_one_the_installed_vl_convert_writes() -> None:
    committed = (REPO / PAGE_PATH).read_text(encoding="utf-8")
    assert committed == page_html(vega_bundle()), (
        f"{PAGE_PATH} is stale: run `{sys.executable} -m llm_eval.reporting.plots_page`"
    )


def test_page_refuses_a_bundle_that_would_end_its_script_tag() -> None:
    with pytest.raises(ValueError, match="</script"):
        page_html("var a = '</script>';")
    with pytest.raises(ValueError, match="placeholder"):
        page_html("var a = '{plot_divs}';")
