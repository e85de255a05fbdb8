"""Benchmarks that print measured figures and never pass or fail.

Each benchmark is a module with `main(argv) -> int`, dispatched by `chainlab bench NAME`
(`chainlab.commands.bench`) and runnable as `python -m chainlab.bench.NAME`. Whatever is
compared is measured side by side in one run (interleaved rounds), so ratios hold up on a
noisy, shared machine even when absolute figures do not.
"""
