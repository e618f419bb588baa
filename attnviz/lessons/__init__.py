"""Lessons: the concepts of attention in order, each a short text, one prepared view of a page of
the app and one thing to try. Plain data: the app's lessons page draws them (`attnviz.ui`)."""

from attnviz.lessons.path import LESSONS, Lesson, get_lesson

__all__ = ["LESSONS", "Lesson", "get_lesson"]
