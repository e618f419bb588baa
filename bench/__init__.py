"""The benchmark (`python -m bench.benchmark`, see bench/README.md), the Learn benchmark
(`python -m bench.learn_bench`) and the docs' screenshots (`python -m bench.screenshots`).

Run from the repository root; servers start through `deploy.servers`, Chromium comes from
`deploy.chromium`. Not part of the installed package.
"""
