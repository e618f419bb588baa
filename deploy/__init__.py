"""Running attnviz's servers: the Streamlit launcher (`servers`), K replicas behind nginx
(`cluster`, `nginx_config`, the command `python -m deploy.run`) and the browser that drives the
app in the tests, the benchmark and the screenshots (`chromium`).

Not part of the installed package: these modules run from a checkout, with
`python -m deploy.run` or imported as `deploy.servers` from the repository root.
"""
