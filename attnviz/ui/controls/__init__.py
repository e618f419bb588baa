"""The sidebar's controls (how attention is computed) and the input widgets pages share."""
