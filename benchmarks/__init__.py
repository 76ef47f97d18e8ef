"""Benchmark suites: ``python -m benchmarks <suite> [options]``.

Suites (each a module with ``add_arguments(parser)`` and ``run(args)``):

- ``flora``: the FLoRA paper's protocol (App. D) and its competitors at equal budget;
- ``bandits``: the X-armed synthetic experiments of the Fed-PNE, PF-PNE and level-order papers;
- ``landmine``: one party per landmine field, SVC rbf, AUC; global and personal results;
- ``personal``: PF-PNE's synthetic setting (local regret against Fed-PNE, per-party HCT and
  random search) and each Landmine field's personal against global configuration;
- ``dpftsde``: DP-FTS-DE and its variants on Landmine in the DP-FTS-DE paper's protocol;
- ``speed``: where the time goes (federated grid search against ``GridSearchCV``, parallel
  efficiency, server-side time);
- ``flower``: the Flower transport on loopback (start-up, per-round overhead against the
  in-process run, bytes per party per round).

Common options: ``--quick``, ``--seeds``, ``--output DIR``, ``--data-dir``, ``--n-jobs``
(see :mod:`benchmarks._common`). Benchmarks print figures; they are not tests.
"""

SUITES = ("flora", "bandits", "landmine", "personal", "dpftsde", "speed", "flower")

__all__ = ["SUITES"]
