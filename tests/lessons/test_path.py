"""Tests for lessons/path.py: what the lessons say agrees with what their pages draw."""

from attnviz.lessons import LESSONS


def _lesson(title_start: str):
    return next(lesson for lesson in LESSONS if lesson.title.startswith(title_start))


def test_untrained_attention_is_not_called_grey():
    # grey means "masked" on every chart of attnviz; untrained weights are evenly spread, dark
    text = _lesson("Attention that was learned").text
    assert "grey blur" not in text and "evenly" in text


def test_the_induction_lesson_does_not_promise_what_its_chart_may_not_show():
    # how sure the model is depends on the model: the chart says it, not the lesson
    text = _lesson("A language model copies").text
    assert "sure of every" not in text


def test_the_induction_lesson_says_how_often_the_trained_runs_come_back():
    # the shipped model trained on runs written 2-4 times, not only twice: the lesson says so
    from attnviz.learn.language.tasks import COPY_SHAPES

    words = {2: "two", 3: "three", 4: "four", 5: "five"}
    fewest = min(shape.copies[0] for shape in COPY_SHAPES.values())
    most = max(shape.copies[1] for shape in COPY_SHAPES.values())
    text = " ".join(_lesson("A language model copies").text.split())
    assert f"{words[fewest]} to {words[most]} times" in text
    assert "written twice" not in text
