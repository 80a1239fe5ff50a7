"""Running planned training runs, apart from the experiments that plan them.

- ``spec``           a planned run (``RunSpec``, ``seeded``) and its key on disk
- ``runner``         the one place that trains: cached, in order or on an executor
- ``executors``      the local pool of worker processes
- ``ray_executor``   each run a Ray task on a cluster; ``ray_preflight`` checks the nodes first
- ``cluster``        choosing and reaching a Ray cluster
- ``train_run``      the worker side: train one resolved run, the same way on every path
- ``context``        where an experiment's analysis runs: the runner and the device
"""
