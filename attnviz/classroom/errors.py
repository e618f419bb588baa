"""What can go wrong with a class, in words for the person who caused it or meets it."""

from __future__ import annotations


class ClassError(ValueError):
    """A class refused what was asked (an unknown code, a student acting as the teacher, an
    answer of the wrong shape...): the message says what, and what to do."""


class StoreDownError(ClassError):
    """The store did not answer (Redis restarting, the network): nothing was changed; try again
    in a moment."""
