"""The one font the SVG charts are laid out in, and the file vl-convert measures it from.

vl-convert lays text out with the fonts it can load, and by default `sans-serif` is its
bundled Liberation Sans (Arial's widths). The SVG then says only `sans-serif`, which a
librsvg viewer on Linux draws in DejaVu Sans, about a seventh wider: value labels ran past
the right edge and long model names past the left one, clipped. So the charts name DejaVu
Sans and vl-convert measures that very font: a viewer with DejaVu draws what was measured,
and one without falls back to a narrower sans-serif, which fits in the same room.

The font file comes from inside the environment (matplotlib's copy of DejaVu Sans, installed
with MLflow and pinned by uv.lock), so every machine measures the same widths and renders
the same bytes; the system's DejaVu folder is the fallback.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

CHART_FONT = "DejaVu Sans"
"""The family every chart text is set in."""

FALLBACK = "sans-serif"
"""What vl-convert's own fonts give when DejaVu Sans cannot be found."""

SYSTEM_DEJAVU = Path("/usr/share/fonts/truetype/dejavu")

_registered: str | None = None


def dejavu_folder() -> Path | None:
    """A folder holding DejaVuSans.ttf: matplotlib's bundled fonts (found without importing
    matplotlib), else the system's DejaVu folder, else None."""
    spec = importlib.util.find_spec("matplotlib")
    packages = (spec.submodule_search_locations or []) if spec is not None else []
    candidates = [Path(folder) / "mpl-data" / "fonts" / "ttf" for folder in packages]
    candidates.append(SYSTEM_DEJAVU)
    return next((c for c in candidates if (c / "DejaVuSans.ttf").is_file()), None)


def chart_font() -> str:
    """Register DejaVu Sans with vl-convert once per process and name it; `sans-serif` if
    there is no DejaVu Sans to register."""
    global _registered
    if _registered is None:
        import vl_convert

        folder = dejavu_folder()
        if folder is not None:
            vl_convert.register_font_directory(str(folder))
        _registered = CHART_FONT if folder is not None else FALLBACK
    return _registered
