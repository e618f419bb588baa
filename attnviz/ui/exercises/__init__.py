"""A lesson's exercises on its page: the answer widgets, the checks' verdicts, the reveal and the
learner's progress (in the URL, per learner, nothing stored on the server)."""
