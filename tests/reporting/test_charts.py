"""SVG charts: valid XML, labelled with the models, byte-identical across processes."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from llm_eval.reporting.charts import CHART_NAMES
from llm_eval.schemas import TraceRow
from tests.support.markup import HTML_ATTACKS
from tests.support.rows import make_row
from tests.support.suite import SUITE_COUNTS as SUITE

# Each test renders through vl-convert, several in fresh processes: about two minutes on a
# loaded 2-core machine, so they run with the slow tests (`.ci/run`), not in a plain `pytest`.
pytestmark = pytest.mark.slow

MODELS = [("real/one", "Real One", False, 6), ("mock/two", "Mock Two", True, 3)]
LABELS = ["Real One", "Mock Two (simulated)"]

RENDER = """
import sys
from pathlib import Path
from llm_eval.reporting.charts import render_charts
from llm_eval.schemas import TraceRow
lines = Path(sys.argv[1]).read_text(encoding="utf-8").splitlines()
render_charts([TraceRow.model_validate_json(line) for line in lines], Path(sys.argv[2]))
"""


def _row(model: str, label: str, simulated: bool, benchmark: str, i: int, status: str) -> TraceRow:
    """One synthetic row; the first language task of the mock model is an error."""
    return make_row(
        model=model, model_label=label, provider="mock" if simulated else "litellm",
        simulated=simulated, benchmark=benchmark, task_id=f"t{i:03d}", category=f"c{i % 8}",
        answer=str(i), extracted=str(i), scorer="numeric", messages=[], status=status,
        error_message="slow", latency_s=None if status == "error" else 0.2 + (i % 7) / 10,
    )  # fmt: skip


def _rows() -> list[TraceRow]:
    """Both models over the whole suite, in a scrambled order (rendering must not care)."""
    rows = []
    for model, label, simulated, wrong_every in MODELS:
        for benchmark, count in SUITE.items():
            for i in range(count):
                status = "incorrect" if i % wrong_every == 0 else "correct"
                if simulated and benchmark == "language_understanding" and i == 0:
                    status = "error"
                rows.append(_row(model, label, simulated, benchmark, i, status))
    return rows[1::2] + rows[::2]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Render the same rows in two fresh processes; return both output directories."""
    base = tmp_path_factory.mktemp("charts")
    source = base / "rows.jsonl"
    source.write_text("\n".join(r.model_dump_json() for r in _rows()), encoding="utf-8")
    outs = (base / "first", base / "second")
    for out in outs:
        subprocess.run([sys.executable, "-c", RENDER, str(source), str(out)], check=True,
                       timeout=120)  # fmt: skip
    return outs


def test_all_four_charts_written(rendered: tuple[Path, Path]) -> None:
    names = sorted(p.name for p in rendered[0].iterdir())
    assert names == sorted(f"{name}.svg" for name in CHART_NAMES)


@pytest.mark.parametrize("name", CHART_NAMES)
def test_svg_is_valid_and_labelled(rendered: tuple[Path, Path], name: str) -> None:
    path = rendered[0] / f"{name}.svg"
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert float(root.attrib["width"]) > 400 and float(root.attrib["height"]) > 100
    text = path.read_text(encoding="utf-8")
    for label in LABELS:
        assert label in text, (name, label)


@pytest.mark.parametrize("name", CHART_NAMES)
def test_byte_identical_across_processes(rendered: tuple[Path, Path], name: str) -> None:
    first, second = ((out / f"{name}.svg").read_bytes() for out in rendered)
    assert first == second


def test_charts_without_data_are_skipped(tmp_path: Path) -> None:
    from llm_eval.reporting.charts import render_charts

    rows = [_row("real/one", "Real One", False, "sample_math", i, "correct") for i in range(3)]
    written = render_charts(rows, tmp_path)
    assert list(written) == ["benchmark-heatmap", "accuracy-cost", "accuracy-latency"]
    assert all(path.exists() for path in written.values())
    # No row has a cost: the cost chart says so instead of drawing the model at zero.
    assert "Cost unknown, not drawn: Real One" in written["accuracy-cost"].read_text()


def test_same_process_renders_identically(tmp_path: Path) -> None:
    from llm_eval.reporting.charts import render_charts

    rows = _rows()
    first = render_charts(rows, tmp_path / "a")["benchmark-heatmap"].read_bytes()
    second = render_charts(rows, tmp_path / "b")["benchmark-heatmap"].read_bytes()
    assert first == second


def test_the_unsure_band_is_drawn_and_stays_deterministic(tmp_path: Path) -> None:
    from llm_eval.reporting.charts import BAND_COLOUR, render_charts
    from tests.reporting.test_report_band import alpha_rows, beta_rows

    rows = alpha_rows() + beta_rows()  # Alpha: 10 unsure language rows, Beta none
    source = tmp_path / "rows.jsonl"
    source.write_text("\n".join(r.model_dump_json() for r in rows), encoding="utf-8")
    here = render_charts(rows, tmp_path / "here")
    subprocess.run([sys.executable, "-c", RENDER, str(source), str(tmp_path / "there")],
                   check=True, timeout=120)  # fmt: skip
    for name, path in here.items():
        assert path.read_bytes() == (tmp_path / "there" / path.name).read_bytes(), name
    language = here["language-accuracy"].read_text(encoding="utf-8")
    assert f'fill="{BAND_COLOUR}"' in language  # the light bar from 50% to 75%
    assert "50.0% (20/40), 50.0–75.0% with 10 unsure" in language
    assert "80.0% (32/40)<" in language  # Beta: no band, no band text
    assert "light: the band if every unsure row were right" in language
    assert "50–75%: 10 unsure" in here["benchmark-heatmap"].read_text(encoding="utf-8")
    assert f'stroke="{BAND_COLOUR}"' in here["accuracy-latency"].read_text(encoding="utf-8")
    sure = render_charts(beta_rows(), tmp_path / "sure")
    assert not any(BAND_COLOUR in path.read_text(encoding="utf-8") for path in sure.values())
    assert not any("unsure" in path.read_text(encoding="utf-8") for path in sure.values())


def _svg_parts(out: Path) -> tuple[set[str], list[tuple[str, str]], str]:
    """Element names, `on...` attributes and text of every SVG chart in `out`."""
    names: set[str] = set()
    handlers: list[tuple[str, str]] = []
    text: list[str] = []
    for path in sorted(out.glob("*.svg")):
        for element in ET.parse(path).iter():
            names.add(element.tag.rpartition("}")[2])
            handlers += [(element.tag, k) for k in element.attrib if k.lower().startswith("on")]
            text.append(element.text or "")
    return names, handlers, " ".join(text)


def test_a_label_holding_markup_is_text_in_the_svg(tmp_path: Path) -> None:
    from llm_eval.reporting.charts import render_charts

    def rows(labels: list[str]) -> list[TraceRow]:
        return [
            _row(f"m/{i}", label, False, benchmark, t, "correct" if t else "incorrect")
            for i, label in enumerate(labels)
            for benchmark in ("language_understanding", "aimo3_reference")
            for t in range(3)
        ]

    render_charts(rows(list(HTML_ATTACKS)), tmp_path / "hostile")
    plain = [f"a plain label long enough to wrap on the axis {i}" for i in range(3)]
    render_charts(rows(plain), tmp_path / "plain")
    names, handlers, text = _svg_parts(tmp_path / "hostile")
    assert names == _svg_parts(tmp_path / "plain")[0]
    assert not handlers and not names & {"script", "foreignObject", "image", "a"}
    assert all(label in text for label in HTML_ATTACKS)


LONG_LABELS = (
    "Mock flaky and sometimes wrong (simulated)",
    "A model with a long name, high thinking",
)


def _border_ink(png: bytes) -> int:
    """Dark pixels on the image's outer edge: text drawn past the SVG's edge is cut there."""
    import io

    image_module = pytest.importorskip("PIL.Image")
    image = image_module.open(io.BytesIO(png)).convert("L")
    width, height = image.size
    edge = [(x, y) for x in range(width) for y in (0, height - 1)]
    edge += [(x, y) for y in range(height) for x in (0, width - 1)]
    return sum(1 for xy in edge if image.getpixel(xy) < 200)  # type: ignore[operator]


def test_chart_text_fits_in_a_viewer_that_draws_sans_serif_as_dejavu(tmp_path: Path) -> None:
    """A librsvg viewer on Linux draws `sans-serif` as DejaVu Sans, wider than the Liberation
    Sans vl-convert measures by default: the charts name DejaVu Sans and are measured in it,
    so drawn in DejaVu (as such a viewer does) no text runs past the edge."""
    import vl_convert

    from llm_eval.reporting.chart_fonts import CHART_FONT, chart_font
    from llm_eval.reporting.charts import render_charts

    assert chart_font() == CHART_FONT  # DejaVu Sans was found and registered
    rows = [
        _row(f"m/{n}", label, n == 0, benchmark, i, "incorrect" if i % (3 + n) == 0 else "correct")
        for n, label in enumerate(LONG_LABELS)
        for benchmark, count in SUITE.items()
        for i in range(count)
    ]
    for name, path in render_charts(rows, tmp_path).items():
        svg = path.read_text(encoding="utf-8")
        assert 'font-family="sans-serif"' not in svg, name
        as_drawn = svg.replace('font-family="sans-serif"', f'font-family="{CHART_FONT}"')
        assert _border_ink(bytes(vl_convert.svg_to_png(as_drawn))) == 0, name
