"""The language model: a small decoder-only Transformer, its tasks, training, scores and
generation.

`tasks` draws the induction task's sequences and the small corpus's texts; `layers` is causal
self-attention with every head exposed, one block and the stack; `model` is the
`LanguageModel` (forward pass, trace, ablation); `training` trains it on fresh sequences every
epoch; `metrics` scores it and each head (previous-token, induction, ablation tables);
`generation` writes text token by token with a key/value cache.
"""
