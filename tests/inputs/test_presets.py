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


def test_numpy_lab_without_a_mask_gives_both_queries_the_same_weights():
    # float64 by hand: each query's scores differ by q · (k1 - k0) = q · (3, 3, 3) = 3
    preset = PRESETS["13_numpy_lab_no_mask"]
    q, k, v = _inputs(preset)
    np.testing.assert_array_equal(q, _inputs(PRESETS["01_numpy_lab"])[0])
    result = compute_attention(q, k, v, **preset.settings)
    first = 1 / (1 + np.exp(3 / np.sqrt(3)))  # softmax([0, 3/√3])[0]
    assert np.allclose(result.weights, [[first, 1 - first]] * 2, atol=1e-6)
    assert f"{first:.6f}" in preset.teaches and f"{1 - first:.6f}" in preset.teaches


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


def test_random_spec_takes_a_pages_cell_limit_without_keeping_it():
    with pytest.raises(ValueError, match=r"^The random batch is too large: 2 × 3 × 4 attention "
                       r"cells; the limit is 23\. Draw fewer or shorter sequences\.$"):  # fmt: skip
        RandomSpec(batch=2, queries=3, keys=4, max_cells=23)
    spec = RandomSpec(batch=2, queries=3, keys=4, max_cells=24)
    assert spec == RandomSpec(batch=2, queries=3, keys=4)  # the limit is no field
    assert RandomSpec(queries=5000, d_k=2048).queries == 5000  # within memory: past a page's
    with pytest.raises(ValueError, match=r"`Q` \(sequences × rows × columns\) would have 1 × "
                       r"16,384 × 16,385 = 268,451,840 numbers"):  # fmt: skip
        RandomSpec(queries=16384, keys=1, d_k=16385)


# --- the presets of today's attention: each shows why its rule or position scheme exists ---------


def _settings(name: str, **changes):
    settings = {k: v for k, v in PRESETS[name].settings.items() if k != "padding"}
    return {**settings, **changes}


def test_attention_sinks_preset_keeps_the_first_token_in_every_row():
    q, k, v = _inputs(PRESETS["07_attention_sinks"])
    sinks = compute_attention(q, k, v, **_settings("07_attention_sinks"))
    window = compute_attention(q, k, v, **_settings("07_attention_sinks", sinks=None))
    full = compute_attention(q, k, v, causal=True)
    assert (sinks.weights[:, 0] > 0.7).all() and (full.weights[:, 0] > 0.5).all()
    assert (window.weights[3:, 0] == 0).all()  # the window alone drops token 0 from row 3 on
    far_sinks = np.abs(sinks.output - full.output)[3:, 0]
    far_window = np.abs(window.output - full.output)[3:, 0]
    assert (far_sinks < far_window).all()


def test_packed_documents_preset_stops_contamination_across_documents():
    q, k, v = _inputs(PRESETS["08_packed_documents"])
    packed = compute_attention(q, k, v, **_settings("08_packed_documents"))
    leaky = compute_attention(q, k, v, **_settings("08_packed_documents", documents=None))
    np.testing.assert_allclose(packed.output[7:], [[0, 0, 1]] * 2, atol=1e-6)
    assert leaky.output[7, 0] > 0.7  # the third document reads mostly from the first
    alone = compute_attention(q[7:], k[7:], v[7:], causal=True)
    np.testing.assert_allclose(packed.weights[7:, 7:], alone.weights, atol=1e-6)


def test_prefix_lm_preset_lets_the_prompt_look_ahead():
    q, k, v = _inputs(PRESETS["09_prefix_lm"])
    prefix = compute_attention(q, k, v, **_settings("09_prefix_lm"))
    causal = compute_attention(q, k, v, **_settings("09_prefix_lm", prefix=None))
    assert prefix.weights[0, 2] > 0.8 and causal.weights[0, 2] == 0
    assert (prefix.weights[3, 4] == 0) and (prefix.weights[:3, 3:] == 0).all()


def test_chunked_attention_preset_bounds_every_row_by_its_chunk():
    q, k, v = _inputs(PRESETS["10_chunked_attention"])
    result = compute_attention(q, k, v, **_settings("10_chunked_attention"))
    first = result.weights[[0, 4], [0, 4]]  # a chunk's first token sees only itself
    np.testing.assert_allclose(first, 1, atol=1e-6)  # float32 softmax: 1 within one ulp
    assert (result.weights[4:, :4] == 0).all() and (result.mask.sum(axis=1) <= 4).all()


def test_rope_probe_preset_scores_depend_only_on_the_offset():
    q, k, v = _inputs(PRESETS["11_rope_probe"])
    result = compute_attention(q, k, v, **_settings("11_rope_probe"))
    none = compute_attention(q, k, v)
    assert np.ptp(none.scores) == 0  # identical tokens: no position, no pattern
    for offset in range(-7, 8):
        assert np.ptp(np.diagonal(result.scores, offset)) < 1e-5
    assert np.ptp(result.scores) > 1


def test_alibi_preset_weighs_each_key_e_to_the_slope_times_its_left_neighbour():
    q, k, v = _inputs(PRESETS["12_alibi"])
    result = compute_attention(q, k, v, **_settings("12_alibi"))
    row = result.weights[7]
    np.testing.assert_allclose(row[1:] / row[:-1], np.exp(0.5), rtol=1e-5)
    far = compute_attention(q, k, v, **_settings("12_alibi", alibi_head=7))
    assert np.ptp(far.weights[7]) < 0.01  # slope 1/256: almost even


def test_shipped_presets_are_package_data_in_file_name_order():
    import attnviz.inputs

    assert Path(attnviz.inputs.__file__).parent / "preset_files" == SHIPPED
    assert list(PRESETS) == sorted(p.stem for p in Path(SHIPPED).glob("*.json"))
    assert list(PRESETS)[0] == "01_numpy_lab" and len(PRESETS) == 13


def test_load_presets_reads_only_json_files_of_a_folder(tmp_path):
    preset = {"title": "T", "teaches": "one idea", "query": "1", "key": "1", "value": "1"}
    (tmp_path / "b.json").write_text(json.dumps(preset), encoding="utf-8")
    (tmp_path / "a.json").write_text(json.dumps({**preset, "title": "A"}), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a preset", encoding="utf-8")
    loaded = load_presets(str(tmp_path))
    assert list(loaded) == ["a", "b"]
    assert loaded["a"].title == "A" and loaded["b"].name == "b" and loaded["b"].random is None
