"""Tests for attnviz/viewer.py: `attnviz.view(model, tokenizer=...)` saves a model in memory
where `attnviz view` can open it, and (marked slow) starts that server in the background."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import keras
import pytest
from user_models import GPT2_MERGES, gpt2_vocabulary, mha_model

import attnviz
from attnviz import viewer
from attnviz.heads.user_model import load_model
from attnviz.ui.frame.server_config import WARM_UP_ENV


@pytest.fixture(scope="module")
def gpt2_in_memory():
    """A tiny keras-hub GPT-2 backbone and its tokenizer, never saved."""
    import keras_hub

    keras.utils.set_random_seed(4)
    tokenizer = keras_hub.models.GPT2Tokenizer(vocabulary=gpt2_vocabulary(), merges=GPT2_MERGES)
    backbone = keras_hub.models.GPT2Backbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=1, num_heads=2, hidden_dim=8,
        intermediate_dim=16, max_sequence_length=16,
    )  # fmt: skip
    return backbone, tokenizer


def test_view_is_a_public_name():
    assert attnviz.view is viewer.view


def test_a_keras_hub_model_and_its_tokenizer_are_saved_as_one_preset(gpt2_in_memory, tmp_path):
    backbone, tokenizer = gpt2_in_memory
    source = viewer._saved(backbone, tokenizer, tmp_path)
    assert source == str(tmp_path / "preset")
    assert {"config.json", "tokenizer.json", "model.weights.h5"} <= {
        p.name for p in Path(source).iterdir()
    }
    loaded = load_model(source)
    assert loaded.causal_lm and type(loaded.tokenizer).__name__ == "GPT2Tokenizer"
    assert loaded.model.backbone.count_params() == backbone.count_params()


def test_a_plain_keras_model_is_saved_as_a_keras_file(tmp_path):
    source = viewer._saved(mha_model(), None, tmp_path)
    assert source == str(tmp_path / "model.keras")
    assert load_model(source).model.name == "tiny_mha"


def test_paths_and_names_pass_through_as_the_command_takes_them(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    assert viewer._saved(tmp_path, None, tmp_path) == str(tmp_path.resolve())
    assert viewer._saved("gpt2_base_en", None, tmp_path) == "gpt2_base_en"


@pytest.mark.parametrize(
    ("model", "tokenizer", "message"),
    [
        ("gpt2_base_en", "a tokenizer", "`tokenizer` goes with a model in memory"),
        ("./missing.keras", None, "no such file or folder: './missing.keras'"),
        ([1, 2], None, "`model` must be a Keras model, a keras-hub model, or a path"),
        ("plain", object(), "`tokenizer` goes with a model in memory"),
    ],
    ids=["path-and-tokenizer", "missing", "not-a-model", "name-and-tokenizer"],
)
def test_what_cannot_be_viewed_is_refused(model, tokenizer, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        viewer._saved(model, tokenizer, tmp_path)


def test_a_tokenizer_with_a_plain_keras_model_is_refused(gpt2_in_memory, tmp_path):
    with pytest.raises(ValueError, match="a plain Keras model takes token ids"):
        viewer._saved(mha_model(), gpt2_in_memory[1], tmp_path)
    with pytest.raises(ValueError, match="must be a keras-hub tokenizer"):
        viewer._saved(gpt2_in_memory[0], "words", tmp_path)


@pytest.mark.slow
def test_view_starts_the_app_in_the_background_and_stop_all_ends_it(gpt2_in_memory, monkeypatch):
    monkeypatch.delenv(WARM_UP_ENV, raising=False)  # the server warms up, as a user's does
    url = attnviz.view(*gpt2_in_memory)
    (started,) = viewer._STARTED
    try:
        # it returns once the page is ready: the model loaded and run once (before: as soon as
        # the server answered, ~10 s before the page could show the model)
        log = started.log.read_text()
        assert viewer.MODEL_READY in log and "warm-up of model failed" not in log
        assert url == f"{started.url}" and url.startswith("http://localhost:")
        assert url.endswith("/model")
        port = url.rsplit(":", 1)[1].split("/")[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10) as r:
            assert r.read() == b"ok"
        assert (started.folder / "preset" / "tokenizer.json").is_file()
    finally:
        viewer.stop_all()
    assert started.process.poll() is not None and not started.folder.exists()
