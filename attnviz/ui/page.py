"""The page script `app.py` serves (Streamlit runs it once per session and per rerun)."""

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding the `attnviz` package
if ROOT not in sys.path:  # run on its own (`streamlit run attnviz/ui/page.py`, AppTest)
    sys.path.insert(0, ROOT)

from attnviz.ui.main import main  # noqa: E402

main()
