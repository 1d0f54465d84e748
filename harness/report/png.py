"""Every PNG dbperf writes goes through :func:`render_png`: Vega-Lite rendered offline, never wider than
:data:`MAX_WIDTH_PX`.

A picture wider than a screen is scrolled sideways in a pull request, a job summary or an artifact viewer, and
its text is unreadable when a browser shrinks it to fit. Charts are laid out to fit first (wrapped facets,
fixed panel widths); when one still comes out wider, it is rendered again at the scale that makes it
:data:`MAX_WIDTH_PX` wide (docs/reports.md, "Image sizes"). ``tests/unit/test_png_width.py`` checks that no
other module calls vl-convert's PNG renderer.
"""

from __future__ import annotations

import struct
from typing import Any

from harness.errors import ReportError

#: The widest PNG any dbperf command writes, in pixels.
MAX_WIDTH_PX = 2000
_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) in pixels, from the PNG's header chunk."""
    if len(png) < 24 or not png.startswith(_SIGNATURE) or png[12:16] != b"IHDR":
        raise ReportError("not a PNG image (no IHDR header): the chart renderer returned something else")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


def render_png(spec: dict[str, Any], *, scale: float = 1.0, max_width: int = MAX_WIDTH_PX) -> bytes:
    """The chart as a PNG at ``scale``, or at the smaller scale that keeps it ``max_width`` pixels wide."""
    import vl_convert

    png = bytes(vl_convert.vegalite_to_png(spec, scale=scale))
    width, _ = png_size(png)
    if width <= max_width:
        return png
    smaller = scale * max_width / width
    png = bytes(vl_convert.vegalite_to_png(spec, scale=smaller * 0.999))
    if png_size(png)[0] > max_width:  # never seen: the renderer rounds sizes to whole pixels
        raise ReportError(f"a chart is {png_size(png)[0]} px wide even at scale {smaller:.2f}: lay it out narrower")
    return png
