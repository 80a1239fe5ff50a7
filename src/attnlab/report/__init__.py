"""attnlab.report: render finished experiment records and claim verdicts (SPEC §4).

``write_report`` writes ``report.md``, a self-contained ``report.html``
(figures inlined, no network) and ``results.json``. Running the suite is
``attnlab.suite.reproduce``; this package only renders.
"""

from attnlab.report.write import write_report

__all__ = ["write_report"]
