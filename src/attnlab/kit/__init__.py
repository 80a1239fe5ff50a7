"""The kit experiments are written against.

- ``registry``       the experiments by name and the record each declares (``Experiment``)
- ``settings``       the settings every experiment that trains shares
- ``claims``         claims, their parts and verdicts over seeds
- ``extra_seeds``    the one extra round of seeds where a claim is inconclusive
- ``chapter``        an experiment's chapter part: the published figures and how to read them
- ``tables``         seed means and the Markdown tables
- ``per_seed``       a trained model's numbers per seed, a ratio part, claim ids
- ``envelope``       an experiment's finished result on disk
- ``quantities``     every figure a claim shows, named and in its unit
- ``verdict_words``  a verdict in a reader's words, English or Spanish
"""
