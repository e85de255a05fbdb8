"""Campaign files: schema, validation, matrix expansion, scenario ids, run-time estimate.

    from chainlab.campaign import load
    c = load("campaigns/quick.toml")      # raises CampaignError listing every problem
    for s in c.select(["A"]): print(s.scenario_id)

docs/campaigns.md is the file format reference.
"""

from chainlab.campaign.loader import CampaignError, load
from chainlab.campaign.model import Campaign, NetworkProfile, SamplingPolicy, Scenario

__all__ = ["Campaign", "CampaignError", "NetworkProfile", "SamplingPolicy", "Scenario", "load"]
