"""Pictures of symverify's objects: occupancy maps, weights, butterfly wiring, resources, reports.

Every ``plot_*`` function returns a :class:`matplotlib.figure.Figure` (on the Agg canvas; nothing
is shown, nothing touches :mod:`matplotlib.pyplot`'s global state), so a notebook displays it and
a script saves it with ``fig.savefig(path)``. matplotlib is the optional extra
``symverify[viz]``; without it the plotting functions raise
:class:`~symverify.errors.BackendUnavailableError`. The data behind the pictures
(:func:`occupancy`, :func:`wiring`, :func:`resource_records`) and the HTML views
(:mod:`symverify.viz.html`, :func:`write_report`) need no matplotlib.

* :func:`plot_model` — a layer × (row, channel) occupancy map of a :class:`~symverify.kernel.ir.baseconv.Model`
  or :class:`~symverify.compiler.result.Compiled`, coloured by role (:func:`occupancy`);
* :func:`plot_weights` — ``W``, ``b1``, ``h``, ``b2`` of one layer: sparsity and values;
* :func:`plot_butterfly` — the wiring diagram of a butterfly factor, BB*, factor list,
  kaleidoscope or :class:`~symverify.kernel.kaleidoscope.factorization.Factorization`;
* :func:`plot_resources` — measured resources of a proof run (or compiled models) against the
  stated bounds;
* :func:`write_report` — one self-contained HTML page for a ``symverify prove --json`` run.

Importing this package imports neither matplotlib nor the plotting modules: names load on use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "Role": "symverify.viz.model",
    "Occupancy": "symverify.viz.model",
    "occupancy": "symverify.viz.model",
    "plot_model": "symverify.viz.model",
    "plot_weights": "symverify.viz.weights",
    "Wiring": "symverify.viz.butterfly",
    "wiring": "symverify.viz.butterfly",
    "plot_butterfly": "symverify.viz.butterfly",
    "Record": "symverify.viz.resources",
    "resource_records": "symverify.viz.resources",
    "plot_resources": "symverify.viz.resources",
    "write_report": "symverify.viz.report",
    "report_page": "symverify.viz.report",
}

if TYPE_CHECKING:
    from symverify.viz.butterfly import Wiring as Wiring
    from symverify.viz.butterfly import plot_butterfly as plot_butterfly
    from symverify.viz.butterfly import wiring as wiring
    from symverify.viz.model import Occupancy as Occupancy
    from symverify.viz.model import Role as Role
    from symverify.viz.model import occupancy as occupancy
    from symverify.viz.model import plot_model as plot_model
    from symverify.viz.report import report_page as report_page
    from symverify.viz.report import write_report as write_report
    from symverify.viz.resources import Record as Record
    from symverify.viz.resources import plot_resources as plot_resources
    from symverify.viz.resources import resource_records as resource_records
    from symverify.viz.weights import plot_weights as plot_weights

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'symverify.viz' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The package's names, the lazily loaded ones included (``dir``, ``help``, tab completion)."""
    return sorted(set(globals()) | set(__all__))
