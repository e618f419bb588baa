"""The translators: toy tasks with known alignments, and the GRU and Transformer translators
that learn them.

`tasks` (with `dates` and `numbers`) draws the pairs and knows each target character's source
span; `vocab` turns characters into ids. `network` builds the bi-GRU encoder / GRU decoder that
attends with attnviz's score layers, `model` wraps it as `Seq2SeqAttention` (greedy decoding and
its attention); `transformer_translator` is the small encoder–decoder `TransformerTranslator`.
`training` trains either with `keras.Model.fit`, `metrics` scores them (accuracy, alignment).
"""
