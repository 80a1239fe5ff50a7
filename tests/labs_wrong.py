"""The mutation table: one wrong implementation per mistake the labs recognise, gathered from
each exercise's folder (``attnlab/labs/exercises/<name>/wrong.py``, where each is written the
way the mistake happens in a learner's file, independently of the probe that recognises it).
``WRONG`` maps ``(exercise name, mistake key)`` to the function, for every exercise.
"""

from __future__ import annotations

import importlib

from attnlab.labs import EXERCISES

WRONG = {(ex.name, key): fn for ex in EXERCISES
         for key, fn in importlib.import_module(f"attnlab.labs.exercises.{ex.name}.wrong")
         .WRONG.items()}
