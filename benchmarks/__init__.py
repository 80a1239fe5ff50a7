"""attnlab's benchmarks: scripts that print figures and ratios measured side by side in one run.

A package, run from the repository's root as a module (``python -m benchmarks.generate``), so
that its scripts share ``benchmarks.harness`` without putting this folder first on
``sys.path``, where a script's name could hide an installed package of the same name.
"""
