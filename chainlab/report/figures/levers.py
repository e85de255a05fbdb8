"""Operators' levers: where a client certificate puts the handshake's CPU."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from chainlab.report.figures.registry import figure
from chainlab.report.figures.style import WIDTH

# (side, column of the scenario with the certificate, column of its twin without one)
SIDES = (
    ("server", "server_cpu_ms", "twin_server_cpu_ms"),
    ("client", "client_cpu_ms", "twin_client_cpu_ms"),
)


@figure("client_auth_split", "Server and client CPU without and with a client certificate")
def fig_client_auth_split(a):
    c = a.client_auth
    if c.empty:
        return None
    n = len(c)
    y = np.arange(n)
    fig, axes = plt.subplots(1, 2, figsize=(WIDTH, 1.4 + 0.45 * n), sharey=True)
    for ax, (side, with_cert, without) in zip(axes, SIDES, strict=True):
        ax.barh(y - 0.2, c[without], height=0.4, color="#8c8c8c", label="no client certificate")
        ax.barh(y + 0.2, c[with_cert], height=0.4, color="#dd8452", label="client certificate")
        ax.set_xlabel(f"{side} CPU per handshake (ms)")
        ax.grid(True, axis="x", alpha=0.3)
    labels = [
        f"{h} · client {leaf}" for h, leaf in zip(c["hierarchy"], c["client_leaf"], strict=True)
    ]
    axes[0].set_yticks(y, labels, fontsize=7)
    axes[0].invert_yaxis()
    fig.suptitle("Server and client CPU without and with a client certificate")
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=2, fontsize=8)
    return fig
