"""The cost model and the run-time estimate: what a scenario's handshake costs each side
(`cost`: its operations, priced; `cost_fit`: each stack's overhead fitted on its reference
handshakes, named in `reference_specs`; `implementations`: whose code runs each operation),
its bytes on the wire (`flights`), its latency, predictions and run time (`estimate`), a
whole run's time (`run_estimate`), the built-in figures used before this machine's
primitives are measured (`algorithm_costs`), and the load-step checks that need them
(`load_steps`). Reads scenarios (chainlab.campaign); the runner measures its inputs
(chainlab.runner.primitives) and the analysis compares it with the measurements
(docs/methods/cost-model.md).
"""
