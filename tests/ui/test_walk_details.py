"""Details a walk through the pages noticed (issue 30): the other accelerators only with their switch, a GPU named
by its alias in a link, a GPU type without an offer said so, counts in the singular for one, dollar amounts that
markdown does not read as math."""

import json

from tests.ui.apptest import open_page, texts

PERF, MEMORY, COST = "app_pages/Performance.py", "app_pages/Memory.py", "app_pages/Cost.py"
OTHERS = ("TPU", "Trainium", "Inferentia", "Gaudi")


def _catalog_names(at) -> set[str]:
    """The GPU types the Performance page's per-GPU chart lists (its bars' category labels)."""
    spec = json.loads(at.get("plotly_chart")[-1].proto.spec)
    assert "At your peak" in spec["layout"]["title"]["text"]  # the per-GPU chart, the last on the page
    return {v for d in spec["data"] for k in ("x", "y") for v in d.get(k) or [] if isinstance(v, str)}


def test_the_per_gpu_chart_lists_other_accelerators_only_with_their_switch():
    off = open_page(PERF)
    assert not off.exception
    names = _catalog_names(off)
    assert names and not [n for n in names if n.startswith(OTHERS)]
    on = open_page(PERF, {"accel": "true"})
    assert {"TPU-v6e x1", "Trainium2 x8"} <= _catalog_names(on)


def test_a_link_names_a_tpu_by_its_usual_name_with_the_switch_on():
    at = open_page(PERF, {"accel": "true", "gpu": "TPU v6e"})
    assert not at.exception
    assert "not allowed" not in texts(at)
    assert at.sidebar.selectbox(key="gpu").value == "TPU-v6e"
    assert at.session_state["gpuplan_run"].scenario.parallelism.gpu == "TPU-v6e"
    assert "TPU-v6e x1, the pick" in _catalog_names(at)


def test_a_gpu_type_no_offer_rents_says_so_on_the_page():
    at = open_page(MEMORY, {"accel": "true", "gpu": "Gaudi 3"}, sections=False)
    assert not at.exception
    note = next(i.value for i in at.info if "no offer" in i.value)
    assert note.startswith("Gaudi 3 OAM is in the catalog, but no offer in the prices in use rents it")
    plain = open_page(MEMORY, {"gpu": "H100 SXM"}, sections=False)
    assert not [i.value for i in plain.info if "no offer" in i.value]  # H100 SXM has offers


def test_the_no_offer_note_says_where_the_figures_are_with_model_size_only():
    """ "Model size only" + Gaudi 3: the Overview draws no memory and no speed for it (no offer: no answer), so its
    note names the pages that do; Memory says its memory is here (and it is: a "Memory per GPU" metric), Performance
    its speed (a first-token metric)."""
    link = {"src": "Model size only", "gpu": "Gaudi 3"}
    notes = {}
    for page in ("app_pages/overview.py", MEMORY, PERF):
        at = open_page(page, link, sections=False)
        assert not at.exception, page
        notes[page] = next(i.value for i in at.info if "no offer" in i.value)
        labels = {m.label for m in at.metric}
        if page == MEMORY:
            assert "Memory per GPU" in labels
        if page == PERF:
            assert "Time to first token" in labels
        if page.endswith("overview.py"):
            assert not {"Memory per GPU", "Time to first token"} & labels
    assert "Memory and Performance show its memory and speed" in notes["app_pages/overview.py"]
    assert "shown here" not in notes["app_pages/overview.py"]
    assert "its memory is shown here and its speed on Performance" in notes[MEMORY]
    assert "its speed is shown here and its memory on Memory" in notes[PERF]


def test_the_own_or_rent_caption_keeps_its_dollars_as_text():
    at = open_page(COST, {"gpu": "H100 SXM"})
    assert not at.exception
    own = next(c.value for c in at.caption if "amortised over" in c.value)
    assert "amortised over 5 years" in own
    assert own.count("$") == own.count("\\$")  # every dollar escaped: none starts a formula
    assert "(s)" not in texts(at)
