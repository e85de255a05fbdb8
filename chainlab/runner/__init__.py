"""Runs campaigns: hierarchies, engine server and client processes, sampling, resume.

`chainlab.runner.campaign.run(campaign, RunOptions(...))` is what `chainlab run` calls;
`chainlab.runner.sampler` holds the (pure) stopping rule.
"""
