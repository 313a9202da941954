"""Benchmarks of flarekit, run with ``python -m benchmarks`` (or ``make bench``).

Each ``bench_*.py`` module has a ``main()`` that runs its measurements and returns rows
(dicts with the same keys); ``__main__`` runs them all and prints one table per module.
They measure, they do not assert: timings depend on the machine.
"""
