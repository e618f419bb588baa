"""Tests for ui/explorer/opening.py: what a link's `from` field opens again, and what it says
when it cannot."""

import pytest

import attnviz.ui.pages  # noqa: F401 - every page, as the app imports them: their reopeners
from attnviz.ui.explorer.opening import REOPENERS, reopened, session


def test_every_kind_a_link_can_name_has_its_reopener():
    assert set(REOPENERS) == {"step", "head", "lm", "model"}


def test_a_model_of_a_session_says_what_it_was_and_why_not():
    origin = session("a GRU translator trained in this session (Dates), dot score, step 3")
    with pytest.raises(ValueError, match="This link opened a GRU translator trained in this"):
        reopened(origin)
    with pytest.raises(ValueError, match="a browser session, which has ended"):
        reopened(origin)


@pytest.mark.parametrize(
    ("origin", "said"),
    [
        ("bogus:1:2", "must start with 'step:', 'head:', 'lm:' or 'model:'. Received: 'bogus:1:2'"),
        ("step:dates:dot", "names nothing that can be opened: not enough values"),
        ("head:reverse:self:0", "names nothing that can be opened: not enough values"),
        ("lm:induction", "names nothing that can be opened: not enough values"),
    ],
)
def test_a_field_that_names_nothing_says_so(origin, said):
    with pytest.raises(ValueError, match=said):
        reopened(origin)
