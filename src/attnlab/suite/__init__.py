"""The suite's one pipeline: plan → train → analyse, then the claims, the extra round, the report.

``Suite`` is written once and used by every command that runs experiments:

- ``reproduce`` (``reproduce`` below): the suite resolves every selected
  experiment's settings once (``Suite.settings``) and each experiment plans
  its runs (``Suite.plan``; one finished earlier with the same profile and
  settings is reused): ``plan_suite``, whose one ``SuitePlan`` the CLI also
  counts before asking to start many runs. Then (``run_plan``) the runs of
  all of them go to the one runner at once (``Suite.train``: one executor
  pass, longest runs first, so no worker idles at an experiment's boundary),
  and each experiment, in registry order, reads its runs, measures and
  writes its envelope, table and figure (``Suite.analyse``).
  Then the claims are decided; each experiment with a training claim
  inconclusive on at least 3 seeds gets its one extra round
  (``Suite.extra_round``: the same three calls with more seeds; the rule is in
  ``attnlab.kit.extra_seeds``), and the report is written (``attnlab.report``);
- ``attnlab run NAME``: the same pipeline for one experiment, no report;
- ``reproduce --estimate`` times the pending runs of the same ``SuitePlan``
  (``estimate_plan``, ``attnlab.suite.forecast``).

Everything is cached, so running it again skips finished work and resumes an
interrupted run. Outcomes:

- an experiment whose module cannot be imported, whose runs fail, or whose
  ``analyse`` raises is *failed*, with its one-line error; the rest still run;
- when the corpus cannot be found or fetched, experiments that need it are
  *skipped* with the reason and the others still run;
- a claim whose predicate raises is an *error* verdict.

``reproduce`` is a function of its inputs (a runner, an output folder, a
profile and its options) and returns a ``SuiteOutcome``; ``ok`` is False (and
the command exits non-zero) when an experiment failed or a claim is an error.
A ``Suite``'s envelopes change only through its own steps. The layers:
``attnlab.lab`` (runner, registry, claims) and ``attnlab.report`` sit below this
module; the CLI above it.
"""

from attnlab.suite.end_to_end import (
    SuiteOutcome,
    SuitePlan,
    estimate,
    estimate_plan,
    plan_suite,
    reproduce,
    run_experiment,
    run_plan,
)
from attnlab.suite.pipeline import (
    Plan,
    Suite,
    check_args,
    corpus_problem,
    evaluate_claims,
    finished_records,
)

__all__ = ["Plan", "Suite", "SuiteOutcome", "SuitePlan", "check_args", "corpus_problem",
           "estimate", "estimate_plan", "evaluate_claims", "finished_records", "plan_suite",
           "reproduce", "run_experiment", "run_plan"]
