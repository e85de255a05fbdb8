"""The [analysis] table: defaults, every key, and one-line errors naming key, value, allowed."""

import pytest

from chainlab.campaign import analysis_settings as config
from chainlab.errors import ChainlabError


def test_defaults_when_the_file_has_no_analysis_table():
    cfg = config.from_campaign_toml('[campaign]\nname = "x"\n', "f.toml")
    assert cfg.baseline is None
    assert cfg.heavy_family == "slh-dsa"
    assert cfg.price_per_vcpu_hour == 0.04
    assert cfg.plausibility == {"reasonable": 1.5, "penalized": 5.0, "problematic": 100.0}
    assert cfg.service_classes["medium_api"] == 300_000_000
    assert set(cfg.sources.values()) == {"default"}


def test_every_key_is_read():
    text = """
[campaign]
baseline = "b1"
[analysis]
baseline = "b2"
heavy_family = "ml-dsa"
price_per_vcpu_hour = 0.1
confidence_level = 0.9
bootstrap_resamples = 500
bootstrap_seed = 7
[analysis.plausibility]
reasonable = 2.0
problematic = 50
[analysis.service_classes]
tiny = 1000
[analysis.cpu_regimes]
server_bound = 20
"""
    cfg = config.from_campaign_toml(text, "f.toml")
    assert cfg.baseline == "b2"  # [analysis].baseline wins over [campaign].baseline
    assert cfg.heavy_family == "ml-dsa"
    assert cfg.price_per_vcpu_hour == 0.1
    assert cfg.confidence_level == 0.9
    assert (cfg.bootstrap_resamples, cfg.bootstrap_seed) == (500, 7)
    assert cfg.plausibility == {"reasonable": 2.0, "penalized": 5.0, "problematic": 50.0}
    assert cfg.service_classes == {"tiny": 1000.0}
    assert cfg.cpu_regimes["server_bound"] == 20.0
    assert cfg.sources["price_per_vcpu_hour"] == "campaign file"
    assert cfg.sources["cpu_regimes"] == "campaign file"


def test_baseline_from_a_campaign_table_or_top_level():
    assert config.from_campaign_toml('[campaign]\nbaseline = "a"\n', "f").baseline == "a"
    assert (
        config.from_campaign_toml('baseline = "t"\n[campaign]\nbaseline = "a"\n', "f").baseline
        == "t"
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"colour": 1}, "analysis.colour: unknown key 'colour'; allowed: baseline, heavy_family"),
        (
            {"heavy_family": "lms"},
            "analysis.heavy_family: bad value 'lms'; allowed: ml-dsa, slh-dsa",
        ),
        ({"price_per_vcpu_hour": -1}, "analysis.price_per_vcpu_hour: bad value -1; allowed: a"),
        ({"price_per_vcpu_hour": True}, "analysis.price_per_vcpu_hour: expected a number, got"),
        (
            {"confidence_level": 1.5},
            "analysis.confidence_level: bad value 1.5; allowed: a number > 0.0 and < 1.0",
        ),
        (
            {"bootstrap_resamples": 10},
            "analysis.bootstrap_resamples: bad value 10; allowed: an integer 200 to 100000",
        ),
        (
            {"plausibility": {"reasonable": 10, "penalized": 5}},
            "analysis.plausibility: bad value a table; allowed: reasonable < penalized",
        ),
        ({"plausibility": {"fine": 1}}, "analysis.plausibility.fine: unknown key 'fine'"),
        ({"service_classes": {"x": 0}}, "analysis.service_classes.x: bad value 0; allowed: a"),
        ({"cpu_regimes": {"balanced_low": 2}}, "allowed: 0 < balanced_low < 1"),
        ({"baseline": 3}, "analysis.baseline: expected a scenario id, got 3"),
    ],
)
@pytest.mark.bad_input
def test_bad_values_name_key_value_and_what_is_allowed(table, message):
    with pytest.raises(ChainlabError, match="^f.toml: ") as err:
        config.parse_analysis(table, "f.toml")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_every_problem_is_reported_at_once():
    with pytest.raises(ChainlabError) as err:
        config.parse_analysis({"confidence_level": 2, "bootstrap_seed": -1}, "f.toml")
    lines = str(err.value).splitlines()
    assert [x.split(": ")[1] for x in lines] == [
        "analysis.confidence_level",
        "analysis.bootstrap_seed",
    ]


@pytest.mark.bad_input
def test_invalid_toml_is_reported():
    with pytest.raises(ChainlabError, match="not valid TOML"):
        config.from_campaign_toml("[campaign\n", "f.toml")


def test_replace_marks_command_line_overrides():
    cfg = config.from_campaign_toml("", "f").replace(baseline="x")
    assert cfg.baseline == "x" and cfg.sources["baseline"] == "command line"
