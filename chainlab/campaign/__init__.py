"""Campaign files: schema, validation, matrix expansion, scenario ids.

    from chainlab.campaign import load
    c = load("campaigns/quick.toml")      # raises CampaignError listing every problem
    for s in c.select(["A"]): print(s.scenario_id)

The load steps against what the cost model expects of each scenario are checked above this
layer (chainlab.model.load_steps; the commands read a file through
chainlab.commands.read_campaign, which does both). docs/campaigns.md is the file format
reference.
"""

from chainlab.campaign.loader import CampaignError, load
from chainlab.campaign.model import Campaign, NetworkProfile, SamplingPolicy, Scenario

__all__ = ["Campaign", "CampaignError", "NetworkProfile", "SamplingPolicy", "Scenario", "load"]
