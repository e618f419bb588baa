"""The floor of the exercises benchmark: the least Streamlit page that does what lesson 1's
exercises do when answered, for a click on "Commit my guess" or "Check" to compare with
attnviz's (`attnviz/ui/exercises/view.py`).

Shape letters: T = 3 queries, S = 3 keys, F = 3 features.

One exercise a page, `?exercise=1b` (predict which key query i scores highest) or `1a` (type
the score of query i for key j), with `?variant=N`: the same small whole numbers for Q and K
as attnviz's exercise of that variant draws (`draw`, the same generator and rule), shown as
LaTeX matrices, then the answer widget (a radio or a text field) and two buttons, all inside an
`st.fragment` as attnviz draws each exercise. On "Commit my guess" (or "Check" with the right
number) it says whether the answer holds and draws the chart attnviz reveals: the scores Q Kᵀ
`(T, S)` in plain numpy as one plotly heatmap of attnviz's height and title, with the same
outlines (the right cell solid red, the guess dashed orange). "New numbers" draws the next
variant, as attnviz's does. The chart prints each cell's value, as attnviz's does. No
TensorFlow, no hover text or axis labels, no explanation, no tabs or other widgets: whatever
attnviz takes beyond this page is its own.
Run from `bench/`: `streamlit run floor_exercise.py`, then open `/?exercise=1b&variant=5`.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

TOKENS = FEATURES = 3  # queries, keys and features, as attnviz's lesson 1 exercises
REDRAW_STEP = 100_003  # the seed moves on by this per "New numbers" (attnviz's progress.seed_of)
TOLERANCE = 0.01  # a typed score within this of the right one counts
TITLES = {  # the revealed chart's title, as attnviz's reveal names it
    "1a": "Scores q · k",
    "1b": "Scores q · k: your guess and the largest",
}
RIGHT_LINE = dict(color="#ff2b2b", width=3, dash="solid")  # attnviz's answer outline
GUESS_LINE = dict(color="#e8590c", width=3, dash="dash")  # and the learner's


def generator(seed: int, name: str) -> np.random.Generator:
    """The random numbers of `name` (an exercise id, or one of its parts) at `seed`."""
    salt = sum((k + 1) * ord(c) for k, c in enumerate(name))
    return np.random.default_rng([int(seed) % 2**32, salt])


def draw(exercise_id: str, seed: int) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """Q and K `(3, 3)` of whole numbers in -3 to 3 whose rows of scores have one largest key,
    and the cell asked about: (i, j) for 1a, (i, -1) for 1b."""
    gen = generator(seed, exercise_id)
    while True:
        q = gen.integers(-3, 4, size=(TOKENS, FEATURES)).astype(np.float64)
        k = gen.integers(-3, 4, size=(TOKENS, FEATURES)).astype(np.float64)
        tops = np.sort(q @ k.T, axis=1)  # (T, F) x (F, S) -> (T, S), each row sorted
        if np.all(tops[:, -1] - tops[:, -2] >= 1) and len(np.unique(q @ k.T)) >= 6:
            break
    if exercise_id == "1a":
        i, j = (int(x) for x in generator(seed, "1a-cell").integers(0, TOKENS, size=2))
        return q, k, (i, j)
    return q, k, (int(generator(seed, "1b-query").integers(0, TOKENS)), -1)


def figure(scores: np.ndarray, title: str, right: tuple, guessed: tuple = ()) -> go.Figure:
    """The scores `(T, S)` as one heatmap of attnviz's height rule, each cell's value printed in
    it (as attnviz prints a small matrix's), `right` cells outlined solid and `guessed` ones
    dashed."""
    fig = go.Figure(go.Heatmap(z=scores, colorscale="RdBu", zmid=0, texttemplate="%{z:.3~g}"))
    height = int(min(900, max(300, 160 + 28 * scores.shape[0])))
    fig.update_layout(title=dict(text=title), height=height, yaxis=dict(autorange="reversed"))
    for cells, line in ((right, RIGHT_LINE), (guessed, GUESS_LINE)):
        for i, j in cells:
            fig.add_shape(type="rect", x0=j - 0.5, x1=j + 0.5, y0=i - 0.5, y1=i + 0.5, line=line)
    return fig


def number(x: float) -> str:
    """ "2", "-1.5": a number as attnviz writes it in its matrices."""
    text = f"{float(x):.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _matrix(name: str, m: np.ndarray) -> str:
    body = r" \\ ".join(" & ".join(number(x) for x in row) for row in m)
    return rf"{name} = \begin{{bmatrix}} {body} \end{{bmatrix}}"


def _new_numbers() -> None:
    st.session_state.redrawn = st.session_state.get("redrawn", 0) + 1
    st.session_state.committed = None
    st.session_state.pop("answer", None)


def _commit() -> None:
    st.session_state.committed = st.session_state.get("answer")


@st.fragment
def exercise(exercise_id: str, variant: int) -> None:
    """The exercise's numbers, answer and buttons; once answered, the verdict and chart."""
    seed = variant + REDRAW_STEP * st.session_state.get("redrawn", 0)
    q, k, (i, j) = draw(exercise_id, seed)
    for place, (name, m) in zip(st.columns(2), (("Q", q), ("K", k)), strict=True):
        place.latex(_matrix(name, m))
    predict = exercise_id == "1b"
    committed = st.session_state.get("committed")
    if predict:
        options = [f"key {n}" for n in range(TOKENS)]
        st.radio(f"Query {i} scores highest", options, index=None, horizontal=True, key="answer",
                 disabled=committed is not None)  # fmt: skip
    else:
        st.text_input(f"Score of query {i} for key {j}", key="answer")
    left, right = st.columns(2)
    left.button("Commit my guess" if predict else "Check", type="primary", on_click=_commit,
                disabled=predict and committed is not None)  # fmt: skip
    right.button("New numbers", on_click=_new_numbers)
    if committed is not None:
        _answered(q @ k.T, exercise_id, (i, j), committed)  # (T, F) x (F, S) -> (T, S)


def _answered(scores: np.ndarray, exercise_id: str, cell: tuple[int, int], answer: str) -> None:
    """The verdict on `answer` and, for a guess or a right score, the chart."""
    i, j = cell
    if exercise_id == "1b":
        best, picked = int(np.argmax(scores[i])), int(answer.split()[-1])
        (st.success if picked == best else st.warning)(f"Key {best} is largest.")
        chart = figure(scores, TITLES["1b"], right=((i, best),), guessed=((i, picked),))
    else:
        try:
            right = abs(float(answer) - scores[i, j]) <= TOLERANCE
        except ValueError:
            right = False
        if not right:
            st.warning("Not quite.")
            return
        st.success(f"Right: {number(scores[i, j])}.")
        chart = figure(scores, TITLES["1a"], right=((i, j),))
    st.plotly_chart(chart, theme="streamlit")


def main() -> None:
    """Draw the exercise the URL asks for."""
    st.set_page_config(page_title="attnviz exercise floor", layout="wide")
    st.title("attnviz exercise floor")
    exercise_id = st.query_params.get("exercise", "1b")
    exercise(exercise_id if exercise_id in TITLES else "1b", int(st.query_params.get("variant", 1)))


if __name__ == "__main__":  # as `streamlit run` runs it; the tests import its functions
    main()
