"""Inputs: matrices parsed from text and files, sentences turned into Q/K/V, the presets."""
