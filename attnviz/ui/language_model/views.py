"""The language model's views (the Language model page's tabs): every head on a text, heads
switched off, generation with the KV cache, and how the model learned (the phase change).
Wiring and drawing only: the numbers are `attnviz.learn.language`'s (`model`, `metrics`,
`generation`, `training`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from attnviz.core import limits
from attnviz.core.settings import AttentionSettings
from attnviz.core.ways import get_way
from attnviz.core.words import plural
from attnviz.drawing.ablation import ablation_figure
from attnviz.drawing.heatmap import heatmap
from attnviz.drawing.next_token import copying_words, next_token_figure
from attnviz.drawing.phase_change import (
    best_heads,
    biggest_jump,
    head_name,
    phase_change_figure,
)
from attnviz.drawing.translation import char_labels
from attnviz.inputs.problem import LearnedWeights
from attnviz.ui.explorer.opening import Opened, session
from attnviz.ui.frame.charts import chart
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import plain, shown
from attnviz.ui.frame.state import slot
from attnviz.ui.frame.tables import data_table
from attnviz.ui.models.heads_panel import HeadOpening, HeadsView, Section, model_view_panel

if TYPE_CHECKING:
    from attnviz.learn.language.model import LanguageModel, LMTrace

ABLATE_MODES = {  # mode -> what a switched-off head outputs (short: two fit a phone's width)
    "zero": "zeros (nothing)",
    "mean": "its mean output",
}
ABLATE_HELP = (
    "Zeros: the head adds nothing to the stream. Its mean output: the head adds what it adds "
    "on average over the fresh sequences, its usual contribution, without what it read in this "
    "one."
)
# the label that links written before 2026-11-27 carry for "mean"
OLD_MEAN_LABEL = "its mean output (its usual contribution, without what it read)"
ABLATE_MODE = slot(  # zero or mean ablation
    "lm_ablate", "zero", url=True, url_aliases={OLD_MEAN_LABEL: ABLATE_MODES["mean"]}
)
OFF = slot("lm_off", None, kind=list)  # the heads switched off on the text ("layer l · head h")
STEPS = slot("lm_steps", 8, url=True)  # tokens to generate
TEMPERATURE = slot("lm_temperature", 0.0, url=True)  # 0: greedy
GEN_SEED = slot("lm_gen_seed", 0, url=True)  # the sampling seed
STEP = slot("lm_step", -1)  # the Step slider: the generation step the KV cache view shows
CHOSEN_STEP = slot("lm_chosen_step", -1)  # the step the learner chose (-1: none, the last): a
# slider whose range changes is a new slider to Streamlit, so the choice is kept here
WORKED = slot("lm_worked", None, kind=dict, kept=True)  # the session's ablations, generations
WORKED_KEPT = 6  # results a session keeps
FRESH_SEQUENCES = 256  # fresh sequences the ablation table scores (~0.3 s on 2 cores)
FRESH_SEED = 12_345  # their seed: the same sequences on every visit, never trained on
TOP_NEXT = 5  # next tokens listed per step


def _kept(key: tuple, work):
    """`work()`, kept per session under `key` (the last `WORKED_KEPT`); None after showing
    why it failed."""
    kept = WORKED.get()
    if kept is None:
        kept = {}
        WORKED.set(kept)
    if key not in kept:
        result = shown(work)
        if result is None:
            return None
        while len(kept) >= WORKED_KEPT:
            kept.pop(next(iter(kept)))
        kept[key] = result
    return kept[key]


def _heads(model: LanguageModel) -> list[str]:
    c = model.config
    return [head_name(layer, head) for layer in range(c.layers) for head in range(c.heads)]


def _short_heads(model: LanguageModel) -> list[str]:
    """ "L0 · H1" for every head: a phone leaves the cache chart's cells room beside them."""
    c = model.config
    return [f"L{layer} · H{head}" for layer in range(c.layers) for head in range(c.heads)]


# ---------------------------------------------------------------- every head on the text


def heads_view(model: LanguageModel, trace: LMTrace, shipped_task: str | None) -> None:
    """The model view of the text: every layer × head, summaries, rollout, one head enlarged
    and opened in the explorer; each head's previous-token and induction score on this text."""
    forward = trace.forward
    _predictions(model, forward)
    c = model.config
    scheme = {"rope": f"RoPE (θ = {c.rope_theta:g})", "alibi": "ALiBi", "none": "no position "
              "scheme (the causal mask alone tells positions apart)"}[c.position]  # fmt: skip
    section = Section(
        "self-attention", "self", rollout=True,
        caption=f"Causal: each token sees itself and the tokens before it. Positions: {scheme}.",
    )  # fmt: skip
    view = HeadsView(
        trace.attention,
        axis_titles={"causal": ("token", "token")},
        sections={"causal": section},
        opener=lambda way, layer, head: head_opening(model, trace, layer, head, shipped_task),
        tokens=tuple(forward.tokens),  # its heads sort by their induction score on this text
    )
    model_view_panel(view)


def _predictions(model: LanguageModel, forward) -> None:
    """How sure the model was of each next token of the text, and where it guessed right."""
    tokens, predicted = forward.tokens, forward.predicted
    index = {label: i for i, label in enumerate(model.task.labels)}
    n = len(tokens) - 1
    sure = [float(forward.probabilities[i, index[tokens[i + 1]]]) for i in range(n)]
    right = sum(predicted[i] == tokens[i + 1] for i in range(n))
    chart(
        next_token_figure(char_labels(tokens[1:]), sure, char_labels(predicted[:-1]),
                          title="How sure it was of each next token (green: its best guess)"),
        "next-tokens", key="lm-next-tokens",
    )  # fmt: skip
    st.caption(
        f"The model guessed {right} of the {plural(n, 'token')} after <s> right; next, it "
        f"would write {plain(char_labels(predicted[-1:])[0])}. "
        + plain(copying_words(tokens, sure, predicted[:-1]))
    )


def head_opening(model, trace, layer: int, head: int, task: str | None) -> HeadOpening:
    result = trace.results[("causal", layer)]
    labels = tuple(char_labels(trace.forward.tokens))
    c = model.config
    named = f"the shipped language model ({task})" if task else (
        "a language model trained in this session")  # fmt: skip
    source = f"{named}, layer {layer} · head {head}"
    text = "".join(trace.forward.tokens[1:])  # the text read after <s>
    learned = LearnedWeights(
        params={},
        labels=(labels, labels),
        source=source,
        note="Q, K and V are this head's projections of the layer's input (its trained W_Q, "
        "W_K and W_V applied, before RoPE); the explorer rotates Q and K by their positions.",
        origin=f"lm:{task}:{layer}:{head}:{text}" if task else session(source),
    )
    opened = Opened(
        result.query_heads[0, head],  # (T, Dk), before RoPE
        result.key_heads[0, head],
        result.value_heads[0, head],
        learned,
        AttentionSettings(causal=True, position=c.position, rope_theta=c.rope_theta),
    )
    caption = (
        f"Layer {layer} · head {head}: scaled dot product, causal, "
        f"{'RoPE' if c.position == 'rope' else c.position}; the explorer recomputes it from this "
        "head's Q, K and V."
    )
    return HeadOpening(caption, opened)


# ---------------------------------------------------------------- heads switched off


def ablation_view(model: LanguageModel, task: str, text: str) -> None:
    """Each head switched off alone, scored on fresh sequences (table and heatmap); then any
    heads switched off together on the text."""
    mode = st.segmented_control(
        "A switched-off head outputs",
        list(ABLATE_MODES),
        format_func=ABLATE_MODES.get,
        default=ABLATE_MODE.default,
        required=True,
        help=ABLATE_HELP,
        **ABLATE_MODE.widget(),
    )
    table = _kept(("ablation", id(model), mode), lambda: _ablation_table(model, task, mode))
    if table is None:
        return
    base, rows, harmful = table.baseline, table.rows(), _most_harmful(table)
    figure = _ablation_figure(table, model.config.heads)
    st.caption(
        f"Scored on {FRESH_SEQUENCES} fresh sequences the model never trained on: intact, it "
        f"gets {100 * base.accuracy:.1f} % of next tokens right and "
        f"{_percent(base.in_context_accuracy)} of the in-context ones (tokens whose earlier "
        "occurrence tells what comes next). Each row switches one head off."
    )
    chart(figure, "ablation", key="lm-ablation")
    if harmful is not None:
        st.caption(harmful)
    data_table(
        {
            "head": [head_name(r["layer"], r["head"]) for r in rows],
            "previous-token score": [round(r["previous_token"], 3) for r in rows],
            "induction score": [_rounded(r["induction"]) for r in rows],
            "in-context accuracy off (%)": [_pct(r["in_context_accuracy"]) for r in rows],
            "change (points)": [_pct(r["in_context_accuracy_change"]) for r in rows],
            "loss off": [round(r["loss"], 3) for r in rows],
            "loss change": [round(r["loss_change"], 3) for r in rows],
        },
    )
    _off_on_text(model, text, mode)


def _ablation_table(model: LanguageModel, task: str, mode: str):
    """Each head of `model` switched off alone (`mode`), scored on `FRESH_SEQUENCES` fresh
    sequences of `task` (drawn only when the table is computed, not on every redraw)."""
    with back_end():
        from attnviz.learn.language.metrics import ablation_table
        from attnviz.learn.language.tasks import make_sequences
    ids = make_sequences(task, FRESH_SEQUENCES, seed=FRESH_SEED)
    return ablation_table(model, ids, mode)


def _ablation_figure(table, n_heads: int):
    """The heatmap of `table`: every metric with each head off, coloured by the harm."""
    with back_end():
        from attnviz.learn.language.metrics import ABLATION_METRICS
    names, values = table.matrix()
    return ablation_figure(
        [ABLATION_METRICS[n] for n in names], values,
        np.array([getattr(table.baseline, n) for n in names]),
        [not n.endswith("loss") for n in names], n_heads,
        title="One head off: each metric (its change), coloured by the harm",
    )  # fmt: skip


def _most_harmful(table) -> str | None:
    change = table.in_context_accuracy - table.baseline.in_context_accuracy  # (L, H)
    if not np.isfinite(change).any():
        return None
    layer, head = np.unravel_index(int(np.nanargmin(change)), change.shape)
    return (
        f"Switching {head_name(int(layer), int(head))} off hurts copying most: in-context "
        f"accuracy {_percent(table.in_context_accuracy[layer, head])} instead of "
        f"{_percent(table.baseline.in_context_accuracy)}. Its induction score is "
        f"{_rounded(table.baseline.induction[layer, head])}, its previous-token score "
        f"{table.baseline.previous_token[layer, head]:.2f}."
    )


def _off_on_text(model: LanguageModel, text: str, mode: str) -> None:
    st.subheader("Switch heads off on your text")
    heads = _heads(model)
    chosen = [h for h in (OFF.get() or []) if h in heads]
    OFF.set(chosen)
    off = st.multiselect("Heads to switch off", heads, **OFF.widget())
    if not off:
        st.caption("Pick heads to see the model's guesses on your text without them.")
        return
    with back_end():
        from attnviz.learn.language.model import Ablation
    pairs = tuple(divmod(heads.index(h), model.config.heads) for h in off)
    read = shown(lambda: (model.forward(text), model.forward(text, Ablation(pairs, mode))))
    if read is None:
        return
    intact, ablated = read
    tokens = intact.tokens
    n = len(tokens) - 1
    right = sum(intact.predicted[i] == tokens[i + 1] for i in range(n))
    right_off = sum(ablated.predicted[i] == tokens[i + 1] for i in range(n))
    data_table(
        {
            "token": list(char_labels(tokens[1:])),
            "guessed (intact)": list(char_labels(intact.predicted[:-1])),
            "guessed (heads off)": list(char_labels(ablated.predicted[:-1])),
        },
        height=min(35 * n + 38, 250),
    )
    st.caption(f"Right: {right} of {n} intact, {right_off} of {n} with {', '.join(off)} off.")


# ---------------------------------------------------------------- generation with the cache


def generation_view(model: LanguageModel, prompt: str) -> None:
    """Tokens generated one at a time after the prompt; at any step, which cached keys the new
    token's query attends to in every head, and how the cache grows."""
    room = limits.MAX_LM_TOKENS - 1 - len(prompt)
    left, middle, right = st.columns(3)
    room = max(room, 0)
    if STEPS.get() > room:  # a longer prompt leaves less room
        STEPS.set(min(STEPS.default, room))
    steps = int(left.number_input("Tokens to generate", 0, room, **STEPS.widget("value")))
    temperature = float(middle.number_input("Temperature (0: the most likely token)", 0.0,
                                            10.0, step=0.1, **TEMPERATURE.widget()))  # fmt: skip
    seed = int(right.number_input("Sampling seed", 0, limits.MAX_SEED, **GEN_SEED.widget()))
    with back_end():
        from attnviz.learn.language.generation import generate
    key = ("generation", id(model), prompt, steps, temperature, seed)
    generation = _kept(key, lambda: generate(model, prompt, steps, temperature=temperature,
                                             seed=seed))  # fmt: skip
    if generation is None:
        return
    st.markdown(f"**{plain(generation.prompt)}**`{plain(generation.generated)}`")
    context = model.task.context + 1  # <s> and the training length
    if len(generation.tokens) > context:
        st.warning(
            f"The model was trained on {model.task.context} tokens after <s>; from position "
            f"{context} on, its positions are new to it and its guesses may fall apart.",
            icon=":material/warning:",
        )
    _cache_step(model, generation)


def _cache_step(model: LanguageModel, generation) -> None:
    steps = generation.steps
    last = len(steps) - 1
    chosen = CHOSEN_STEP.get()
    STEP.set(chosen if 0 <= chosen <= last else last)  # kept, or the last when beyond
    t = int(st.slider("Step (position of the new token)", 0, last, **STEP.widget(),
                      on_change=lambda: CHOSEN_STEP.set(STEP.get()))) if last else 0  # fmt: skip
    step = steps[t]
    c = model.config
    kind = "read with the prompt in one pass (prefill)" if step.prefill else "generated, read alone"
    st.caption(
        f"Position {t}: {plain(char_labels([step.token])[0])} ({kind}). Its query attends to the "
        f"{plural(step.cache_rows, 'cached key')} {'0' if t == 0 else f'0 … {t}'} in each of "
        f"{plural(c.layers, 'layer')} × {plural(c.num_kv_heads, 'K/V head')}; the cache now "
        f"holds {step.cache_bytes:,} bytes ({plural(step.cache_rows, 'row')} × "
        f"{plural(c.layers, 'layer')} × {plural(c.num_kv_heads, 'K/V head')} × 2 (K and V) × "
        f"{plural(c.d_k, 'number')} × 4 bytes)."
    )
    weights = step.weights.reshape(-1, t + 1)  # (L·H, t + 1)
    keys = char_labels(generation.tokens[: t + 1])
    chart(
        heatmap(weights, kind="weights", title=f"Step {t}: every head over the cache",
                        row_labels=_short_heads(model), col_labels=keys, row_title="layer · head",
                        col_title="cached key", annotate=False),
        "cache-step", key="lm-cache-step",
    )  # fmt: skip
    order = np.argsort(step.probabilities)[::-1][:TOP_NEXT]
    labels = model.task.labels
    data_table(
        {
            "next token": [char_labels([labels[i]])[0] for i in order],
            "probability": [round(float(step.probabilities[i]), 4) for i in order],
        },
        width="content",
    )
    if step.next_token:
        st.caption(f"What came next: {plain(char_labels([step.next_token])[0])}.")
    cached = char_labels(generation.tokens)
    mean = generation.weights[-1, :, : t + 1, : t + 1].mean(axis=0)  # (t + 1, t + 1)
    future = ~get_way("causal").mask(t + 1, t + 1) & (mean == 0)  # grey, as in every chart
    chart(
        heatmap(mean, kind="weights", title=f"The last layer's heads' mean, rows 0 … {t}: "
                        "the rows the cache has produced so far", row_labels=cached[: t + 1],
                        col_labels=cached[: t + 1], blocked=future, annotate=False),
        "cache-rows", key="lm-cache-rows",
    )  # fmt: skip


# ---------------------------------------------------------------- how it learned


def learned_view(model: LanguageModel) -> None:
    """The shipped or trained model's record: loss, in-context accuracy and every head's
    scores per epoch (the phase change)."""
    with back_end():
        from attnviz.learn.language.training import LMCurves
    c = model.config
    curves = shown(lambda: LMCurves.of_stats(model.stats, c.layers, c.heads))
    if curves is None:
        return
    chart(phase_change_figure(curves, title="How it learned: loss, copying and the heads"),
          "phase-change", key="lm-phase-change")  # fmt: skip
    phase_change_caption(curves)


def phase_change_caption(curves) -> None:
    """What the figure shows, in numbers: when copying appeared and which heads did it."""
    jump = biggest_jump(curves.epochs, curves.val_in_context_accuracy)
    prev, ind = best_heads(curves.previous_token[-1], curves.induction[-1])
    words = []
    if jump is not None:
        k = list(curves.epochs).index(jump)
        words.append(
            f"In-context accuracy jumped most at epoch {jump}: "
            f"{_percent(curves.val_in_context_accuracy[k - 1])} → "
            f"{_percent(curves.val_in_context_accuracy[k])}, the validation loss "
            f"{curves.val_loss[k - 1]:.2f} → {curves.val_loss[k]:.2f} nats."
        )
    if ind is not None:
        words.append(
            f"At the end, {head_name(*ind)} is the strongest induction head "
            f"({curves.induction[-1][ind]:.2f})"
            + (f" and {head_name(*prev)} the strongest previous-token head "
               f"({curves.previous_token[-1][prev]:.2f})." if prev is not None else ".")
        )  # fmt: skip
    if words:
        st.caption(" ".join(words))


def _percent(x: float) -> str:
    return "–" if x is None or np.isnan(x) else f"{100 * x:.1f} %"


def _pct(x: float) -> float | None:
    return None if x is None or np.isnan(x) else round(100 * x, 1)


def _rounded(x: float) -> float | None:
    return None if x is None or np.isnan(x) else round(float(x), 3)
