"""The benchmark's sections: their names (`--only NAME`) in the order they run, and their titles.

A section's number is its place in SECTIONS, and stands at the start of its title, of its heading
in bench/README.md and of its row on the docs' Performance page (a test checks they agree).
`python -m bench.benchmark` runs them; a section that also runs on its own (`python -m
bench.inspect_bench`) prints the same title.
"""

from __future__ import annotations

SECTIONS = (  # in the order they run
    "backend",
    "inspect",
    "figures",
    "app",
    "controls",
    "model_view",
    "your_model",
    "first_open",
    "memory",
    "load",
    "learn",
    "lm",
    "exercises",
    "class_load",
    "train_load",
)
TITLES = {
    "backend": "1. Back end: compute_attention vs Keras MultiHeadAttention and numpy (D=64)",
    "inspect": "2. Inspect: attnviz.inspect of a 12-layer, 12-head encoder vs a plain call",
    "figures": "3. Figures: the 4,096² heatmap vs numpy pooling + a plain plotly heatmap; "
    "a model view's standalone page vs plotly's write_html",
    "app": "4. App in headless Chromium vs the floor app (bench/floor_app.py)",
    "controls": "5. Today's controls (masks, positions) clicked → weights repainted, vs the "
    "floor app's causal toggle",
    "model_view": "6. Model view: click a head → enlarged head repainted, vs the floor app "
    "(bench/floor_model_view.py)",
    "your_model": "7. Your model: click a head of a 12 × 12-head encoder → enlarged, vs the "
    "floor app (bench/floor_model_view.py)",
    "first_open": "8. First open after the warm-up: each page's charts painted, vs a floor page "
    "drawing as many charts of the same heatmaps (bench/floor_charts.py)",
    "memory": "9. Memory: server RSS over reruns with changing sizes",
    "load": "10. Load: a classroom on one server (10 / 30 / 60 sessions each with its own "
    "input), a lecture hall of 200 on 2 replicas behind nginx, the students one core serves",
    "learn": "11. Learn: training vs plain fit, time to 99 %, other sessions while one trains",
    "lm": "12. Language model: train_lm vs a plain fit of the same model, time to 95 % "
    "in-context accuracy",
    "exercises": "13. Exercises: an answer checked → its chart revealed, vs a floor page drawing "
    "the same chart (bench/floor_exercise.py)",
    "class_load": "14. Class load: 200 students in a class on 2 replicas behind nginx with Redis: "
    "idle CPU, move → phones, answer → projector",
    "train_load": "15. Train load: 200 students press Train on 2 replicas behind nginx with Redis, "
    "vs the code before #43",
}
