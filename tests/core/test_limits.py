"""Tests for core/limits.py: the documented limits, how they relate, and that each one is the
limit an entry point enforces (one value past it is refused with the number in the message),
the docs (docs/app.md, Limits) state and the server configuration shares."""

import re
from pathlib import Path

import numpy as np
import pytest

from attnviz.core import limits
from attnviz.core.attention import compute_attention
from attnviz.core.checks import check_finite
from attnviz.core.positions import apply_rope, check_rope_theta
from attnviz.core.seeding import check_seed
from attnviz.core.tiled import tiled_attention
from attnviz.heads.model_text import text_inputs
from attnviz.heads.user_model import UserModel
from attnviz.inputs.parsing import load_matrix, parse_matrix_text
from attnviz.inputs.presets import RandomSpec
from attnviz.inputs.text import encode_sentences
from attnviz.learn.configs import NetworkConfig, TrainConfig, TransformerConfig
from attnviz.learn.language.tasks import get_lm_task
from attnviz.learn.translation.tasks import make_pairs
from attnviz.transformer.decoder import DecoderConfig, run_decoder
from attnviz.transformer.multihead import compute_multihead
from attnviz.ui.frame.server_config import SERVER_CONFIG

ROOT = Path(__file__).parents[2]
NAMES = [name for name in vars(limits) if name.startswith("MAX_")]
TINY_DECODER = dict(h=1, d_k=2, d_v=2, d_model=2, d_ff=2, n=1, vocab_size=4)
ID_MODEL = UserModel(None, None, False, None, None, "ids.keras", "a model taking token ids")


def test_the_documented_values():
    assert (limits.APP_MAX_TOKENS, limits.APP_MAX_FEATURES, limits.MAX_BATCH) == (4096, 1024, 1024)
    assert limits.MAX_TEXT_CHARS == 1_000_000 and limits.MAX_UPLOAD_BYTES == 20 * 2**20
    assert (limits.MAX_SENTENCE_CHARS, limits.MAX_SENTENCES) == (20_000, 64)
    assert limits.MAX_ABS_VALUE == 1e15 and limits.MAX_SEED == 4_294_967_295
    assert (limits.APP_HEADS, limits.MAX_TRAINED_HEADS, limits.MAX_LAYERS) == (16, 16, 12)
    assert limits.MAX_ARRAY_CELLS == 2**28  # 1 GiB of float32


def test_derived_limits_follow_the_base_ones():
    # the maths stops where memory does: each (B, H, T, S) stage is one array within 1 GiB
    assert limits.MAX_SCORE_CELLS == limits.MAX_ARRAY_CELLS == 268_435_456
    assert limits.APP_SCORE_CELLS == limits.APP_MAX_TOKENS**2 == 16_777_216
    assert limits.APP_INPUT_CELLS == limits.APP_MAX_TOKENS * limits.APP_MAX_FEATURES
    assert limits.MAX_D_FF == 4 * limits.APP_MAX_FEATURES  # the usual d_ff = 4 d_model
    assert limits.MAX_VOCAB == limits.MAX_DECODER_TOKENS == limits.APP_MAX_TOKENS


def test_every_limit_is_a_positive_number_and_used_by_the_package():
    sources = "\n".join(
        path.read_text(encoding="utf-8")
        for path in (ROOT / "attnviz").rglob("*.py")
        if path.name != "limits.py"
    )
    assert len(NAMES) == 26, NAMES
    for name in NAMES:
        value = getattr(limits, name)
        floats = ("MAX_ABS_VALUE", "MAX_ROPE_THETA", "MAX_POSITION")
        assert isinstance(value, float if name in floats else int) and value > 0, name
        assert re.search(rf"\b{name}\b", sources), f"{name} is enforced nowhere"


def test_every_page_limit_is_below_the_packages_and_used_by_a_page():
    pages = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "attnviz/ui").rglob("*.py"))
    for name in [name for name in vars(limits) if name.startswith("APP_")]:
        assert re.search(rf"\blimits\.{name}\b", pages), f"{name} is used by no page"
    assert limits.APP_HEADS < limits.MAX_SCORE_CELLS  # the maths takes any number of heads
    assert limits.APP_SCORE_CELLS < limits.MAX_SCORE_CELLS  # and any number of tokens
    assert limits.APP_INPUT_CELLS < limits.MAX_ARRAY_CELLS  # and of features
    assert limits.APP_DECODER_BATCH <= limits.MAX_BATCH
    assert limits.APP_DECODER_SIDE <= limits.MAX_DECODER_TOKENS


def test_the_largest_dot_product_stays_finite_in_float32():
    # Dk numbers of magnitude MAX_ABS_VALUE on both sides, and no row holds more than
    # MAX_ARRAY_CELLS features: a score below float32's largest (attention skips the check).
    largest = limits.MAX_ARRAY_CELLS * limits.MAX_ABS_VALUE**2  # 2.68e38
    assert largest < np.finfo(np.float32).max
    assert np.isfinite(np.float32(limits.MAX_ABS_VALUE) ** 2 * np.float32(limits.MAX_ARRAY_CELLS))


def test_the_seed_limit_is_numpys_legacy_seed_range():
    np.random.RandomState(limits.MAX_SEED)  # accepted by numpy
    with pytest.raises(ValueError):
        np.random.RandomState(limits.MAX_SEED + 1)


def test_the_upload_limit_is_the_servers():
    megabytes = SERVER_CONFIG["server"]["maxUploadSize"]
    assert megabytes * 2**20 == limits.MAX_UPLOAD_BYTES


def test_the_docs_state_the_limits():
    text = " ".join((ROOT / "docs" / "app.md").read_text(encoding="utf-8").split())
    section = text[text.index("## Limits") :][:600]
    for phrase in (
        f"The pages take at most {limits.APP_MAX_TOKENS:,} tokens",
        f"{limits.APP_MAX_FEATURES:,} features",
        f"batches of {limits.MAX_BATCH:,} sequences",
        f"{limits.APP_MAX_TOKENS:,}² attention cells",
        f"magnitude up to {limits.MAX_ABS_VALUE:.0e}".replace("e+", "e"),
        f"uploads of {limits.MAX_UPLOAD_BYTES // 2**20} MB",
        f"sentences of {limits.MAX_SENTENCE_CHARS:,} characters",
    ):
        assert phrase in section, phrase


def test_the_docs_say_the_maths_stops_at_memory_and_the_pages_at_their_own_limits():
    text = " ".join((ROOT / "docs" / "app.md").read_text(encoding="utf-8").split())
    section = text[text.index("## Limits") :][:1500]
    assert limits.MAX_ARRAY_CELLS == 2**28 and "2²⁸ numbers (1 GiB of float32)" in section
    assert limits.MAX_SCORE_CELLS == 2**28 and "at 2²⁸ attention cells of all heads" in section
    assert limits.APP_SCORE_CELLS == 4096**2 and "4,096² attention cells, 16 heads" in section
    assert f"{limits.APP_HEADS} heads, {limits.APP_DECODER_BATCH} sequences" in section
    assert f"and {limits.APP_DECODER_SIDE} tokens on the Decoder page" in section
    assert "The maths takes any number of tokens, features and heads" in section
    assert f"{limits.APP_MAX_FEATURES:,} features per matrix" in section


PAST_THE_LIMIT = [  # (limit, a call one step past it, the message it must raise)
    ("MAX_BATCH", lambda: RandomSpec(batch=1025), "`batch` must be from 1 to 1024"),
    ("MAX_SCORE_CELLS", lambda: compute_attention(*[np.zeros((16385, 1))] * 3),
     "1 sequence × 16,385 queries × 16,385 keys = 268,468,225; the limit is 268,435,456"),
    ("MAX_TEXT_CHARS", lambda: parse_matrix_text("1" * 1_000_001),
     "1,000,001 characters; at most 1,000,000"),
    ("MAX_UPLOAD_BYTES", lambda: load_matrix(b"1" * (20 * 2**20 + 1), "q.csv"),
     "20,971,521 bytes; at most 20,971,520 bytes"),
    ("MAX_SENTENCE_CHARS", lambda: encode_sentences("a" * 20_001),
     "has 20001 characters; at most 20000"),
    ("MAX_SENTENCES", lambda: encode_sentences(["a"] * 65), "received 65, at most 64"),
    ("MAX_ABS_VALUE", lambda: check_finite(np.array([[2e15]]), "query"),
     "magnitude at most 1e+15"),
    ("MAX_ARRAY_CELLS", lambda: compute_multihead(*[np.ones((1, 16384))] * 3, num_heads=128,
                                                  d_k=129, d_v=128),
     "the weight W_Q (heads × D × size) would have 128 × 16,384 × 129 = 270,532,608 numbers; "
     "the limit is 268,435,456 per array"),
    ("MAX_TRAINED_HEADS", lambda: TransformerConfig(heads=17), "`heads` must be from 1 to 16"),
    ("MAX_LAYERS", lambda: DecoderConfig(n=13), "`n` must be from 1 to 12"),
    ("MAX_D_FF", lambda: DecoderConfig(d_ff=4097), "`d_ff` must be from 1 to 4096"),
    ("MAX_VOCAB", lambda: DecoderConfig(vocab_size=4097), "`vocab_size` must be from 1 to 4096"),
    ("MAX_DECODER_TOKENS",
     lambda: run_decoder(np.zeros((2, 2049), int), np.zeros((2, 3, 2)), **TINY_DECODER),
     "2 sequences × 2049 tokens; the limit is 4096 tokens"),
    ("MAX_SEED", lambda: check_seed(2**32), "`seed` must be from 0 to 4294967295"),
    ("MAX_UNITS", lambda: NetworkConfig(units=257), "`units` must be from 1 to 256"),
    ("MAX_TRAINED_LAYERS", lambda: TransformerConfig(layers=7), "`layers` must be from 1 to 6"),
    ("MAX_TRAINED_D_MODEL", lambda: TransformerConfig(d_model=260),
     "`d_model` must be from 1 to 256"),
    ("MAX_EPOCHS", lambda: TrainConfig(epochs=201), "`epochs` must be from 1 to 200"),
    ("MAX_TRAIN_PAIRS", lambda: TrainConfig(n_pairs=200_001), "`n_pairs` must be from 1 to 200000"),
    ("MAX_TRAIN_BATCH", lambda: TrainConfig(batch_size=4097),
     "`batch_size` must be from 1 to 4096"),
    ("MAX_PAIRS", lambda: make_pairs("dates", 1_000_001, 0), "`n` must be from 1 to 1000000"),
    ("MAX_LM_TOKENS", lambda: get_lm_task("induction").encode("a" * 512),
     "512 characters; a language model reads at most 511 after <s>"),
    ("MAX_ROPE_THETA", lambda: check_rope_theta(1.01e9), "greater than 0 and at most 1e+09"),
    ("MAX_POSITION", lambda: apply_rope(np.ones((2, 4)), positions=[0, 2e6]),
     "finite positions of magnitude at most 1e+06"),
    ("MAX_TILE_STEPS", lambda: tiled_attention(*[np.ones((4096, 2))] * 3, key_tile=1, query_tile=1),
     "16,777,216 steps; the limit is 4,096"),
    ("MAX_VIEW_TOKENS", lambda: text_inputs(ID_MODEL, " ".join(["1"] * 257)),
     "The text makes 257 tokens; at most 256 are shown of one text"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("limit", "call", "message"), PAST_THE_LIMIT, ids=[case[0] for case in PAST_THE_LIMIT]
)
def test_one_past_each_limit_is_refused_with_the_limit_in_the_message(limit, call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_every_limit_has_a_past_the_limit_case():
    assert sorted(case[0] for case in PAST_THE_LIMIT) == sorted(NAMES)


PAGE = (limits.APP_MAX_TOKENS, limits.APP_MAX_FEATURES)  # what the Matrices page passes
PAST_THE_PAGE_LIMIT = [  # (a page's limit, the call a page makes one step past it, the message)
    ("APP_MAX_TOKENS", lambda: parse_matrix_text("1\n" * 4097, name="Q", max_shape=PAGE),
     "`Q` has 4,097 rows; at most 4,096 are allowed"),
    ("APP_MAX_FEATURES", lambda: parse_matrix_text("1 " * 1025, name="Q", max_shape=PAGE),
     "`Q` has 1,025 columns; at most 1,024 are allowed"),
    ("APP_SCORE_CELLS",
     lambda: RandomSpec(batch=2, queries=4096, keys=4096, max_cells=limits.APP_SCORE_CELLS),
     "2 × 4096 × 4096 attention cells; the limit is 16,777,216. Draw fewer"),
    ("APP_INPUT_CELLS", lambda: encode_sentences(["a " * 2100] * 2, d_model=1024, d_k=8,
                                                 max_cells=limits.APP_INPUT_CELLS),
     "= 4300800 numbers per array; at most 4194304"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("limit", "call", "message"), PAST_THE_PAGE_LIMIT, ids=[case[0] for case in PAST_THE_PAGE_LIMIT]
)
def test_one_past_a_pages_limit_is_refused_where_the_page_passes_it(limit, call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_the_library_takes_what_the_pages_refuse():
    # the same calls without the page's limits: the maths stops only where memory would
    assert parse_matrix_text("1\n" * 4097).shape == (4097, 1)
    assert parse_matrix_text("1 " * 1025).shape == (1, 1025)
    assert RandomSpec(batch=2, queries=4096, keys=4096).batch == 2
    assert encode_sentences(["a " * 2100] * 2, d_model=1024, d_k=8).inputs.shape == (2, 2100, 1024)


def test_the_pages_own_limits_are_what_their_inputs_allow():
    from attnviz.ui.pages import decoder

    most = {size.key: high for size, _, _, high in decoder.SIZES}
    assert (
        most["dec_batch"] == limits.APP_DECODER_BATCH and most["dec_t"] == limits.APP_DECODER_SIDE
    )
    assert most["dec_h"] == limits.APP_HEADS
    assert limits.APP_MAX_EPOCHS <= limits.MAX_EPOCHS
    assert max(limits.APP_TRAIN_PAIRS) <= limits.MAX_TRAIN_PAIRS


def test_at_the_limits_is_accepted():
    spec = RandomSpec(queries=4096, keys=4096, d_k=1, d_v=1, max_cells=limits.APP_SCORE_CELLS)
    assert spec.queries * spec.keys == limits.APP_SCORE_CELLS  # 4096² cells: a page's limit
    spec = RandomSpec(queries=2**14, keys=2**14, d_k=1, d_v=1)  # 16384²: memory's limit
    assert spec.queries * spec.keys == limits.MAX_SCORE_CELLS
    assert check_seed(limits.MAX_SEED) == limits.MAX_SEED
    assert check_finite(np.array([[1e15, -1e15]]), "query").max() == 1e15
    assert DecoderConfig(h=16, d_model=16, d_k=1, d_v=1, n=12, d_ff=4096, vocab_size=4096).h == 16
    # the maths takes real models' heads: 128 heads of 128 features on a width of 16 (H·Dk != D)
    assert DecoderConfig(h=128, d_model=16, d_k=128, d_v=128).h == 128
