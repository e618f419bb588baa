"""The tasks a language model learns in Learn: sequences of characters, one token per character.

Shape letters: N sequences, T tokens a model reads (the task's `context`).

Every sequence starts with the beginning-of-sequence token `<s>` (id 0); the task's symbols
follow, `symbols[i]` with id i + 1. A training sequence holds T + 1 ids: the model reads the
first T and predicts the last T (each position predicts the id after it).

- "induction": `<s>`, then runs of r distinct random letters, each written 2 to 4 times
  (`qfz` `kwmb` `kwmb` `x` `kwmb` `ejd` …), among letters written once; half the sequences
  are one long run and its copy at the end (the shape that starts the circuit in training).
  The first run starts anywhere; r varies (4 to 16 by default), copies are adjacent or 1 to 3
  letters apart (`COPY_SHAPES` names the shapes a shipped model is tested on), so
  no head can copy from a fixed distance or place: a copy is predictable only by finding where
  the current letter occurred before and reading the letter after it, which is what an
  induction head does. No letter is drawn twice, so a letter comes back only in a copy.
  Fresh sequences every epoch.
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
LATE_SHARE = 0.5  # of induction sequences, one long run and its copy at the end: the copy sits
# at about the same place every time, so copying pays off early in training and the circuit
# forms (with copies anywhere alone it stays on the plateau for dozens of epochs)
TEXT_CONTEXT = 64  # T of the text task
TEXT_SYMBOLS = "".join(  # the text task's characters: what ordinary English text is made of
    sorted("\n !\"'(),-.:;?" + string.digits + string.ascii_uppercase + string.ascii_lowercase)
)
CHARACTER_NAMES = {" ": "space", "\n": "new line"}  # characters a list cannot show as such


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
                f"{', '.join(repr(c) for c in unknown)}. Allowed: "
                f"{allowed_characters(self.symbols)}. "
                "Remove or replace those characters."
            )
        index = {c: i + 1 for i, c in enumerate(self.symbols)}
        return np.array([BOS, *(index[c] for c in text)], dtype=np.int32)

    def decode(self, ids: object) -> str:
        """The characters of `ids` (`<s>` left out)."""
        return "".join(self.symbols[i - 1] for i in np.asarray(ids).reshape(-1) if i != BOS)

    def outside(self, text: str) -> str | None:
        """Why the task's models never saw a text like `text` (one `encode` accepts), or None
        when they did: longer than the training sequences, or (induction) a letter that comes
        back other than in a copy of a whole run."""
        if len(text) > self.context - 1:
            return (
                f"it is {len(text)} characters long, and the model trained on {self.context - 1} "
                f"after <s>: positions from {self.context} on are new to it"
            )
        return None if self.run_lengths is None else _broken_copy(text, self.run_lengths)


def _broken_copy(text: str, run_lengths: tuple[int, int]) -> str | None:
    """Where `text` repeats earlier letters in a way no induction sequence does: a letter
    twice in a row, or a copy of fewer than the shortest run's letters that stops before the
    text ends (in training a letter comes back only in a copy of a whole run)."""
    low, high = run_lengths
    last: dict[str, int] = {}  # letter -> where it was last
    start, source = -1, -1  # where the current copy began, and where its letter was before
    for i, char in enumerate(text):
        j = last.get(char, -1)
        if j == i - 1 and j >= 0:
            return f"{char!r} comes twice in a row at position {i + 1} (in training it never does)"
        if j < 0 or j != source + 1 or start < 0:  # no copy, or a new one from here
            start = i if j >= 0 else -1
        source, last[char] = j, i
        ends = i + 1 < len(text) and (j < 0 or text[i + 1] != text[j + 1])
        if start >= 0 and ends and i + 1 - start < low:
            return (
                f"{text[start : i + 1]!r} from position {start + 1} repeats earlier letters but "
                f"stops after {i + 1 - start}; in training, letters came back only as a copy of "
                f"a whole run of {low} to {high} different letters"
            )
    return None


def allowed_characters(symbols: str) -> str:
    """`symbols` for a reader, e.g. "letters a–z and A–Z, digits 0–9, space, new line and the
    marks ! " ' ( ) , - . : ; ?" (three or more letters or digits in a row as a range)."""
    groups: dict[str, list[list[str]]] = {"letters": [], "digits": [], "other": []}
    for char in sorted(set(symbols), key=lambda c: (c.isupper(), c)):  # a–z before A–Z
        kind = "letters" if char.isalpha() else "digits" if char.isdigit() else "other"
        run = groups[kind][-1] if groups[kind] else None
        if kind != "other" and run and ord(char) == ord(run[-1]) + 1:
            run.append(char)
        else:
            groups[kind].append([char])
    parts = [
        f"{kind} {_listed([f'{r[0]}–{r[-1]}' if len(r) > 2 else ', '.join(r) for r in runs])}"
        for kind, runs in groups.items()
        if runs and kind != "other"
    ]
    others = [r[0] for r in groups["other"]]
    parts += [CHARACTER_NAMES[c] for c in CHARACTER_NAMES if c in others]
    marks = [c for c in others if c not in CHARACTER_NAMES]
    parts += [f"the mark{'s' if len(marks) > 1 else ''} {' '.join(marks)}"] if marks else []
    return _listed(parts)


def _listed(items: list[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def induction_task(
    symbols: int = 26, min_run: int = 4, max_run: int = 16, context: int = 32
) -> LMTask:
    """An induction task: runs of distinct random letters, each written 2 to 4 times.

    Args:
        symbols: how many letters (a-z, then A-Z, then digits), from 2 to 62, at least
            `max_run` (a run's letters differ).
        min_run: the shortest run r, 2 or more.
        max_run: the longest run, at least `min_run`.
        context: T, the letters after `<s>` (a model reads `<s>` and the first T − 1 and
            predicts all T); two longest runs must fit (2·max_run ≤ T).

    Raises:
        ValueError: for sizes that do not fit together (the message says which).
    """
    check_int(symbols, "symbols", low=2, high=len(INDUCTION_ALPHABET))
    check_int(min_run, "min_run", low=2, high=MAX_LM_TOKENS // 2)
    check_int(max_run, "max_run", low=min_run, high=MAX_LM_TOKENS // 2)
    check_int(context, "context", low=2 * max_run, high=MAX_LM_TOKENS - 1)
    if max_run > symbols:
        raise ValueError(
            f"Too few symbols: a run of {max_run} letters needs {max_run} different letters, "
            f"but there are only {symbols} symbols. Received: symbols={symbols}, "
            f"max_run={max_run}. Use more symbols or a shorter max_run."
        )
    alphabet = INDUCTION_ALPHABET[:symbols]
    return LMTask(
        name="induction",
        title="Induction: random runs, repeated",
        description=(
            f"<s>, then runs of {min_run} to {max_run} distinct random letters (of {symbols}), "
            "each written 2 to 4 times, starting anywhere, its copies adjacent or apart, among "
            "letters written once. A copy can be predicted only by finding where the current "
            "letter was before and copying the letter after it."
        ),
        symbols=alphabet,
        context=context,
        example=_induction_example(alphabet, context, min_run, max_run),
        run_lengths=(min_run, max_run),
    )


def _induction_example(alphabet: str, context: int, min_run: int, max_run: int) -> str:
    """A text of the task (T − 1 letters at most): 3 letters, a run, 2 letters, the run again;
    its last 8 letters are all copies (what Generate leaves to predict)."""
    letters = "".join(seeded_rng(0, "induction example").permutation(list(alphabet)))
    run = min(max(min_run, 9), max_run)
    lead, gap, body = letters[:3], letters[3 : 3 + 2], letters[5 : 5 + run]
    return (lead + body + gap + body)[: context - 1]


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
        symbols=TEXT_SYMBOLS,
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
    """`<s>` and T letters of repeated runs among fresh letters: `(N, T + 1)`."""
    low, high = task.run_lengths
    rows = [_induction_body(rng, task.context, len(task.symbols), low, high) for _ in range(n)]
    body = np.array(rows, dtype=np.int64).reshape(n, task.context)  # (N, T)
    return np.concatenate([np.full((n, 1), BOS), body], axis=1).astype(np.int32)  # (N, T + 1)


def _induction_body(rng: np.random.Generator, t: int, symbols: int, low: int, high: int):
    """T ids. One sequence in `LATE_SHARE`: fresh letters, then a run of `high` − 4 to `high`
    fresh letters and its copy, ending the text. The others: fresh letters (0 to T − 2r of
    them: the first run starts anywhere), then runs of `low` to `high` fresh letters, each
    written 2 to 4 times, its copies adjacent or apart by 1 to 3 fresh letters, until T
    letters are written (the last copy may be cut). No letter is drawn twice, so a letter
    comes back only as part of a copy; when the fresh letters run out, the last run is
    written once more."""
    pool = [int(i) + 1 for i in rng.permutation(symbols)]  # fresh ids, each used once
    r = int(rng.integers(max(low, high - 4), high + 1))
    if rng.random() < LATE_SHARE and t - r <= symbols:  # a long run and its copy at the end
        return _fresh(pool, t - 2 * r) + 2 * _fresh(pool, r)
    r = int(rng.integers(low, high + 1))
    body = _fresh(pool, int(rng.integers(0, min(t - 2 * r, symbols - r) + 1)))
    run: list[int] = []
    while len(body) < t:
        if len(pool) >= r or not run:  # else the pool ran out: the last run once more
            run = _fresh(pool, r)
        body += run
        for _ in range(int(rng.integers(1, 4))):  # 1 to 3 more copies
            gap = 0 if rng.random() < 0.5 else int(rng.integers(1, 4))
            body += _fresh(pool, gap) + run
        body += _fresh(pool, int(rng.integers(0, 4)))  # fresh letters before the next run
        r = int(rng.integers(low, high + 1))
    return body[:t]


def _fresh(pool: list[int], k: int) -> list[int]:
    """Up to `k` letters never used yet (fewer when the pool runs out), taken from `pool`."""
    taken = pool[:k]
    del pool[:k]
    return taken


@dataclass(frozen=True)
class CopyShape:
    """One family of induction texts the shipped model must copy in (`COPY_SHAPES`): runs of
    distinct fresh letters written several times, cut to `length` letters."""

    length: int  # letters after <s> (the model reads <s> and all but the last)
    lead: tuple[int, int]  # fewest and most fresh letters before the first run
    run: tuple[int, int]  # shortest and longest run
    copies: tuple[int, int]  # fewest and most times each run is written
    gap: tuple[int, int]  # fewest and most fresh letters between copies
    runs: int = 1  # different runs, one after the other (fresh letters between them)


COPY_SHAPES = {  # name -> shape; the induction task's sequences hold all of them
    "starts early in a short text": CopyShape(17, (0, 2), (4, 10), (2, 2), (0, 0)),
    "starts late": CopyShape(31, (12, 18), (5, 6), (2, 2), (0, 0)),
    "short runs": CopyShape(31, (0, 8), (4, 4), (3, 4), (0, 3)),
    "long runs": CopyShape(31, (0, 3), (12, 15), (2, 2), (0, 1)),
    "several repeats, adjacent": CopyShape(31, (0, 5), (4, 7), (3, 4), (0, 0)),
    "copies apart": CopyShape(31, (0, 5), (5, 8), (2, 3), (1, 3)),
    "two different runs": CopyShape(31, (0, 3), (4, 6), (2, 2), (0, 2), runs=2),
}


def shape_sequences(shape: str, n: int, seed: int) -> np.ndarray:
    """`(N, length + 1)` int32 ids of `n` induction texts of the `COPY_SHAPES` entry `shape`,
    `<s>` first (26 letters, as the "induction" task); the same arguments give the same ids.

    Raises:
        ValueError: for an unknown shape, or an out-of-range `n` or `seed`.
    """
    check_choice(shape, "shape", tuple(COPY_SHAPES))
    check_int(n, "n", low=1, high=MAX_PAIRS)
    check_seed(seed)
    spec, symbols = COPY_SHAPES[shape], len(get_lm_task("induction").symbols)
    rng = seeded_rng(0, f"lm:shape:{shape}:{seed}")
    body = np.array([_shaped(rng, spec, symbols) for _ in range(n)], dtype=np.int64)
    return np.concatenate([np.full((n, 1), BOS), body], axis=1).astype(np.int32)


def _shaped(rng: np.random.Generator, spec: CopyShape, symbols: int) -> list[int]:
    """`spec.length` ids of one text of `spec`, fresh letters at the end if it falls short."""
    pool = [int(i) + 1 for i in rng.permutation(symbols)]
    draw = lambda pair: int(rng.integers(pair[0], pair[1] + 1))  # noqa: E731
    body = _fresh(pool, draw(spec.lead))
    for k in range(spec.runs):
        run = _fresh(pool, draw(spec.run))
        body += run
        for _ in range(draw(spec.copies) - 1):
            body += _fresh(pool, draw(spec.gap)) + run
        body += _fresh(pool, draw(spec.gap)) if k < spec.runs - 1 else []
    body += _fresh(pool, spec.length - len(body))
    if len(body) < spec.length:
        raise ValueError(f"The shape {spec} needs more than {symbols} letters.")
    return body[: spec.length]


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
