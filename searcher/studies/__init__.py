"""Studies: the runners that evaluate, over the pure functions of `searcher.analysis`: `compare`
(strategies x seeds x alpha as campaigns), `transects` (`run_transects`), `verification`
(`verify`), `generator_quality` (`validate_generator`) and `analyze` (the tables and plots of a
stored run). Each module loads when asked for.
"""
