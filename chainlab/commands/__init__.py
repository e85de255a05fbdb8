"""The `chainlab` subcommands, one module each (chainlab.cli lists them in workflow order)."""

from chainlab.campaign import Campaign, load
from chainlab.model import load_steps


def read_campaign(path) -> Campaign:
    """A campaign file read and checked, before anything is built or written: the loader's
    rules (chainlab.campaign.load), then its load steps against what the cost model expects
    of each scenario (chainlab.model.load_steps). Raises CampaignError, one line a problem."""
    campaign = load(path)
    load_steps.check(campaign)
    return campaign


def campaign_arguments(parser) -> None:
    """The arguments of a command that reads a campaign file: the file and --campaign."""
    parser.add_argument("file", help="campaign file (TOML)")
    parser.add_argument(
        "--campaign",
        action="append",
        metavar="NAME",
        help="only these campaigns of the file (repeatable; default: all)",
    )
