"""The sidebar's masks: causal, prefix-LM, padding, local window, attention sinks, chunks and
packed documents. Each is a switch (and its number); together they are one `MaskSpec` (the
back end combines them: `attnviz.core.mask_spec`). Their slots are declared and written here
only; a preset or a lesson sets them through `apply`.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnviz.core import limits
from attnviz.core.settings import AttentionSettings
from attnviz.ui.frame.presenter import controls
from attnviz.ui.frame.state import Slot, slot

DEFAULTS = AttentionSettings()
CAUSAL = slot("causal", DEFAULTS.causal, url=True)
PADDING = slot("padding", True, url=True)  # apply the key padding mask
DOCUMENTS = slot("documents", "", url=True)  # packed documents' lengths, "3, 4, 2"; "" = off


@dataclass(frozen=True)
class Sized:
    """A mask rule that is off or on with one number (the window's w, the sinks' k, ...)."""

    name: str  # its `AttentionSettings` field
    on: Slot[bool]  # the switch
    size: Slot[int]  # its number once on
    label: str  # the switch's label
    size_label: str  # the number's label
    least: int  # the smallest number that means something
    help: str  # what it does, in one sentence


SIZED = (
    Sized("prefix", slot("prefix_on", False, url=True), slot("prefix", 2, url=True),
          "Prefix-LM (bidirectional prefix)", "Prefix length P", 1,
          "The first P tokens (the prompt) attend each other both ways; the rest is causal."),
    Sized("window", slot("window_on", False, url=True), slot("window", 1, url=True),
          "Local window", "Window half-width w", 0,
          "Query i may attend key j only if |i − j| ≤ w."),
    Sized("sinks", slot("sinks_on", False, url=True), slot("sinks", 1, url=True),
          "Attention sinks", "Sink tokens k", 1,
          "The first k keys stay visible to every query, whatever the window or the chunks "
          "hide (StreamingLLM keeps them in the cache)."),
    Sized("chunk", slot("chunk_on", False, url=True), slot("chunk", 4, url=True),
          "Chunked attention", "Chunk size C", 1,
          "Queries attend only within their own chunk of C tokens (causally within it when the "
          "causal mask is on, as in Llama 4)."),
)  # fmt: skip
SLOTS = {s.key: s for s in (CAUSAL, PADDING, DOCUMENTS)} | {
    s.key: s for rule in SIZED for s in (rule.on, rule.size)
}


def as_controls(values: dict[str, object]) -> dict[str, object]:
    """Settings (a preset's, a lesson's) as these controls' values: a rule given by its
    `AttentionSettings` name ("window": 2, None = off) becomes its switch and number; documents
    (lengths) become their text. Keys that are not mask controls are left out."""
    found = {key: value for key, value in values.items() if key in SLOTS and key != "documents"}
    for rule in SIZED:
        if rule.name in values and rule.on.key not in values:
            size = values[rule.name]
            found[rule.on.key] = size is not None
            if size is not None:
                found[rule.size.key] = size
    if "documents" in values:
        lengths = values["documents"]
        found[DOCUMENTS.key] = (
            lengths if isinstance(lengths, str) else ", ".join(map(str, lengths or ()))
        )
    return found


def mask_controls(way_decides: str = "") -> tuple[dict[str, object], bool]:
    """Draw the masks; return the `AttentionSettings` fields they set and whether the padding
    mask is on. `way_decides` (Multi-head): the causal and padding masks are the way of
    attention's, said in these words instead of switches."""
    side = controls("masks")
    side.subheader("Masks")
    if way_decides:
        side.caption(way_decides)
        found: dict[str, object] = {}
        use_padding = True
    else:
        found = {
            "causal": side.toggle(
                "Causal (look-ahead) mask",
                help="Query i may attend key j only if j ≤ i.",
                **CAUSAL.widget(),
            )
        }
        use_padding = side.toggle(
            "Padding mask",
            help="No query may attend a key marked as padding.",
            **PADDING.widget("value"),
        )
    rules = controls("mask rules")  # prefix-LM, window, sinks, chunks, packed documents
    if rules is not side:  # a lesson folded them away apart from causal and padding
        rules.subheader("More masks")
    for rule in SIZED:
        found[rule.name] = _sized(rule)
    lengths = rules.text_input(
        "Packed documents (lengths)",
        placeholder="e.g. 3, 4, 2 — empty: one document",
        help="Several sequences packed in one row: each token attends only within its own "
        "document (block-diagonal).",
        **DOCUMENTS.widget(),
    )
    found["documents"] = lengths
    return found, bool(use_padding)


def _sized(rule: Sized) -> int | None:
    side = controls("mask rules")
    if not side.toggle(rule.label, help=rule.help, **rule.on.widget()):
        return None
    return int(
        side.number_input(
            rule.size_label,
            min_value=rule.least,
            max_value=limits.APP_MAX_TOKENS,
            step=1,
            **rule.size.widget("value"),
        )
    )
