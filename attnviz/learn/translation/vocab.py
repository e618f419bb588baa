"""Characters <-> token ids for one task, and the checks on text a user types.

Shape letters: N pairs, S source positions (`max_source_len`), T target positions
(`max_target_len + 1`: the target characters and the end token).

Source ids: 0 = padding, 1.. = the task's source characters. Target ids: 0 = padding, 1 = start
(the decoder's first input), 2 = end (the decoder's last output), 3.. = the target characters.
Teacher forcing feeds `[start, c1, ..., cn]` and trains towards `[c1, ..., cn, end]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attnviz.core.checks import describe
from attnviz.learn.translation.tasks import Task

PAD, START, END = 0, 1, 2  # the special target ids (PAD is also the source padding id)
_TARGET_SPECIALS = 3  # target character ids start after PAD, START and END


@dataclass(frozen=True)
class Vocabulary:
    """The characters of one task and their ids."""

    task: str  # the task name
    source_chars: str  # source characters; the id of source_chars[i] is i + 1
    target_chars: str  # target characters; the id of target_chars[i] is i + 3
    max_source_len: int  # S, most source characters
    max_target_len: int  # most target characters (T - 1)

    @classmethod
    def of(cls, task: Task) -> Vocabulary:
        """The vocabulary of `task`."""
        return cls(
            task.name, task.source_chars, task.target_chars, task.max_source_len,
            task.max_target_len,
        )  # fmt: skip

    @property
    def source_size(self) -> int:
        """Source ids run from 0 to source_size - 1."""
        return len(self.source_chars) + 1

    @property
    def target_size(self) -> int:
        """Target ids run from 0 to target_size - 1."""
        return len(self.target_chars) + _TARGET_SPECIALS

    @property
    def target_steps(self) -> int:
        """T, the decoder steps: the longest target plus its end token."""
        return self.max_target_len + 1

    def check_source(self, text: object, name: str = "text") -> str:
        """Return `text` if the task can read it, else raise a ValueError saying why."""
        if not isinstance(text, str):
            raise ValueError(f"`{name}` must be a string. Received: {describe(text)}.")
        if not text:
            raise ValueError(
                f"`{name}` is empty. Type 1 to {self.max_source_len} characters for the "
                f"{self.task} task."
            )
        if len(text) > self.max_source_len:
            raise ValueError(
                f"`{name}` is too long for the {self.task} task: {len(text)} characters, the "
                f"most is {self.max_source_len}. Shorten it."
            )
        unknown = sorted(set(text) - set(self.source_chars))
        if unknown:
            raise ValueError(
                f"`{name}` holds characters the {self.task} task does not know: "
                f"{', '.join(repr(c) for c in unknown)}. Allowed: {self.source_chars!r}. "
                "Remove or replace those characters."
            )
        return text

    def encode_sources(self, texts: Sequence[str]) -> np.ndarray:
        """`(N, S)` int32 source ids, padded with 0 (the texts are checked first)."""
        ids = np.zeros((len(texts), self.max_source_len), dtype=np.int32)  # (N, S)
        index = {c: i + 1 for i, c in enumerate(self.source_chars)}
        for row, text in enumerate(texts):
            self.check_source(text)
            ids[row, : len(text)] = [index[c] for c in text]
        return ids

    def encode_targets(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Teacher-forcing arrays for target strings.

        Returns:
            `(decoder_inputs (N, T), decoder_targets (N, T), weights (N, T))`: int32 inputs
            `[start, c1, ..., cn, pad...]`, int32 targets `[c1, ..., cn, end, pad...]` and
            float32 weights, 1 where the target is a character or the end token, else 0.
        """
        steps = self.target_steps
        inputs = np.zeros((len(texts), steps), dtype=np.int32)  # (N, T)
        targets = np.zeros((len(texts), steps), dtype=np.int32)  # (N, T)
        index = {c: i + _TARGET_SPECIALS for i, c in enumerate(self.target_chars)}
        for row, text in enumerate(texts):
            if len(text) > self.max_target_len or set(text) - set(self.target_chars):
                raise ValueError(f"{text!r} is not a target of the {self.task} task.")
            ids = [index[c] for c in text]
            inputs[row, : len(ids) + 1] = [START, *ids]
            targets[row, : len(ids) + 1] = [*ids, END]
        weights = (targets != PAD).astype(np.float32)  # (N, T)
        return inputs, targets, weights

    def decode_target(self, ids: Sequence[int]) -> str:
        """The characters of target ids, up to (not including) the first end or padding id."""
        chars = []
        for token in ids:
            if token in (END, PAD):
                break
            if token >= _TARGET_SPECIALS:
                chars.append(self.target_chars[token - _TARGET_SPECIALS])
        return "".join(chars)
