"""The tasks a language model learns in Learn: sequences of characters, one token per character.

Shape letters: N sequences, T tokens a model reads (the task's `context`).

Every sequence starts with the beginning-of-sequence token `<s>` (id 0); the task's symbols
follow, `symbols[i]` with id i + 1. A training sequence holds T + 1 ids: the model reads the
first T and predicts the last T (each position predicts the id after it).

- "induction": `<s>`, a few distinct random letters, then a run of n distinct random letters
  twice (`qfz` `kwmbxe` `kwmbxe`). The run length n varies (12 to 16 by default), so no head can
  copy from a fixed distance: the second run is predictable only by finding where the current
  letter occurred before and reading the letter after it, which is what an induction head
  does. Fresh sequences every epoch.
- "text": windows of T characters of a small corpus of short stories written for attnviz
  (`checkpoints/stories.txt`, package data; the first 90 % trains, the last 10 % validates).

Plain Python and numpy (no TensorFlow): the pages read the tasks before TensorFlow loads.
Sequences are drawn from `seeding.seeded_rng`, so the same task, n, seed and split always give
the same ids.
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass
from importlib.resources import files

import numpy as np

from attnviz.core.checks import check_choice, check_int, describe
from attnviz.core.limits import MAX_LM_TOKENS, MAX_PAIRS
from attnviz.core.seeding import check_seed, seeded_rng

BOS = 0  # the id of the beginning-of-sequence token every sequence starts with
BOS_LABEL = "<s>"  # how it is labelled
LM_TASKS = ("induction", "text")  # the named tasks, in display order
SPLITS = ("train", "validation")  # where a text window comes from (induction: ignored)
INDUCTION_ALPHABET = string.ascii_lowercase + string.ascii_uppercase + string.digits  # 62
CORPUS = files("attnviz.learn") / "checkpoints" / "stories.txt"  # the text task's corpus
TRAIN_SHARE = 0.9  # of the corpus characters, the first 90 % train
TEXT_CONTEXT = 64  # T of the text task


@dataclass(frozen=True)
class LMTask:
    """One language-model task: its symbols, its sequence length and how sequences are drawn."""

    name: str  # "induction" or "text"
    title: str  # a short heading
    description: str  # one or two sentences for a reader
    symbols: str  # the characters sequences are made of; symbols[i] has id i + 1 (0 is <s>)
    context: int  # T, tokens a model reads per training sequence (<s> and T − 1 more)
    example: str  # a text of the task (without <s>): the probe every epoch report shows
    run_lengths: tuple[int, int] | None = None  # induction: shortest and longest run; text: None

    @property
    def vocab_size(self) -> int:
        """V: ids run from 0 (`<s>`) to len(symbols)."""
        return len(self.symbols) + 1

    @property
    def labels(self) -> tuple[str, ...]:
        """`(V,)` the label of each id: `<s>`, then the symbols."""
        return (BOS_LABEL, *self.symbols)

    def encode(self, text: object, name: str = "text") -> np.ndarray:
        """`(1 + len(text),)` int32 ids of `text`, `<s>` first.

        Raises:
            ValueError: for a non-string, an empty or too long text, or characters the task
                does not know (the message names them and lists the allowed ones).
        """
        if not isinstance(text, str):
            raise ValueError(f"`{name}` must be a string. Received: {describe(text)}.")
        if not text:
            raise ValueError(f"`{name}` is empty. Type at least one character.")
        if len(text) + 1 > MAX_LM_TOKENS:
            raise ValueError(
                f"`{name}` is too long: {len(text)} characters; a language model reads at most "
                f"{MAX_LM_TOKENS - 1} after <s>. Shorten it."
            )
        unknown = sorted(set(text) - set(self.symbols))
        if unknown:
            raise ValueError(
                f"`{name}` holds characters the {self.name} task does not know: "
                f"{', '.join(repr(c) for c in unknown)}. Allowed: {self.symbols!r}. "
                "Remove or replace those characters."
            )
        index = {c: i + 1 for i, c in enumerate(self.symbols)}
        return np.array([BOS, *(index[c] for c in text)], dtype=np.int32)

    def decode(self, ids: object) -> str:
        """The characters of `ids` (`<s>` left out)."""
        return "".join(self.symbols[i - 1] for i in np.asarray(ids).reshape(-1) if i != BOS)


def induction_task(
    symbols: int = 26, min_run: int = 12, max_run: int = 16, context: int = 32
) -> LMTask:
    """An induction task: `<s>`, distinct random letters, then a run of them twice.

    Args:
        symbols: how many letters (a-z, then A-Z, then digits), from 2 to 62.
        min_run: the shortest run r, 2 or more.
        max_run: the longest run, at least `min_run`.
        context: T, the letters after `<s>` (a model reads `<s>` and the first T − 1 and
            predicts all T); two longest runs must fit (2·max_run ≤ T), and the letters before
            the second run (T − r) must all differ, so T − min_run ≤ symbols.

    Raises:
        ValueError: for sizes that do not fit together (the message says which).
    """
    check_int(symbols, "symbols", low=2, high=len(INDUCTION_ALPHABET))
    check_int(min_run, "min_run", low=2, high=MAX_LM_TOKENS // 2)
    check_int(max_run, "max_run", low=min_run, high=MAX_LM_TOKENS // 2)
    check_int(context, "context", low=2 * max_run, high=MAX_LM_TOKENS - 1)
    if context - min_run > symbols:
        raise ValueError(
            f"Too few symbols: {context} letters with a run of {min_run} have "
            f"{context - min_run} letters before the second run, and they must all differ, "
            f"but there are only {symbols} symbols. Received: symbols={symbols}, "
            f"min_run={min_run}, context={context}. Use more symbols, a longer min_run or a "
            "shorter context."
        )
    alphabet = INDUCTION_ALPHABET[:symbols]
    run = (min_run + max_run) // 2  # the example: a middle run, its last letter left to predict
    letters = "".join(seeded_rng(0, "induction example").permutation(list(alphabet)))
    before = letters[: context - run]  # the letters before the second run (the first run last)
    return LMTask(
        name="induction",
        title="Induction: a random run, repeated",
        description=(
            f"<s>, a few random letters, then a run of {min_run} to {max_run} distinct random "
            f"letters (of {symbols}) written twice. The second run can be predicted only by "
            "finding where the current letter was before and copying the letter after it."
        ),
        symbols=alphabet,
        context=context,
        example=before + before[-run:-1],
        run_lengths=(min_run, max_run),
    )


@functools.cache
def corpus_text() -> str:
    """The text task's corpus (package data), read once."""
    return CORPUS.read_text(encoding="utf-8")


@functools.cache
def _text_task() -> LMTask:
    text = corpus_text()
    return LMTask(
        name="text",
        title="Short stories, character by character",
        description=(
            f"Windows of {TEXT_CONTEXT} characters of {len(text):,} characters of short stories "
            "written for attnviz; the first 90 % trains, the last 10 % validates."
        ),
        symbols="".join(sorted(set(text))),
        context=TEXT_CONTEXT,
        example="A fox named Tamsin kept a calendar of acorns, and Tamsin",
    )


def get_lm_task(task: str | LMTask) -> LMTask:
    """The `LMTask` named `task` (one of `LM_TASKS`), or `task` itself if it is one."""
    if isinstance(task, LMTask):
        return task
    check_choice(task, "task", LM_TASKS)
    return induction_task() if task == "induction" else _text_task()


def make_sequences(task: str | LMTask, n: int, seed: int, split: str = "validation") -> np.ndarray:
    """`(N, T + 1)` int32 ids of `n` sequences of `task`, `<s>` first; the same arguments give
    the same sequences.

    Args:
        task: one of `LM_TASKS`, or an `LMTask`.
        n: how many sequences, from 1 to 1,000,000.
        seed: from 0 to 2**32 - 1.
        split: "train" or "validation": the corpus part a text window comes from (and its
            own random stream for every task).

    Raises:
        ValueError: for an unknown task or split, or an out-of-range `n` or `seed`.
    """
    spec = get_lm_task(task)
    check_int(n, "n", low=1, high=MAX_PAIRS)
    check_seed(seed)
    check_choice(split, "split", SPLITS)
    return draw_sequences(spec, n, f"{seed}:{split}", split)


def draw_sequences(task: LMTask, n: int, stream: str, split: str = "train") -> np.ndarray:
    """`(N, T + 1)` ids of `task` from the random stream named `stream` (unchecked arguments);
    training draws epoch e from `f"{seed}:epoch{e}"`."""
    rng = seeded_rng(0, f"lm:{task.name}:{task.run_lengths}:{task.context}:{stream}")
    if task.run_lengths is None:
        return _text_windows(task, n, rng, split)
    return _induction_sequences(task, n, rng)


def _induction_sequences(task: LMTask, n: int, rng: np.random.Generator) -> np.ndarray:
    """`<s>`, T − 2r distinct letters, a run of r more, the run again: `(N, T + 1)`."""
    low, high = task.run_lengths
    t = task.context  # letters after <s>
    runs = rng.integers(low, high + 1, size=(n, 1))  # (N, 1) r per sequence
    letters = np.argsort(rng.random((n, len(task.symbols))), axis=1) + 1  # (N, S) distinct ids
    k = np.arange(t)[None, :]  # (1, T) positions after <s>
    source = np.where(k < t - runs, k, k - runs)  # (N, T): the second run reads r back
    body = np.take_along_axis(letters, source, axis=1)  # (N, T)
    return np.concatenate([np.full((n, 1), BOS), body], axis=1).astype(np.int32)  # (N, T + 1)


def _text_windows(task: LMTask, n: int, rng: np.random.Generator, split: str) -> np.ndarray:
    """`<s>` and T characters from a random place of the corpus part `split`: `(N, T + 1)`."""
    ids = _corpus_ids(task.symbols)
    cut = int(len(ids) * TRAIN_SHARE)
    part = ids[:cut] if split == "train" else ids[cut:]
    t = task.context
    starts = rng.integers(0, len(part) - t + 1, size=(n, 1))  # (N, 1)
    body = part[starts + np.arange(t)[None, :]]  # (N, T)
    return np.concatenate([np.full((n, 1), BOS), body], axis=1).astype(np.int32)  # (N, T + 1)


@functools.cache
def _corpus_ids(symbols: str) -> np.ndarray:
    """`(C,)` the corpus as ids."""
    index = {c: i + 1 for i, c in enumerate(symbols)}
    return np.array([index[c] for c in corpus_text()], dtype=np.int32)
