"""The Transformer's attention: multi-head, the three ways, the decoder stack and its layers."""
