"""Tests for core/settings.py: `AttentionSettings`, the one checked description of how attention
is computed (everything but the inputs and the weights), and `from_keywords`, the one place the
attention keywords become settings. Plain Python: no TensorFlow."""

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.core.limits import MAX_ARRAY_CELLS, MAX_SEED
from attnviz.core.masks import MASK_VALUES
from attnviz.core.score_kinds import SCORE_KINDS
from attnviz.core.settings import SETTING_NAMES, AttentionSettings

ROOT = Path(__file__).parents[2]


def test_the_defaults_are_scaled_dot_product_attention_without_masks():
    settings = AttentionSettings()
    assert dataclasses.asdict(settings) == {
        "score": "dot",
        "scale": True,
        "causal": False,
        "window": None,
        "mask_value": "-inf",
        "seed": 0,
        "sinks": None,
        "documents": None,
        "prefix": None,
        "chunk": None,
        "position": "none",
        "rope_theta": 10000.0,
        "alibi_heads": 8,
        "alibi_head": 0,
    }


def test_settings_are_built_by_keyword_only():
    # no caller can mix up the order of 14 fields: positional construction is refused
    with pytest.raises(TypeError, match="positional argument"):
        AttentionSettings("general", False)  # type: ignore[misc]
    settings = AttentionSettings(score="general", scale=False, causal=True, window=2, seed=7)
    assert (settings.score, settings.scale, settings.causal) == ("general", False, True)
    assert tuple(dataclasses.asdict(settings)) == SETTING_NAMES  # every field, in order


def test_no_code_builds_settings_positionally():
    # kw_only refuses it at run time; this finds it in code no test runs (this file aside)
    sources = [
        path
        for folder in ("attnviz", "tests", "bench")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != "test_settings.py"
    ]
    # a call whose first argument is not `name=`, `**fields`, `...` (in prose) or nothing
    positional = re.compile(r"AttentionSettings\(\s*+(?![A-Za-z_]\w*\s*=(?!=)|\*\*|\)|\.\.\.)")
    found = [
        f"{path.relative_to(ROOT)}: {text[match.start() : match.start() + 40]}"
        for path in sources
        for text in [path.read_text(encoding="utf-8")]
        for match in positional.finditer(text)
    ]
    assert found == []


@pytest.mark.parametrize("score", SCORE_KINDS)
@pytest.mark.parametrize("mask_value", MASK_VALUES)
def test_every_score_and_mask_value_is_accepted(score, mask_value):
    assert AttentionSettings(score=score, mask_value=mask_value).score == score


@pytest.mark.parametrize(
    ("window", "seed"), [(0, 0), (1, 1), (MAX_ARRAY_CELLS, MAX_SEED), (np.int64(3), np.uint32(5))]
)
def test_the_edges_of_window_and_seed_are_accepted(window, seed):
    settings = AttentionSettings(window=window, seed=seed)
    assert settings.window == window and settings.seed == seed


def test_numpy_booleans_are_accepted():
    settings = AttentionSettings(scale=np.bool_(False), causal=np.bool_(True))
    assert not settings.scale and settings.causal


BAD = [
    ({"score": "cosine"},
     '`score` must be one of "dot", "general", "concat". Received: \'cosine\'.'),
    ({"score": None}, "`score` must be one of"),
    ({"scale": 1}, "`scale` must be True or False. Received: 1."),
    ({"scale": None}, "`scale` must be True or False. Received: None."),
    ({"causal": "yes"}, "`causal` must be True or False. Received: 'yes'."),
    ({"window": -1}, "`window` must be 0 or more. Received: -1."),
    ({"window": 2**28 + 1}, "`window` is too large to hold in memory: no array holds more than "
     "268,435,456 numbers (1 GiB of float32), so no more tokens than that. Received: "
     "268,435,457. Use fewer tokens."),
    ({"window": 1.5}, "`window` must be a whole number. Received: 1.5."),
    ({"window": True}, "`window` must be a whole number. Received: True."),
    ({"mask_value": "-1e30"}, '`mask_value` must be one of "-inf", "-1e9". Received: \'-1e30\'.'),
    ({"mask_value": float("-inf")}, "`mask_value` must be one of"),
    ({"seed": -1}, "`seed` must be from 0 to 4294967295. Received: -1."),
    ({"seed": 2**32}, "`seed` must be from 0 to 4294967295. Received: 4294967296."),
    ({"seed": "7"}, "`seed` must be a whole number. Received: '7'."),
]  # fmt: skip


@pytest.mark.parametrize(("kwargs", "message"), BAD, ids=[str(k) for k, _ in BAD])
def test_bad_settings_say_what_is_allowed_and_what_was_received(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        AttentionSettings(**kwargs)


def test_settings_are_frozen_hashable_values():
    settings = AttentionSettings(causal=True, window=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.causal = False  # type: ignore[misc]
    assert settings == AttentionSettings(causal=True, window=3)
    assert settings != AttentionSettings(causal=True, window=4)
    assert len({settings, AttentionSettings(causal=True, window=3)}) == 1  # usable as a cache key


def test_replace_checks_the_new_values_too():
    settings = AttentionSettings()
    assert dataclasses.replace(settings, score="concat").score == "concat"
    with pytest.raises(ValueError, match="`window` must be 0 or more"):
        dataclasses.replace(settings, window=-2)


def test_settings_need_no_tensorflow():
    # The sidebar builds settings before TensorFlow has loaded.
    probe = (
        "import sys\n"
        "from attnviz.core.settings import AttentionSettings\n"
        "AttentionSettings(score='concat', causal=True, window=2)\n"
        "print(any(m in sys.modules for m in ('tensorflow', 'keras')))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


# --- from_keywords: settings= or the keywords, not both ------------------------------------------


def _from(settings=None, function="compute_attention", **keywords):
    return AttentionSettings.from_keywords(settings, keywords, function=function)


def test_the_keywords_make_the_settings_and_a_settings_object_is_used_as_given():
    assert _from(causal=True, window=2) == AttentionSettings(causal=True, window=2)
    assert _from() == AttentionSettings()
    given = AttentionSettings(score="concat", seed=3)
    assert _from(given) is given


def test_settings_and_keywords_together_are_refused_with_a_hint():
    with pytest.raises(ValueError, match=re.escape(
        "`compute_attention` takes `settings=` or the attention keywords, not both. Received "
        "`settings` and `causal`, `window`. Put them into the settings: "
        "dataclasses.replace(settings, causal=..., window=...)."
    )):  # fmt: skip
        _from(AttentionSettings(), causal=True, window=2)


def test_an_unknown_keyword_is_named_with_the_ones_allowed():
    with pytest.raises(TypeError) as caught:
        _from(casual=True)
    message = str(caught.value)
    assert message.startswith("`compute_attention` got an unknown keyword `casual`. ")
    assert "Its attention keywords are: " + ", ".join(SETTING_NAMES) in message


def test_fixed_fields_are_no_keywords_and_a_settings_object_must_agree():
    fixed = {"score": "dot", "causal": True}
    made = AttentionSettings.from_keywords(None, {"window": 1}, function="f", fixed=fixed)
    assert (made.score, made.causal, made.window) == ("dot", True, 1)
    with pytest.raises(TypeError, match=r"unknown keyword `causal`\..*it sets causal=True itself"):
        AttentionSettings.from_keywords(None, {"causal": False}, function="f", fixed=fixed)
    with pytest.raises(ValueError, match=re.escape(
        "`f` computes with score='dot' only: `settings.score` must be 'dot'. Received: "
        "'general'. Use dataclasses.replace(settings, score='dot')."
    )):  # fmt: skip
        AttentionSettings.from_keywords(
            AttentionSettings(score="general", causal=True), {}, function="f", fixed=fixed
        )


def test_derived_fields_are_no_keywords_and_replace_those_of_a_settings_object():
    derived = {"alibi_heads": 4, "alibi_head": 0}
    given = AttentionSettings(alibi_heads=8, alibi_head=7, causal=True)
    made = AttentionSettings.from_keywords(given, {}, function="f", derived=derived)
    assert (made.alibi_heads, made.alibi_head, made.causal) == (4, 0, True)
    with pytest.raises(TypeError, match="unknown keyword `alibi_heads`"):
        AttentionSettings.from_keywords(None, {"alibi_heads": 2}, function="f", derived=derived)


def test_settings_must_be_attention_settings():
    with pytest.raises(ValueError, match=r"`settings` must be an AttentionSettings .* Received: "
                       r"\{'causal': True\}\."):  # fmt: skip
        _from({"causal": True})


def test_the_keyword_values_are_checked_as_the_fields_are():
    with pytest.raises(ValueError, match="`window` must be 0 or more. Received: -1."):
        _from(window=-1)
