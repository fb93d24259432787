"""matplotlib for the reports: the Agg backend (no display, no network)
chosen once, before pyplot loads, and a figure turned into PNG bytes. Every
module that draws imports this, never another drawing module."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 90


def png(fig) -> bytes:
    """The figure as PNG bytes; the figure is closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
