"""The lab: the machinery that runs experiments, apart from the experiments themselves.

- ``spec``       a planned run (``RunSpec``, ``seeded``) and its key on disk;
- ``runner``     ``Runner``: resolves, caches and trains planned runs, built once per command;
- ``executors``  where pending runs train side by side (``Executor``, ``LocalPool``, ``Job``);
- ``work``       ``train_spec``: the one function every path trains a run through;
- ``registry``   the experiments by name and the ``Experiment`` record each declares;
- ``context``    ``Context``: the runner and the device an analysis measures on;
- ``envelope``   an experiment's finished result on disk;
- ``claims``     claims, margins and verdicts; ``seeds`` the one extra round of seeds;
- ``settings``   the settings the experiments share (seeds, corpus, one training budget);
- ``kit``        what experiments write alike: a model's numbers per seed, ratio claim parts;
- ``tables``     numbers into text;
- ``estimate``   how long the training of a plan should take here; ``meta`` where it ran.

The suite that drives them is ``attnlab.suite``; ``docs/design.md`` draws the layers.
"""
