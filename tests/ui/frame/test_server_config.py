"""Tests for ui/frame/server_config.py: the one home of the server options, and the flags built from
it. `.streamlit/config.toml` (what `streamlit run app.py` reads in a checkout) must say exactly
the same, since the `attnviz` command passes these flags instead."""

import tomllib
from pathlib import Path

import pytest
from streamlit import config as streamlit_config

from attnviz.ui.frame.server_config import SERVER_CONFIG, flag_value, flags

ROOT = Path(__file__).parents[3]


def test_the_checkout_config_file_says_exactly_the_same():
    text = (ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8")
    assert tomllib.loads(text) == SERVER_CONFIG


def test_every_option_is_one_streamlit_knows_with_a_value_of_its_type():
    known = streamlit_config._config_options_template  # name -> ConfigOption
    for section, options in SERVER_CONFIG.items():
        for option, value in options.items():
            name = f"{section}.{option}"
            assert name in known, name
            default = known[name].default_val
            if isinstance(default, bool):
                assert isinstance(value, bool), name
            elif default is not None:
                assert type(value) is type(default), (name, value, default)


def test_the_deliberate_limits_and_production_settings():
    assert SERVER_CONFIG["server"]["maxUploadSize"] == 20  # MB, as the parser's limit
    assert SERVER_CONFIG["server"]["fileWatcherType"] == "none"
    assert SERVER_CONFIG["browser"]["gatherUsageStats"] is False
    assert SERVER_CONFIG["client"]["showErrorDetails"] == "none"  # no traceback in the page
    assert SERVER_CONFIG["runner"]["postScriptGC"] is False  # the load benchmark's p95


@pytest.mark.parametrize(
    ("value", "text"),
    [(True, "true"), (False, "false"), (20, "20"), ("none", "none")],
    ids=["true", "false", "int", "str"],
)
def test_flag_values_are_spelled_as_streamlit_run_takes_them(value, text):
    assert flag_value(value) == text


def test_flags_give_every_option_once_as_a_name_value_pair():
    found = flags()
    names, values = found[::2], found[1::2]
    expected = [f"--{s}.{o}" for s, options in SERVER_CONFIG.items() for o in options]
    assert names == expected and len(set(names)) == len(names)
    assert names[0] == "--server.headless" and values[0] == "true"
    assert dict(zip(names, values, strict=True))["--runner.postScriptGC"] == "false"


def test_flags_of_another_config():
    assert flags({"server": {"port": 8600}, "client": {"toolbarMode": "minimal"}}) == [
        "--server.port",
        "8600",
        "--client.toolbarMode",
        "minimal",
    ]
    assert flags({}) == []
