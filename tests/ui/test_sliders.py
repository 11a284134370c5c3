"""The sliders the product card asks for (model size, precision, context, batch): each on natural steps, the exact
value still typeable in its number box, every value a link holds kept (gpuplan_ui/stepped.py)."""

from gpuplan_core import INPUTS
from tests.ui.apptest import open_page

OVERVIEW, MEMORY = "app_pages/overview.py", "app_pages/Memory.py"


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_a_link_s_value_between_stops_is_kept_by_the_box_and_the_slider():
    at = open_page(OVERVIEW, {"in": "3333", "out": "250", "batch": "12"}, sections=False)
    assert not at.exception
    for key, want in (("in", 3333), ("out", 250), ("batch", 12)):
        assert at.sidebar.number_input(key=key).value == want
        slider = at.sidebar.select_slider(key=key + "__slider")
        assert slider.value == want and INPUTS[key].label_of(want) in slider.options  # a stop of its own
    assert at.query_params["in"] == "3333" and at.query_params["batch"] == "12"  # the link keeps them


def test_a_slider_step_moves_the_box_the_link_and_the_answer():
    at = open_page(OVERVIEW, {}, sections=False)
    first_token = _metric(at, "First token (p95)")
    slider = at.sidebar.select_slider(key="in__slider")
    assert slider.value == 2000
    stops = INPUTS["in"].slider_stops(2000.0)
    slider.set_value(stops[stops.index(2000.0) + 1]).run()  # one stop right: 3,000 tokens
    assert not at.exception
    assert at.sidebar.number_input(key="in").value == 3000
    assert at.query_params["in"] == "3000"  # the link follows (a whole number, not 3000.0)
    assert _metric(at, "First token (p95)") != first_token  # a longer prompt: a later first token
    at.sidebar.number_input(key="in").set_value(3210).run()  # typed: the slider gains the exact value
    assert at.sidebar.select_slider(key="in__slider").value == 3210


def test_the_weights_slider_steps_through_the_formats_and_the_memory_follows():
    at = open_page(MEMORY, {}, sections=False)
    weights = at.sidebar.select_slider(key="weights")
    assert weights.value == "bf16" and weights.options[:4] == ["FP32", "BF16", "FP16", "FP8 (E4M3)"]
    before = at.session_state["gpuplan_run"].scenario.formats.weights_format
    weights.set_value("fp8").run()
    assert not at.exception
    assert (before, at.session_state["gpuplan_run"].scenario.formats.weights_format) == ("bf16", "fp8")
    # the link follows in the browser (a bound widget's own change is written by the frontend: tests/e2e)


def test_model_size_only_takes_any_size_and_the_older_link_form():
    at = open_page(MEMORY, {"src": "Model size only", "size_b": "12.5"}, sections=False)
    assert not at.exception
    assert at.sidebar.number_input(key="size_b").value == 12.5
    assert at.sidebar.select_slider(key="size_b__slider").value == 12.5
    assert at.session_state["gpuplan_run"].scenario.model_source.params == 12_500_000_000
    at = open_page(MEMORY, {"src": "Model size only", "size_b": "70B"}, sections=False)  # links before the box
    assert at.sidebar.number_input(key="size_b").value == 70
    at.sidebar.select_slider(key="size_b__slider").set_value(72.0).run()  # the next published size
    assert at.session_state["gpuplan_run"].scenario.model_source.params == 72_000_000_000
    assert at.query_params["size_b"] == "72"


def test_in_the_served_app_a_slider_step_reruns_its_pair_and_the_page_alone(monkeypatch):
    """With page reruns on (as served), the slider's change reruns the page and the pair's fragment: the box shows
    the slider's value, the rest of the sidebar is not sent again, and the answer is a whole run's for that value."""
    from streamlit.testing.v1 import AppTest

    from gpuplan_ui.state import PAGE_RERUNS_ENV
    from tests.ui.apptest import APP

    monkeypatch.setenv(PAGE_RERUNS_ENV, "1")
    at = AppTest.from_file(APP, default_timeout=90).run()
    at.sidebar.select_slider(key="in__slider").set_value(3000.0).run()
    assert not at.exception
    assert [(w.key, w.value) for w in at.sidebar.get("number_input")] == [("in", 3000)]
    assert not at.sidebar.get("selectbox")  # the job, the model, the GPU: not sent again
    whole = AppTest.from_file(APP, default_timeout=90)
    whole.query_params["in"] = "3000"
    whole.run()
    assert [(m.label, m.value) for m in at.metric] == [(m.label, m.value) for m in whole.metric]
