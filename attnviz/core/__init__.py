"""Core maths: limits and checks, masks, the Keras score layers, attention itself, row statistics.

Everything else in attnviz builds on these modules; they import nothing from the rest of it.
"""
