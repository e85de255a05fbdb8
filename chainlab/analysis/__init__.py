"""Statistics over a result store: `analyze.analyze(path)` gives an `Analysis` whose tables
are each computed when first asked for (`registry`: every analysis module registers what it
produces with `@produces`).

Modules: `load` (reading a store), `registry` (analyses on demand), `families` (algorithm
families, placement classes, labels), `summary`, `compare`, `transport`, `decomposition`,
`capacity`, `paper`, `findings`, `network` (emulated networks: profiles, initial window,
projection), the levers' analyses against their twins (`twins` and the modules that use
it), and the rest one module per subject. docs/methods/ explains every number.
"""
