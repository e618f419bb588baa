"""The sidebar's position scheme: none, RoPE (rotate each pair of q and k features by position ×
frequency; its base θ) or ALiBi (add a per-head linear distance penalty to the scores; which
head's slope). Sinusoidal positions are added to the sentences' inputs (their own switch).
Slots declared and written here only; presets and lessons set them through `as_controls`.
"""

from __future__ import annotations

from attnviz.core import limits
from attnviz.core.positions import alibi_slope
from attnviz.core.settings import AttentionSettings
from attnviz.ui.controls.input_widgets import page_limit_help, say_page_limit
from attnviz.ui.frame.presenter import controls
from attnviz.ui.frame.state import slot

DEFAULTS = AttentionSettings()
SCHEMES = {
    "none": "None",
    "rope": "RoPE (rotary)",
    "alibi": "ALiBi (linear bias)",
}  # the scheme -> its label (the URL keeps the label, as the control shows it)
POSITION = slot(  # older and hand-written links may name the scheme ("rope"): the same
    "position", DEFAULTS.position, url=True, url_aliases={k: v for k, v in SCHEMES.items()}
)
ROPE_THETA = slot("rope_theta", DEFAULTS.rope_theta, url=True)  # RoPE's base θ
ALIBI_HEADS = slot("alibi_heads", DEFAULTS.alibi_heads, url=True)  # ALiBi: how many heads
ALIBI_HEAD = slot("alibi_head", DEFAULTS.alibi_head, url=True)  # ... and whose slope
SLOTS = {s.key: s for s in (POSITION, ROPE_THETA, ALIBI_HEADS, ALIBI_HEAD)}
ALIBI_PYTHON = "In Python, `alibi_slopes` and `compute_attention` take any number of heads."


def as_controls(values: dict[str, object]) -> dict[str, object]:
    """The position controls among `values` (`AttentionSettings` names are theirs too)."""
    return {key: value for key, value in values.items() if key in SLOTS}


def position_controls(rope_needs: str = "", heads: bool = False) -> dict[str, object]:
    """Draw the position scheme; return the `AttentionSettings` fields it sets. `rope_needs`
    says what RoPE needs of the inputs here, if anything (shown under the choice); `heads`:
    the page has many heads, each with its own ALiBi slope (no slope to choose)."""
    side = controls("positions")
    side.subheader("Positions")
    scheme = side.radio(
        "Position scheme",
        list(SCHEMES),
        format_func=SCHEMES.get,
        horizontal=True,
        help="How attention knows where tokens are. RoPE rotates each pair of q and k features "
        "by position × frequency, so q · k depends on i − j; ALiBi adds −m·|i − j| to the "
        "scores, a slope m per head.",
        **POSITION.widget(),
    )
    found: dict[str, object] = {"position": scheme}
    side = side.container()  # the scheme's own controls, in one place whatever the scheme, so
    # that the controls below keep theirs
    if scheme == "rope":
        found["rope_theta"] = float(
            side.number_input(
                "Base θ",
                min_value=1.0,
                max_value=limits.MAX_ROPE_THETA,
                format="%g",
                help="Pair p turns by position × θ^(−2p/D): 10000 in the first RoPE models, "
                "500000 in Llama 3. A larger θ turns slower.",
                **ROPE_THETA.widget("value"),
            )
        )
        if rope_needs:
            side.caption(rope_needs)
    elif scheme == "alibi" and heads:
        side.caption("Each head h of H gets its own slope m_h = 2^(−8h/H), h = 1 … H.")
    elif scheme == "alibi":
        say_page_limit(ALIBI_HEADS, limits.APP_HEADS, "ALiBi heads", ALIBI_PYTHON, side)
        heads = int(
            side.number_input(
                "Heads H", 1, limits.APP_HEADS, step=1,
                help=page_limit_help(limits.APP_HEADS, "ALiBi heads", ALIBI_PYTHON),
                **ALIBI_HEADS.widget("value"),
            )
        )  # fmt: skip
        if ALIBI_HEAD.get() >= heads:
            ALIBI_HEAD.set(0)
        head = int(
            side.number_input(
                "This head's slope: head", 0, heads - 1, step=1, **ALIBI_HEAD.widget("value")
            )
        )
        side.caption(f"Slope m = {alibi_slope(heads, head):.4g}: the score drops by m per token.")
        found.update(alibi_heads=heads, alibi_head=head)
    return found
