"""Presets load, parse and reproduce what they claim to teach."""

import json
from pathlib import Path

import numpy as np
import pytest

from attnviz import compute_attention, parse_matrix_text
from attnviz.inputs.presets import SHIPPED, RandomSpec, load_presets, random_qkv, shipped_presets

PRESETS = shipped_presets()


def _inputs(preset):
    if preset.random:
        return random_qkv(preset.random)
    return tuple(parse_matrix_text(text) for text in (preset.query, preset.key, preset.value))


def _padding(preset, q):
    if not preset.padding:
        return None
    batch = q.shape[0] if q.ndim == 3 else 1
    mask = np.ones((batch, _inputs(preset)[1].shape[-2]), dtype=bool)
    for b, keys in enumerate(preset.padding):
        mask[b, list(keys)] = False
    return mask if q.ndim == 3 else mask[0]


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_computes(name):
    preset = PRESETS[name]
    q, k, v = _inputs(preset)
    settings = {key: val for key, val in preset.settings.items() if key != "padding"}
    result = compute_attention(q, k, v, key_padding_mask=_padding(preset, q), **settings)
    assert np.isfinite(result.weights).all()
    assert preset.title and preset.teaches


def test_numpy_lab_preset_reproduces_the_seed():
    q, k, v = _inputs(PRESETS["01_numpy_lab"])
    result = compute_attention(q, k, v, causal=True)
    assert np.allclose(result.weights, [[1, 0], [0.150325, 0.849675]], atol=1e-6)


def test_keras_tutorial_preset_has_the_tutorial_shapes():
    q, k, v = _inputs(PRESETS["02_keras_tutorial"])
    assert q.shape == k.shape == v.shape == (64, 5, 64)
    assert compute_attention(q, k, v).output.shape == (64, 5, 64)


def test_identical_keys_give_uniform_weights_and_the_mean_value():
    q, k, v = _inputs(PRESETS["04_identical_keys"])
    result = compute_attention(q, k, v)
    assert np.allclose(result.weights, 1 / k.shape[0], atol=1e-6)
    assert np.allclose(result.output, v.mean(axis=0), atol=1e-6)


def test_masking_pitfall_preset_shows_the_difference():
    preset = PRESETS["06_masking_pitfall"]
    q, k, v = _inputs(preset)
    pad = _padding(preset, q)
    inf = compute_attention(q, k, v, causal=True, key_padding_mask=pad, mask_value="-inf")
    big = compute_attention(q, k, v, causal=True, key_padding_mask=pad, mask_value="-1e9")
    assert inf.fully_masked[0] and np.all(inf.weights[0] == 0)
    assert np.allclose(big.weights[0], 1 / 3, atol=1e-6)


def test_random_spec_rejects_oversized_batches():
    with pytest.raises(ValueError, match="too large"):
        RandomSpec(batch=1024, queries=4096, keys=4096)


def test_shipped_presets_are_package_data_in_file_name_order():
    import attnviz.inputs

    assert Path(attnviz.inputs.__file__).parent / "preset_files" == SHIPPED
    assert list(PRESETS) == sorted(p.stem for p in Path(SHIPPED).glob("*.json"))
    assert list(PRESETS)[0] == "01_numpy_lab" and len(PRESETS) == 6


def test_load_presets_reads_only_json_files_of_a_folder(tmp_path):
    preset = {"title": "T", "teaches": "one idea", "query": "1", "key": "1", "value": "1"}
    (tmp_path / "b.json").write_text(json.dumps(preset), encoding="utf-8")
    (tmp_path / "a.json").write_text(json.dumps({**preset, "title": "A"}), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a preset", encoding="utf-8")
    loaded = load_presets(str(tmp_path))
    assert list(loaded) == ["a", "b"]
    assert loaded["a"].title == "A" and loaded["b"].name == "b" and loaded["b"].random is None
