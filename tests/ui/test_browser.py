"""End to end: the real app in headless Chromium, as a user clicks and types.

Fixtures and the `App` helper live in `browser_support.py`. Expected numbers are computed here
with float64 numpy (an independent softmax), or pinned from the NumPy lab preset.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from app_support import grid_blocks
from browser_support import WAIT_SECONDS, App, close  # fixtures: conftest's pytest_plugins
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from attnviz.ui.modes.three_ways import HEADS_TITLE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

Q_LABEL = "Q (queries): one row per line"
K_LABEL = "K (keys): one row per line"
V_LABEL = "V (values): one row per line"
CAUSAL = "Causal (look-ahead) mask"
SENTENCES = "Sentences, one per line (shorter ones are padded with <pad>)"
WEIGHTS = "Attention weights"
NUMPY_LAB = [[0.150325, 0.849675], [0.150325, 0.849675]]  # the default matrices, no mask
NUMPY_LAB_CAUSAL = [[1.0, 0.0], [0.150325, 0.849675]]


def reference_weights(q: list, k: list, causal: bool = False) -> list[list[float]]:
    """softmax(Q Kᵀ / √Dk) in float64, with an optional causal mask."""
    q, k = np.asarray(q, float), np.asarray(k, float)
    scores = q @ k.T / np.sqrt(k.shape[1])  # (T, D) x (D, S) -> (T, S)
    if causal:
        scores = np.where(np.tril(np.ones_like(scores, bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).tolist()


def test_first_load_paints_the_heatmaps(app: App):
    app.open()
    page = app.page
    assert page.get_by_role("heading", level=1).inner_text() == "attnviz"
    assert "attnviz" in page.title()
    titles = app.chart_titles()
    assert len(titles) >= 4, titles
    assert {"Raw scores", WEIGHTS, "Output (context vectors)"} <= set(titles)
    assert page.locator(".js-plotly-plot .main-svg").count() >= 4  # drawn, not just mounted
    assert app.exceptions() == 0
    assert app.alerts() == []
    assert app.text(Q_LABEL) == "1 0 0\n0 1 0"  # the NumPy lab's matrices
    causal = app.switch(CAUSAL).is_checked()
    assert close(app.weights(), NUMPY_LAB_CAUSAL if causal else NUMPY_LAB)
    assert app.errors == []
    # the chart code the page loads early (loading.load_chart_code) is the module the charts
    # use: one download of it, not a second copy under another address
    loaded = page.evaluate("performance.getEntriesByType('resource').map((e) => e.name)")
    assert len([name for name in loaded if "/PlotlyChart." in name]) == 1, loaded


def test_the_chart_code_loads_once_the_controls_are_drawn_with_no_chart_yet(open_app):
    # Q and K of different widths: the results say why and draw no chart, yet the page asked
    # for the results (loading.back_end), so the chart code is loading (loading.load_chart_code)
    app = open_app()
    app.open(f"{app.url}/matrices?q_text=1+2&k_text=1+2+3%0A4+5+6&v_text=1%0A2", charts=0)
    assert "Dq == Dk" in app.wait_for_alerts()
    app.wait_until(
        "() => performance.getEntriesByType('resource').some((e) =>"
        " e.name.includes('/PlotlyChart.') && e.responseEnd > 0)",
        what="the chart code to be loaded",
    )
    assert app.page.locator(".js-plotly-plot").count() == 0
    assert app.errors == []


def test_first_visit_link_reopens_the_same_view(open_app):
    first = open_app().open()
    causal = first.switch(CAUSAL).is_checked()
    weights = first.weights()
    second = open_app().open(first.location())  # a reload or a shared first-visit link
    assert second.switch(CAUSAL).is_checked() == causal
    assert second.text(Q_LABEL) == first.text(Q_LABEL)
    second.wait_for_weights(weights)


def test_typed_matrices_and_a_preset_update_the_charts(app: App):
    app.open()
    app.set_switch(CAUSAL, False)  # a first visit may start with the preset's causal mask
    q, k, v = [[2, 0], [0, 2]], [[1, 0], [0, 1], [1, 1]], [[1, 2], [3, 4], [5, 6]]
    for label, matrix in ((Q_LABEL, q), (K_LABEL, k), (V_LABEL, v)):
        app.type_text(label, "\n".join(" ".join(map(str, row)) for row in matrix))
    expected = reference_weights(q, k)
    app.wait_for_weights(expected)
    assert close(app.z("Raw scores"), [[2, 0, 2], [0, 2, 2]])
    output = (np.asarray(expected) @ np.asarray(v, float)).tolist()
    assert close(app.z("Output (context vectors)"), output)
    assert app.alerts() == []

    app.select("Preset", "One-hot queries: sharp attention")
    app.wait_for_text(Q_LABEL, "4 0 0 0\n0 4 0 0\n0 0 4 0\n0 0 0 4")  # the preset's Q
    assert app.text(K_LABEL) == "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1"
    assert app.text(V_LABEL) == "1 0\n0 1\n-1 0\n0 -1"
    app.wait_for_weights(reference_weights(np.eye(4) * 4, np.eye(4)))


def test_causal_toggle_changes_the_weights(app: App):
    app.open()
    app.set_switch(CAUSAL, False)  # a first visit may start with the preset's causal mask
    app.wait_for_weights(NUMPY_LAB)
    app.wait_for_query({"causal": None})  # off: not in the URL
    app.set_switch(CAUSAL, True)
    weights = app.wait_for_weights(NUMPY_LAB_CAUSAL)
    assert weights[0] == [1.0, 0.0]  # exact: the masked key gets nothing
    app.wait_for_query({"causal": ["true"]})


def test_sentences_show_padding_tokens_as_text(app: App):
    app.open()
    app.open_page("Sentences")
    app.page.get_by_label(SENTENCES, exact=True).wait_for()
    app.type_text(SENTENCES, "The dog barked loudly today.\nHi there.")
    ticks = app.wait_for_ticks(WEIGHTS, "barked")  # sentence 0
    assert "<pad>" not in ticks  # the longer sentence needs no padding

    app.set_number("View sentence (0 – 1)", 1)
    ticks = app.wait_for_ticks(WEIGHTS, "Hi")  # sentence 1
    assert "<pad>" in ticks  # shown as text...
    assert app.page.locator(".js-plotly-plot pad").count() == 0  # ...not parsed as a tag
    html = app.page.locator(".js-plotly-plot .xtick text, .js-plotly-plot .x2tick text")
    assert "&lt;pad&gt;" in html.evaluate_all("ticks => ticks.map(t => t.innerHTML)")
    weights = np.asarray(app.weights())  # Hi there . <pad> <pad> <pad>
    assert weights.shape == (6, 6)
    np.testing.assert_allclose(weights[:, 3:], 0)  # the padding mask hides the pads
    np.testing.assert_allclose(weights.sum(axis=1), 1, atol=1e-5)


def test_compare_view_draws_a_b_and_their_difference(app: App):
    app.open()
    app.set_switch(CAUSAL, True)
    app.wait_for_weights(NUMPY_LAB_CAUSAL)
    app.open_tab("Compare")
    titles = app.wait_for_chart("A − B")
    assert titles == ["A: current settings", "B: no masks", "A − B"]
    app.wait_for_weights(NUMPY_LAB_CAUSAL, "A: current settings")
    app.wait_for_weights(NUMPY_LAB, "B: no masks")
    diff = (np.asarray(NUMPY_LAB_CAUSAL) - np.asarray(NUMPY_LAB)).tolist()
    assert close(app.z("A − B"), diff)
    assert "view=Compare" in app.location()


def test_weights_csv_download(app: App):
    app.open()
    app.set_switch(CAUSAL, True)
    app.wait_for_weights(NUMPY_LAB_CAUSAL)
    app.open_tab("Download")
    button = app.page.get_by_role("button", name="weights.csv", exact=True)
    with app.page.expect_download() as info:
        button.click()
    download = info.value
    assert download.suggested_filename == "attnviz-weights.csv"
    rows = list(csv.reader(io.StringIO(download.path().read_text())))
    assert rows[0] == ["", "0", "1"]
    assert [row[0] for row in rows[1:]] == ["0", "1"]
    assert close([[float(x) for x in row[1:]] for row in rows[1:]], NUMPY_LAB_CAUSAL, tol=1e-6)
    assert rows[1][1:] == ["1.0", "0.0"]


def test_shared_url_reopens_the_same_view(open_app):
    first = open_app().open()
    first.set_switch(CAUSAL, True)
    first.choose("Score function", "general")
    first.type_text(Q_LABEL, "1 1 0\n0 1 1")
    wanted = {"causal": ["true"], "score": ["general"], "q_text": ["1 1 0\n0 1 1"]}
    first.wait_for_query(wanted)
    dot_scores = [[3, 9], [5, 11]]  # Q Kᵀ: what the dot score would give
    weights = first.wait_until(
        "(page, dot) => { const raw = page.z('Raw scores'), w = page.weights('Attention weights');"
        " return raw && raw.length === 2 && !page.close(raw, dot, 1e-5) && w"
        " && w[0][0] === 1 && w[0][1] === 0 && w; }",
        dot_scores, "the general score's causal weights",
    )  # fmt: skip
    url = first.location()

    second = open_app().open(url)  # a new context: a fresh session with only the URL
    assert second.switch(CAUSAL).is_checked()
    general = second.page.get_by_role("radiogroup", name="Score function").get_by_role(
        "radio", name="general"
    )
    assert general.is_checked()
    assert second.text(Q_LABEL) == "1 1 0\n0 1 1"
    second.wait_for_weights(weights)
    assert second.alerts() == []


def test_bad_input_shows_its_message_and_the_page_keeps_working(app: App):
    app.open()
    app.type_text(Q_LABEL, "1 2\n3 x")
    alert = app.wait_for_alerts()
    assert "row 2, column 2: 'x' is not a number" in alert
    q_column = app.page.locator('[data-testid="stColumn"]').filter(
        has=app.page.get_by_label(Q_LABEL, exact=True)
    )
    assert q_column.locator('[data-testid="stAlertContentError"]').count() == 1  # next to Q
    app.wait_for_no_charts()
    assert app.exceptions() == 0
    assert app.switch(CAUSAL).is_visible()  # the sidebar still works
    assert app.text(Q_LABEL) == "1 2\n3 x"  # what the user typed stays
    app.set_switch(CAUSAL, True)

    app.type_text(Q_LABEL, "1 0 0\n0 1 0")
    app.wait_for_weights(NUMPY_LAB_CAUSAL)
    app.wait_for_alerts(present=False)


def test_html_in_a_sentence_is_shown_as_text_and_runs_nothing(open_app):
    app = open_app().open()
    app.open_page("Sentences")
    app.page.get_by_label(SENTENCES, exact=True).wait_for()
    attack = "<img src=x onerror=alert(1)>"
    app.type_text(SENTENCES, attack)
    ticks = app.wait_for_ticks(WEIGHTS, "onerror")
    app.wait_for_charts(4)
    assert {"<", "img", "src", "=", "x", "onerror", "alert", "(", "1", ")", ">"} <= set(ticks)
    assert app.text(SENTENCES) == attack
    assert_harmless(app)
    app.open_tab("Step by step")  # tokens also appear in captions and the arithmetic
    app.page.locator('[data-testid="stCode"]').filter(has_text="(<)").first.wait_for()
    assert_harmless(app)

    app.wait_for_query({"sentences": [attack]})
    shared = open_app().open(app.location())  # the same text arriving by a link
    shared.wait_for_text(SENTENCES, attack)
    shared.wait_for_ticks(WEIGHTS, "onerror")
    assert_harmless(shared)


def assert_harmless(app: App) -> None:
    """No injected element, no dialog, no script error."""
    assert app.page.locator('img[src="x"]').count() == 0
    assert app.page.evaluate("document.querySelectorAll('[onerror]').length") == 0
    assert app.dialogs == []
    assert app.errors == []


# The values of a head grid's "weights" trace (NaN as None): every head's block, gaps between.
GRID_VALUES = """(page, title) => { const div = page.chart(title);
  const trace = div && div._fullData.find((t) => t.name === 'weights');
  return trace && trace.z.map((row) => Array.from(row, (x) => Number.isFinite(x) ? x : null)); }"""


def test_multihead_grid_and_line_view_hover(app: App):
    """Issue 5's views in a real browser: every head (one chart, a block of cells per head), the
    enlarged head, and the line view, where hovering a query token leaves only that token's
    lines visible."""
    app.open(f"{app.url}/?mode=Multi-head&mh_h=2", charts=4)
    for title in (HEADS_TITLE, "Head 0 (enlarged)", "Average of the heads"):
        titles = app.wait_for_chart(title)  # the page draws other charts above the grid first
    assert {HEADS_TITLE, "Head 0 (enlarged)", "Average of the heads"} <= set(titles)
    grid = np.array(app.read(GRID_VALUES, HEADS_TITLE), dtype=float)  # (1 + T, 2S + 1)
    head0, head1 = np.nan_to_num(grid_blocks(grid, 1, 2)[0])  # blocked cells weigh 0
    assert np.allclose(head0, np.array(app.weights("Head 0 (enlarged)"), dtype=float), atol=1e-5)
    average = np.array(app.weights("Average of the heads"), dtype=float)
    assert np.allclose(average, (head0 + head1) / 2, atol=1e-5)
    assert np.isnan(grid[1:, (grid.shape[1] - 1) // 2]).all()  # the gap between the blocks
    frame = app.page.locator("iframe").first.element_handle().content_frame()
    frame.wait_for_selector("svg text")  # the line view
    texts = frame.locator("svg text")
    total = frame.locator("svg line").count()
    assert total > 0
    texts.first.hover()  # the first query token: its lines stay, the others get display: none
    visible = frame.wait_for_function(
        "(total) => { const n = Array.from(document.querySelectorAll('svg line'))"
        ".filter(l => l.style.display !== 'none').length; return n < total && n; }",
        arg=total, timeout=WAIT_SECONDS * 1000,
    ).json_value()  # fmt: skip
    assert 0 < visible < total  # only this token's lines remain
    assert app.dialogs == [] and app.errors == []


def test_a_folded_expander_draws_its_charts_when_opened(app: App):
    """How the enlarged head's Q, K and V are made: nothing drawn while folded (its nine charts
    cost every run), drawn when a person opens it, kept open for another head."""
    app.open(f"{app.url}/multihead?mh_h=2", charts=4)
    app.wait_for_chart(HEADS_TITLE)
    assert "W_Q (d_model × 8)" not in app.chart_titles()
    app.page.get_by_text("How the enlarged head's Q, K and V are made from the tokens").click()
    titles = app.wait_for_chart("W_Q (d_model × 8)")
    assert {"Q = X · W_Q", "K = X · W_K", "V = X · W_V"} <= set(titles)
    assert app.dialogs == [] and app.errors == []


def test_zoom_keeps_the_token_labels_on_their_cells(app: App):
    app.open()
    app.open_page("Sentences")
    app.page.get_by_label(SENTENCES, exact=True).wait_for()
    app.type_text(SENTENCES, "The cat sat on the mat")
    app.wait_for_ticks(WEIGHTS, "mat")  # the sentence's labels
    chart = app.page.locator(".js-plotly-plot").filter(has_text=WEIGHTS).first
    full = [[-0.5, 5.5], [-0.5, 5.5], [5.5, -0.5], [5.5, -0.5]]  # x, x2, y, y2: every cell
    for attempt in range(3):  # a late redraw of the page may swallow a drag: drag again
        app.wait_until("(page) => page.idle()", None, "the page to be idle")
        app.scroll_to(chart)
        box = chart.locator(".nsewdrag").first.bounding_box()
        app.page.mouse.move(box["x"] + box["width"] * 0.05, box["y"] + box["height"] * 0.05)
        app.page.mouse.down()
        app.page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5, steps=8)
        app.page.mouse.up()
        try:
            zoomed = "(r, full) => r[0][0] !== full[0][0]"
            x, x2, y, y2 = _wait_for_ranges(app, chart, zoomed, full, 10 if attempt < 2 else 30)
            break
        except PlaywrightTimeout:
            continue
    assert x == x2 and y == y2  # the label axes moved with the cells
    assert x[1] - x[0] < 4 and y[0] - y[1] < 4  # and it did zoom in
    unzoomed = "(r, full) => JSON.stringify(r) === JSON.stringify(full)"
    for attempt in range(3):  # a double click plotly reads as two clicks: double-click again
        chart.locator(".nsewdrag").first.dblclick()
        try:
            _wait_for_ranges(app, chart, unzoomed, full, 10 if attempt < 2 else 30)
            break
        except PlaywrightTimeout:
            continue
    else:
        raise AssertionError("a double click never reset the zoom to every cell")


def _wait_for_ranges(app: App, chart, condition: str, full: list, seconds=WAIT_SECONDS) -> list:
    """Wait until the ranges of the chart's four axes meet `condition(ranges, full)`; them."""
    script = (
        "([d, full]) => { const r = ['xaxis', 'xaxis2', 'yaxis', 'yaxis2']"
        f".map(a => d._fullLayout[a].range); return ({condition})(r, full) && r; }}"
    )
    handle = chart.element_handle()
    return app.page.wait_for_function(
        script, arg=[handle, full], timeout=seconds * 1000
    ).json_value()


def test_learn_trains_a_tiny_model_and_the_probe_attention_changes(app: App):
    # Reverse, 500 pairs, 3 epochs: a few seconds. The probe heatmap is redrawn after every
    # epoch; the slider under it goes back to earlier epochs, down to the untrained model.
    query = "learn?task=reverse&learn_model=Train&learn_epochs=3&learn_pairs=500"
    app.open(f"{app.url}/{query}", charts=0)
    app.page.get_by_role("button", name="Train").click()
    expect(app.page.get_by_text("Trained 3 epochs")).to_have_count(1, timeout=180_000)
    # the model's tabs are drawn by the last run after training: the slider stays put from here
    expect(app.page.get_by_role("tab", name="Translate")).to_have_count(1, timeout=60_000)
    last = app.weights(app.wait_for_title_starting("Epoch 3: "))  # epoch 3's probe heatmap
    slider = app.page.get_by_role("slider", name="Probe attention after epoch (0 = untrained)")
    slider.focus()
    slider.press("Home")  # it keeps its value across reruns: it has a key
    first = app.weights(app.wait_for_title_starting("Epoch 0: "))
    assert len(last) >= 1 and len(first[0]) == len(last[0])  # same input, other epochs
    assert not close(last[: len(first)], first[: len(last)], tol=1e-3)  # attention moved
    assert app.exceptions() == 0 and app.errors == []


def test_model_view_click_on_a_head_enlarges_it(app: App):
    # The shipped dates Transformer: every head of the three attentions. The enlarged head
    # starts as the best-aligned cross head; clicking another square of the cross head map
    # enlarges that head: its heatmap, title and weights.
    app.open(f"{app.url}/?mode=Learn&learn_arch=Transformer&learn_tview=Model+view", charts=8)
    first = app.wait_for_title_starting("cross · ")  # the enlarged head
    squares = app.page.locator(".st-key-mv_map_cross path.point")
    expect(squares).to_have_count(8, timeout=WAIT_SECONDS * 1000)  # the cross head map
    target = next(i for i in range(8) if f"layer {i // 4} · head {i % 4}" not in first)
    square = squares.nth(target)
    app.scroll_to(square)
    box = square.bounding_box()
    app.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    title = f"cross · layer {target // 4} · head {target % 4}"
    app.wait_for_chart(title)  # enlarged
    enlarged = np.array(app.weights(title), dtype=float)
    grid = app.page.locator(".st-key-mv-grid-cross .js-plotly-plot")
    joined = grid.evaluate(
        "(d) => d._fullData.filter(t => t.coloraxis === 'coloraxis')[0].z"
        ".map(r => Array.from(r, x => Number.isFinite(x) ? x : 0))"
    )  # the grid's one heatmap: every head's block
    thumbnail = grid_blocks(joined, 2, 4)[target // 4, target % 4]
    assert np.allclose(enlarged, thumbnail, atol=1e-6)  # the same head
    assert np.allclose(enlarged.sum(axis=1), 1, atol=1e-5)
    assert app.exceptions() == 0 and app.errors == []


def test_a_newcomer_walks_the_lessons_from_the_start_page_to_the_last(app: App):
    # The start page's way in, then Next, lesson after lesson: each has its own URL and shows
    # its page prepared (a chart, or Learn's Train button before anything is trained).
    from attnviz.lessons import LESSONS

    app.open(f"{app.url}/", charts=1)  # the start page: one query's weights
    assert "Weights of the query “sat”" in app.chart_titles()
    app.page.get_by_role("link", name=f"Lessons: {len(LESSONS)} steps").click()
    for lesson in LESSONS:
        heading = app.page.get_by_role("heading", name=f"{lesson.number}. {lesson.title}")
        expect(heading).to_be_visible(timeout=WAIT_SECONDS * 1000)
        app.wait_until(
            "(page, slug) => page.idle() && window.location.pathname.endsWith('/' + slug)",
            lesson.slug, f"{lesson.slug}'s page",
        )  # fmt: skip
        if lesson.setup.get("source") == "Train":
            expect(app.page.get_by_role("button", name="Train")).to_be_visible()
        else:
            app.wait_for_charts(1)
        assert app.exceptions() == 0 and app.alerts() == [], lesson.slug
        if lesson.number < len(LESSONS):
            following = LESSONS[lesson.number]
            app.page.get_by_role("link", name=f"Next: {following.title}").click()
    expect(app.page.get_by_role("link", name="Next:")).to_have_count(0)  # the end of the path
    assert app.errors == []


def test_the_kv_cache_slider_steps_through_decoding(app: App):
    # Today's attention in the browser: a causal sentence decoded with a KV cache, one step
    # further with the keyboard: one more cached key, one more weight.
    app.open(f"{app.url}/sentences?causal=true&view=KV+cache&cache_t=2", charts=3)
    title = app.wait_for_title_starting("Step 2's weights")
    assert len(app.read("(page, t) => page.chart(t)._fullData[0].x", title)) == 3
    slider = app.page.get_by_role("slider", name="Decoding step t (the token being generated)")
    slider.focus()
    slider.press("ArrowRight")
    title = app.wait_for_title_starting("Step 3's weights")
    assert len(app.read("(page, t) => page.chart(t)._fullData[0].x", title)) == 4
    assert app.exceptions() == 0 and app.errors == []


@pytest.fixture(scope="module")
def your_model_url(chromium_path, tmp_path_factory):
    """`attnviz view` of a tiny GPT-2 preset (written here), as its own server."""
    import sys

    from user_models import gpt2_preset

    from deploy import servers

    folder = gpt2_preset(tmp_path_factory.mktemp("view") / "gpt2")
    port = servers.free_port()
    command = [sys.executable, "-m", "attnviz.cli", "view", str(folder), "--port", str(port),
               "--host", "127.0.0.1"]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    server = servers.wait_healthy(servers.spawn("attnviz-view", command, servers.ROOT, url, {}))
    try:
        yield url, folder
    finally:
        server.stop()


def test_your_model_click_a_head_then_open_it_step_by_step(open_app, your_model_url):
    # `attnviz view` of a GPT-2 preset: its heads on the typed text; a click on a square of the
    # head map enlarges that head, whose weights are inspect's; step by step in the explorer
    # gives them again.
    import attnviz
    from attnviz.heads.model_text import text_inputs
    from attnviz.heads.user_model import load_model

    url, folder = your_model_url
    text = "the cat sat on the mat"
    user = load_model(folder)
    calls = attnviz.inspect(user.model, text_inputs(user, text).inputs).calls
    app = open_app().open(f"{url}/model?model_text={text.replace(' ', '+')}", charts=4)
    app.wait_for_chart("self · layer 1 · head 0")  # the last layer's head 0 first
    expect(app.page.get_by_text("Next token", exact=True)).to_be_visible()
    square = app.page.locator(".st-key-mv_map_self path.point").nth(1)  # layer 0 · head 1
    app.scroll_to(square)
    box = square.bounding_box()
    app.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expected = calls[0].weights[0, 1].tolist()
    app.wait_for_weights(expected, title="self · layer 0 · head 1", tol=1e-5)
    app.page.get_by_role(
        "button", name="Open this head step by step in the Matrices explorer"
    ).click()
    app.wait_for_weights(expected, tol=1e-5)  # the explorer's "Attention weights"
    assert "/matrices" in app.location()
    assert app.exceptions() == 0 and app.alerts() == [] and app.errors == []


def test_old_short_values_in_a_link_open_the_view_and_the_url_shows_todays_form(app: App):
    """`?position=alibi` (the scheme's own name, as hand-written links say it) opens ALiBi, and
    the address bar then shows the control's label, so the link can be shared again."""
    app.open(f"{app.url}/matrices?position=alibi&alibi_heads=4", charts=4)
    app.page.get_by_label("Heads H", exact=True).wait_for()
    app.wait_for_query({"position": ["ALiBi (linear bias)"], "alibi_heads": ["4"]})
    assert app.exceptions() == 0
