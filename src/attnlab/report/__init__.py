"""attnlab.report: run the suite and write one report folder (SPEC §4).

``reproduce`` runs every experiment (cached, resumable) and calls
``write_report``, which writes ``report.md``, a self-contained ``report.html``
(figures inlined, no network) and ``results.json``.
"""

from attnlab.report.suite import reproduce
from attnlab.report.write import write_report

__all__ = ["reproduce", "write_report"]
