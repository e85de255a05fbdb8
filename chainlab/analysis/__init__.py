"""Statistics over a result store: `analyze.analyze(path)` computes every table of the report.

Modules: `stats` (estimators and intervals), `load` (reading a store), `config` (the campaign
file's `[analysis]` settings), `families` (algorithm families, placement classes, labels),
`summary`, `compare`, `transport`, `decomposition`, `capacity`, `paper`, `findings`,
`network` (emulated networks: profiles, initial window, projection), and
`synthetic` (stores with known content for tests and benchmarks). docs/methods/ explains
every number.
"""
