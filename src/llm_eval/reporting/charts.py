"""SVG charts of a run, drawn with Altair and rendered offline by vl-convert (no browser).

The same rows always give byte-identical files: data are sorted, sort orders are explicit,
the charts are rendered in one fixed order, and vl-convert's per-process gradient ids are
renumbered per file. altair and vl_convert load inside the functions that use them.

Where scorers left rows unsure, each accuracy chart draws the band the accuracy could move in
(all unsure rows wrong .. all right) as a lighter bar or rule past the sure accuracy, and its
label gives the band; without unsure rows the charts are drawn as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from llm_eval.reporting import tables as tb
from llm_eval.reporting.md_format import fmt_band
from llm_eval.reporting.statistics import percentile

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

    from llm_eval.schemas import TraceRow

CHART_NAMES: tuple[str, ...] = (
    "language-accuracy",
    "language-latency",
    "aimo3-accuracy",
    "benchmark-heatmap",
    "accuracy-cost",
    "accuracy-latency",
)
"""Charts in the order they are rendered; each is written as `<name>.svg`."""

BAR_STEP = 30
"""Pixels per horizontal bar (or per bar group slot)."""

OFFSET_STEP = 16
"""Pixels per bar inside a group of grouped bars (latency, AIMO3 modes)."""

PLOT_WIDTH = 460
"""Width of the value axis of the bar charts, in pixels."""

LABEL_WRAP = 20
"""Longest line, in characters, of a wrapped model label on the heatmap's x axis."""

SIMULATED = " (simulated)"

MODE_COLOURS = ["#4c78a8", "#f58518", "#54a24b"]
"""Bar colours of the AIMO3 modes, in mode order."""

BAND_COLOUR = "#a6cbe8"
"""The lighter blue of the unsure band, beside the bars' #4c78a8."""

BAND_NOTE = "light: the band if every unsure row were right"


def render_charts(rows: Sequence[TraceRow], out_dir: Path) -> dict[str, Path]:
    """Write the run's SVG charts into `out_dir`; return chart name -> written path.

    A chart whose data are absent (no language_understanding or no AIMO3 rows) is skipped
    and left out of the result, so callers embed only the charts that exist.
    """
    import vl_convert

    frame = tb.rows_frame(rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name, build in _builders().items():
        chart = build(frame) if not frame.empty else None
        if chart is None:
            continue
        path = out_dir / f"{name}.svg"
        svg = _stable_ids(vl_convert.vegalite_to_svg(chart.to_json()))
        path.write_text(svg, encoding="utf-8")
        written[name] = path
    return written


def _stable_ids(svg: str) -> str:
    """Renumber vl-convert's gradient ids by first appearance in this SVG.

    vl-convert counts gradient ids up across one process, so without this the second
    rendering of a heatmap in a process would differ from the first.
    """
    import re

    mapping: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return mapping.setdefault(match.group(0), f"gradient_{len(mapping)}")

    return re.sub(r"\bgradient_\d+\b", rename, svg)


def _builders() -> dict[str, Callable[[pd.DataFrame], alt.TopLevelMixin | None]]:
    """Chart name -> builder, in the fixed render order."""
    return {
        "language-accuracy": language_accuracy_chart,
        "language-latency": language_latency_chart,
        "aimo3-accuracy": aimo3_accuracy_chart,
        "benchmark-heatmap": benchmark_heatmap_chart,
        "accuracy-cost": accuracy_cost_chart,
        "accuracy-latency": accuracy_latency_chart,
    }


# --------------------------------------------------------------------------- charts


def language_accuracy_chart(frame: pd.DataFrame) -> alt.TopLevelMixin | None:
    """Accuracy per model on language_understanding, with Wilson interval bars."""
    import altair as alt

    data = tb.accuracy_table(frame[frame["benchmark"] == tb.LANGUAGE_BENCHMARK], ["display"])
    if data.empty:
        return None
    data = _with_labels(data.sort_values("display"))
    models = data["display"].tolist()
    base = alt.Chart(data).encode(y=_model_axis(models))
    x = alt.X("strict_accuracy:Q", title="Accuracy (correct / total)", scale=_unit_scale(),
              axis=alt.Axis(format="%", grid=True))  # fmt: skip
    bars = base.mark_bar(color="#4c78a8", height=BAR_STEP * 0.6).encode(
        x=x, tooltip=["display", "text"]
    )
    band = _band_layers(data, lambda d: _band_bars(d, models, BAR_STEP * 0.6))
    interval = base.mark_rule(color="#222", strokeWidth=2).encode(x="strict_lo:Q", x2="strict_hi:Q")
    caps = _interval_caps(base)
    text = base.mark_text(align="left", dx=6, fontSize=11).encode(x=_label_x(band), text="text:N")
    subtitle = _band_subtitle(data, "Black lines: 95% Wilson interval")
    title = _title("Language understanding: accuracy per model", subtitle)
    layers = alt.layer(bars, *band, interval, *caps, text)
    return _finish(layers.properties(title=title, width=PLOT_WIDTH, height=_bars_height()))


def language_latency_chart(frame: pd.DataFrame) -> alt.TopLevelMixin | None:
    """p50 and p95 latency per model on language_understanding, as grouped bars."""
    import altair as alt

    data = _latency_data(frame[frame["benchmark"] == tb.LANGUAGE_BENCHMARK])
    if data is None:
        return None
    models = sorted(data["display"].unique().tolist())
    stats = ["p50", "p95"]
    base = alt.Chart(data).encode(
        y=_model_axis(models),
        yOffset=alt.YOffset("statistic:N", sort=stats),
        x=alt.X("seconds:Q", title="Latency per task (seconds)", axis=alt.Axis(grid=True)),
    )
    bars = base.mark_bar().encode(
        color=alt.Color("statistic:N", sort=stats, title="Statistic", legend=_top_legend(),
                        scale=alt.Scale(domain=stats, range=["#4c78a8", "#f58518"])),
        tooltip=["display", "statistic", "seconds"],
    )  # fmt: skip
    text = base.mark_text(align="left", dx=4, fontSize=10).encode(text="text:N")
    title = _title("Language understanding: latency per model", "Answered rows only")
    chart = alt.layer(bars, text).properties(
        title=title, width=PLOT_WIDTH, height=_bars_height(len(stats))
    )
    return _finish(chart)


def aimo3_accuracy_chart(frame: pd.DataFrame) -> alt.TopLevelMixin | None:
    """AIMO3 accuracy per model in each mode (single turn, multi-round, Python tools)."""
    import altair as alt

    subset = frame[frame["benchmark"].isin(list(tb.AIMO3_MODES))]
    if subset.empty:
        return None
    data = tb.accuracy_table(subset, ["display", "benchmark"])
    data = _with_labels(data.assign(mode=data["benchmark"].map(tb.AIMO3_MODES)))
    data = data.sort_values(["display", "benchmark"])
    models, modes = sorted(data["display"].unique().tolist()), list(tb.AIMO3_MODES.values())
    base = alt.Chart(data).encode(
        y=_model_axis(models),
        yOffset=alt.YOffset("mode:N", sort=modes),
        x=alt.X("strict_accuracy:Q", title="Accuracy (correct / total)", scale=_unit_scale(),
                axis=alt.Axis(format="%", grid=True)),
    )  # fmt: skip
    bars = base.mark_bar().encode(
        color=alt.Color("mode:N", sort=modes, title="Mode", legend=_top_legend(),
                        scale=alt.Scale(domain=modes, range=MODE_COLOURS)),
        tooltip=["display", "mode", "text"],
    )  # fmt: skip
    band = _band_layers(data, lambda d: _aimo3_band(d, models, modes))
    interval = base.mark_rule(color="#222", strokeWidth=1.5).encode(
        x="strict_lo:Q", x2="strict_hi:Q"
    )
    text = base.mark_text(align="left", dx=4, fontSize=10).encode(x=_label_x(band), text="text:N")
    height = _bars_height(len(modes))
    subtitle = "Same 10 problems in each mode; black lines: 95% Wilson interval"
    title = _title("AIMO3 reference problems: accuracy by mode", _band_subtitle(data, subtitle))
    layers = alt.layer(bars, *band, interval, text)
    chart = layers.properties(title=title, width=PLOT_WIDTH, height=height)
    return _finish(chart)


def benchmark_heatmap_chart(frame: pd.DataFrame) -> alt.TopLevelMixin | None:
    """Benchmark x model grid: colour is accuracy, text is correct / total."""
    import altair as alt

    data = tb.benchmark_table(frame)
    cells = zip(data["correct"], data["total"], data["strict_lo"], data["strict_hi"], strict=True)
    data = data.assign(
        text=[f"{int(c)}/{int(t)} [{100 * lo:.0f}–{100 * hi:.0f}%]" for c, t, lo, hi in cells]
    )
    # A cell with unsure rows gets a second line: its band, in whole percent like the first.
    bands = zip(data["unsure"], data["strict_accuracy"], data["strict_high"], strict=True)
    data["band"] = [
        f"{100 * low:.0f}–{100 * high:.0f}%: {int(u)} unsure" if u else "" for u, low, high in bands
    ]
    has_band = bool((data["band"] != "").any())
    data = data.sort_values(["display", "benchmark"])[
        ["display", "benchmark", "strict_accuracy", "text", "band"]
    ]
    models = sorted(data["display"].unique().tolist())
    benchmarks = tb.ordered_benchmarks(data["benchmark"])
    step = _column_step(models)
    base = alt.Chart(data).encode(
        x=alt.X("display:N", sort=models, title="Model",
                axis=alt.Axis(orient="bottom", labelAngle=0, labelExpr=_wrapped_label_expr(models),
                              labelLimit=step, labelFontSize=11)),
        y=alt.Y("benchmark:N", sort=benchmarks, title="Benchmark",
                axis=alt.Axis(labelLimit=320, labelFontSize=11)),
    )  # fmt: skip
    cells = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("strict_accuracy:Q", title="Accuracy", scale=alt.Scale(domain=[0, 1],
                        scheme="blues"), legend=alt.Legend(format="%")),
        tooltip=["display", "benchmark", "text", *(["band"] if has_band else [])],
    )  # fmt: skip
    ink = alt.condition("datum.strict_accuracy > 0.6", alt.value("white"), alt.value("black"))
    if has_band:
        texts = [
            base.transform_filter("datum.band == ''").mark_text(fontSize=12)
            .encode(text="text:N", color=ink),
            base.transform_filter("datum.band != ''").mark_text(fontSize=12, dy=-8)
            .encode(text="text:N", color=ink),
            base.transform_filter("datum.band != ''").mark_text(fontSize=11, dy=8)
            .encode(text="band:N", color=ink),
        ]  # fmt: skip
    else:
        texts = [base.mark_text(fontSize=12).encode(text="text:N", color=ink)]
    chart = alt.layer(cells, *texts).properties(
        title=_title(
            "Accuracy per benchmark and model",
            "Cell text: correct / total rows [95% Wilson interval]"
            + ("; below: the band from the unsure rows" if has_band else ""),
        ),
        width=alt.Step(step),
        height=alt.Step(48 if has_band else 34),
    )
    return _finish(chart)


def accuracy_cost_chart(frame: pd.DataFrame) -> alt.TopLevelMixin | None:
    """Whole-suite strict accuracy (with interval) against the run's cost, one point per model."""
    data = _tradeoff_data(frame)
    known = data[data["cost_usd"].notna()]
    unknown = sorted(set(data["display"]) - set(known["display"]))
    note = f"Cost unknown, not drawn: {', '.join(unknown)}" if unknown else "Whole suite"
    return _tradeoff_chart(known, "cost_usd", "Cost of the run (USD)", "Accuracy vs cost", note)


def accuracy_latency_chart(frame: pd.DataFrame) -> alt.TopLevelMixin | None:
    """Whole-suite strict accuracy (with interval) against p50 latency, one point per model."""
    data = _tradeoff_data(frame)
    data = data[data["p50"].notna()]
    return _tradeoff_chart(
        data, "p50", "p50 latency per task (seconds)", "Accuracy vs latency", "Whole suite"
    )


def _tradeoff_data(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model: strict accuracy with its interval, total cost and p50 latency (the
    full-suite summary table's numbers)."""
    return _with_labels(tb.model_table(frame).sort_values("display"))


def _tradeoff_chart(
    data: pd.DataFrame, x_field: str, x_title: str, heading: str, subtitle: str
) -> alt.TopLevelMixin:
    """Accuracy (y, with interval bars) against `x_field`, each point labelled by model."""
    import altair as alt

    base = alt.Chart(data).encode(
        x=alt.X(f"{x_field}:Q", title=x_title, scale=alt.Scale(zero=True),
                axis=alt.Axis(grid=True)),
    )  # fmt: skip
    y = alt.Y("strict_accuracy:Q", title="Accuracy (correct / total)", scale=_unit_scale(),
              axis=alt.Axis(format="%", grid=True))  # fmt: skip
    band = _band_layers(data, lambda d: _tradeoff_band(d, x_field))
    interval = base.mark_rule(color="#222", strokeWidth=1.5).encode(
        y=alt.Y("strict_lo:Q", scale=_unit_scale()), y2="strict_hi:Q"
    )
    points = base.mark_point(filled=True, size=80, color="#4c78a8").encode(
        y=y, tooltip=["display", "text"]
    )
    labels = base.mark_text(align="left", dx=8, fontSize=11).encode(y=y, text="display:N")
    title = _title(heading, _band_subtitle(data, f"{subtitle}; black lines: 95% Wilson interval"))
    layers = alt.layer(*band, interval, points, labels)
    return _finish(layers.properties(title=title, width=PLOT_WIDTH, height=300))


# --------------------------------------------------------------------------- helpers


def _with_labels(data: pd.DataFrame) -> pd.DataFrame:
    """Add a `text` column, `85.2% (92/108)` and its band when rows are unsure, and where it
    goes (`label_x`: past the interval and the band)."""
    columns = ("strict_accuracy", "correct", "total", "unsure", "strict_high")
    text = [
        f"{100 * a:.1f}% ({int(c)}/{int(t)})" + (f", {_band_text(u, a, high)}" if u else "")
        for a, c, t, u, high in zip(*(data[c] for c in columns), strict=True)
    ]
    label_x = [
        max(hi, high) for hi, high in zip(data["strict_hi"], data["strict_high"], strict=True)
    ]
    return data.assign(text=text, label_x=label_x)


def _label_x(band: list[alt.Chart]) -> str:
    """Where bar labels start: past the interval, and past the band when one is drawn."""
    return "label_x:Q" if band else "strict_hi:Q"


def _band_text(unsure: int, low: float, high: float) -> str:
    """`58.0–78.0% with 10 unsure`: the band in the report's format."""
    return f"{fmt_band(low, high)} with {int(unsure)} unsure"


def _band_subtitle(data: pd.DataFrame, subtitle: str) -> str:
    """The subtitle, naming the light band when some group here has unsure rows."""
    return f"{subtitle}; {BAND_NOTE}" if int(data["unsure"].sum()) else subtitle


def _band_layers(data: pd.DataFrame, draw: Callable[[pd.DataFrame], alt.Chart]) -> list[alt.Chart]:
    """The band layer drawn from the groups with unsure rows, or none: a chart without
    unsure rows stays exactly as it was."""
    unsure = data[data["unsure"].astype(int) > 0]
    return [draw(unsure)] if not unsure.empty else []


def _band_bars(data: pd.DataFrame, models: list[str], height: float) -> alt.Chart:
    """Light bars from the sure accuracy to the accuracy were every unsure row right."""
    import altair as alt

    bars: alt.Chart = alt.Chart(data).mark_bar(color=BAND_COLOUR, height=height).encode(
        y=_model_axis(models), x="strict_accuracy:Q", x2="strict_high:Q",
        tooltip=["display", "text"],
    )  # fmt: skip
    return bars


def _aimo3_band(data: pd.DataFrame, models: list[str], modes: list[str]) -> alt.Chart:
    """The band of each mode's bar, in the mode's colour, lighter."""
    import altair as alt

    bars: alt.Chart = alt.Chart(data).mark_bar(opacity=0.35).encode(
        y=_model_axis(models),
        yOffset=alt.YOffset("mode:N", sort=modes),
        x="strict_accuracy:Q",
        x2="strict_high:Q",
        color=alt.Color("mode:N", sort=modes, legend=None,
                        scale=alt.Scale(domain=modes, range=MODE_COLOURS)),
    )  # fmt: skip
    return bars


def _tradeoff_band(data: pd.DataFrame, x_field: str) -> alt.Chart:
    """A wide light rule from a model's sure accuracy up to the top of its band."""
    import altair as alt

    rule: alt.Chart = alt.Chart(data).mark_rule(color=BAND_COLOUR, strokeWidth=8).encode(
        x=f"{x_field}:Q", y=alt.Y("strict_accuracy:Q", scale=_unit_scale()), y2="strict_high:Q"
    )  # fmt: skip
    return rule


def _latency_data(subset: pd.DataFrame) -> pd.DataFrame | None:
    """Long-form p50/p95 latency per model, or None without any answered row."""
    import pandas as pd

    answered = subset[(subset["status"] != "error") & subset["latency_s"].notna()]
    if answered.empty:
        return None
    records = []
    for display, group in answered.groupby("display", sort=True):
        values = group["latency_s"].astype(float).tolist()
        for statistic, q in (("p50", 50), ("p95", 95)):
            seconds = percentile(values, q)
            records.append({"display": display, "statistic": statistic, "seconds": seconds,
                            "text": f"{seconds:.2f} s"})  # fmt: skip
    return pd.DataFrame.from_records(records)


def _model_axis(models: list[str]) -> alt.Y:
    """The model (y) axis of the bar charts, in the given order, never clipped.

    No axis title: the labels are model names, and a title can collide with a long label.
    """
    import altair as alt

    return alt.Y("display:N", sort=models, title=None,
                 axis=alt.Axis(labelLimit=400, labelFontSize=11))  # fmt: skip


def _unit_scale() -> alt.Scale:
    """A fixed 0-100% axis, so charts of different runs compare at a glance."""
    import altair as alt

    return alt.Scale(domain=[0, 1.0], nice=False)


def _interval_caps(base: alt.Chart) -> list[alt.Chart]:
    """Short vertical ticks at both ends of the interval lines."""
    return [
        base.mark_tick(color="#222", thickness=2, size=BAR_STEP * 0.45).encode(x=f"{end}:Q")
        for end in ("strict_lo", "strict_hi")
    ]


def _bars_height(per_model: int = 1) -> alt.Step:
    """Chart height as a band step; with an offset channel the step is per offset slot."""
    import altair as alt

    return alt.Step(BAR_STEP if per_model == 1 else OFFSET_STEP)


def _column_step(models: list[str]) -> int:
    """Heatmap column width wide enough for the longest wrapped label line."""
    longest = max((len(line) for m in models for line in _label_lines(m)), default=10)
    return max(130, 7 * longest + 16)


def _label_lines(label: str) -> list[str]:
    """A model label word-wrapped to short lines, `(simulated)` on a line of its own."""
    import textwrap

    simulated = label.endswith(SIMULATED)
    base = label[: -len(SIMULATED)] if simulated else label
    lines = textwrap.wrap(base, LABEL_WRAP, break_long_words=False) or [base]
    return [*lines, SIMULATED.strip()] if simulated else lines


def _wrapped_label_expr(models: list[str]) -> str:
    """Vega expression drawing each model label on its wrapped lines (a JSON lookup)."""
    import json

    lines = {model: _label_lines(model) for model in models}
    return f"{json.dumps(lines, ensure_ascii=False, sort_keys=True)}[datum.label]"


def _top_legend() -> alt.Legend:
    """A horizontal legend above the plot: value labels past the last bar never hit it."""
    import altair as alt

    return alt.Legend(orient="top", direction="horizontal", titleOrient="left")


def _title(text: str, subtitle: str) -> alt.TitleParams:
    """A left-aligned chart title with a subtitle."""
    import altair as alt

    return alt.TitleParams(text, subtitle=subtitle, anchor="start", fontSize=15)


def _finish(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """Common look: white background, padding, readable axis titles, and every text in the
    one font vl-convert measures it in (`chart_fonts`)."""
    from llm_eval.reporting.chart_fonts import chart_font

    finished: alt.TopLevelMixin = (
        chart.configure(background="white", padding=12, font=chart_font())
        .configure_axis(titleFontSize=12, labelColor="#222", titleColor="#222")
        .configure_view(stroke=None)
    )
    return finished
