"""CSV export and the figure builders, from real reports."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st_

from gpuplan_core import api, load_pricing
from gpuplan_core.interface.inputs import to_scenario
from gpuplan_ui.export import rows_to_csv, safe_cell
from gpuplan_ui.figures import components_figure, log_ticks, memory_figure
from gpuplan_ui.figures_perf import latency_figure, load_figure, roofline_figure, sweep_figure


def test_csv_export_neutralises_formulas():
    assert safe_cell('=HYPERLINK("x")') == '\'=HYPERLINK("x")'
    assert safe_cell("+1+1") == "'+1+1"
    assert safe_cell("@SUM(A1)") == "'@SUM(A1)"
    assert safe_cell("-5.5") == "-5.5"  # a negative number stays a number
    text = rows_to_csv([{"a": "=1+2", "b": 3}])
    assert text.splitlines() == ["a,b", "'=1+2,3"]


LLAMA_8B_H100 = {"preset": "Llama-3.1-8B", "gpu": "H100-SXM", "batch": 8}


def test_figures_build_from_reports():
    sc, _ = to_scenario({})
    mem = api.memory_report(sc)
    fig = memory_figure(mem)
    assert len(fig.data) == 3 and len(fig.data[0].y) == len(mem.gpus)  # label VRAM, usable budget, their words
    parts = components_figure(mem)
    assert [t.name for t in parts.data] == list(mem.components)
    assert parts.data[0].marker.color == "#2563eb"  # weights are the same blue on every page
    perf = api.perf_report(sc, gpus=["H100-SXM", "L4"])
    p = perf.gpus[0]
    roof = roofline_figure(p)
    names = [t.name for t in roof.data]
    assert any("BF16 roof" in n for n in names) and any(n.startswith("prefill") for n in names)
    assert sweep_figure(p).data[0].x[-1] == p.max_batch
    offers = load_pricing().offers
    rows, _ = api.gpus_at_load(sc, offers, answer=api.answer_report(sc, offers=offers))
    fig = latency_figure(rows, at_load=False)
    assert len(fig.data) == 2 and len(fig.data[0].y) == len(rows) > 0
    fastest = min(rows, key=lambda r: r.ttft_s)
    assert fig.data[0].x[-1] == fastest.ttft_s * 1e3  # fastest last (at the top of a horizontal bar chart)


def test_memory_labels_never_sit_on_the_needs_line():
    """A GPU short of the need says so right of the need's line, not across it ("9|1 GB short"); a GPU that holds
    it says so at its bar's end, which is right of the line already."""
    mem = api.memory_report({"preset": "Llama-3.1-70B", "weights_format": "fp8"})
    fig = memory_figure(mem)
    need = mem.per_gpu_bytes / 1e9
    words = fig.data[2]
    assert words.mode == "text" and words.textposition == "middle right"
    short = [x for x, t in zip(words.x, words.text, strict=True) if "short" in t]
    assert short and all(x >= need for x in words.x)
    assert min(short) == need  # the short ones start at the line
    assert fig.layout.shapes[0].x0 == need


def test_log_axes_have_clean_ticks():
    t = log_ticks(3, 700)
    assert t["tickvals"] == [5, 10, 20, 50, 100, 200, 500] and t["ticktext"][-1] == "500"
    wide = log_ticks(1, 50_000)  # more than three decades: decades only, with thousands separators
    assert wide["ticktext"] == ["1", "10", "100", "1,000", "10,000"]


def test_cost_figures_build_from_typed_reports():
    from gpuplan_core import Lifetime, MarketProjection
    from gpuplan_ui.figures_cost import cheapest_figure, lifetime_figure, offer_label, projection_figure

    cost = api.cost_report({"preset": "Llama-3.1-8B"})
    fig = cheapest_figure(cost.offers, inference=True)
    cheapest = min(cost.offers, key=lambda r: r.monthly_always_on_usd)
    assert fig.data[0].x[-1] == cheapest.monthly_always_on_usd  # cheapest on top
    best_ok = min((r for r in cost.offers if r.meets_target), key=lambda r: (r.monthly_always_on_usd, r.offer_id))
    title = fig.layout.title.text.replace("<br>", " ")
    assert title.startswith(f"Cheapest that meets your targets: {offer_label(best_ok)}")
    assert len(set(fig.data[0].y)) == len(fig.data[0].y)  # one bar per offer: no label shared (they would stack)
    run = api.cost_report(
        {"preset": "Llama-3.1-8B", "mode": "training", "training_tokens": 1e9, "gpus": 8}
    )  # no deadline
    assert all(r.meets_target for r in run.offers)
    assert cheapest_figure(run.offers, inference=False).layout.title.text.startswith("Cheapest: ")
    life = lifetime_figure(Lifetime.of(100_000, 30_000, 12), "t")
    assert life.layout.annotations[0].text == "inference passes training in month 4"
    proj = projection_figure(MarketProjection.of(1_000, "a16z", 24))
    assert proj.data[0].y[12] == 1_000 * 0.1  # ten times cheaper a year


def test_the_cheapest_chart_never_titles_an_option_that_misses_a_target():
    """/Cost?model=Llama-3.1-70B&rpd=50000&in=8000: 2 x RTX PRO 6000 at $2,467 is the cheapest bar but its first
    token is ~2.5 s against 2 s: grey, labelled, and not the title."""
    from gpuplan_core import read_link, to_scenario
    from gpuplan_ui.figures_cost import cheapest_figure

    sc, _ = to_scenario(read_link({"model": "Llama-3.1-70B", "rpd": "50000", "in": "8000"})[0])
    cost = api.cost_report(sc)
    fig = cheapest_figure(cost.offers, inference=True)
    cheapest = min(cost.offers, key=lambda r: r.monthly_always_on_usd)
    assert not cheapest.meets_target and fig.data[0].y[-1].endswith("· misses target")
    assert fig.data[0].marker.color[-1] == "#9ca3af"
    ans = api.answer_report(sc)
    always = next(o for o in ans.alternatives if o.role == "cheapest always-on")
    assert f"${always.pick.monthly_usd:,.0f} a month" in fig.layout.title.text.replace("<br>", " ")  # the answer's


def test_load_figure_marks_the_target_and_the_capacity():
    from gpuplan_ui.figures_perf import load_figure

    curve = api.serving_curve_report({"preset": "Llama-3.1-8B", "gpu": "H100", "ttft_target_s": 1.0})
    fig = load_figure(curve, "ttft")
    band = curve.error_band.ttft_p95_s.band
    assert [t.name for t in fig.data] == [
        None,
        "p50-p95 of requests",
        f"model error band (±{band:.0%})",
        None,
        "p95 TTFT",
    ]
    p95 = [p.ttft_p95_s * 1e3 for p in curve.points if not p.saturated]
    assert list(fig.data[-1].y) == p95 and list(fig.data[1].y) == p95  # the spread's top is p95...
    assert list(fig.data[0].y) == [p.ttft_p50_s * 1e3 for p in curve.points if not p.saturated]  # ...its bottom p50
    assert list(fig.data[2].y) == [v * (1 + band) for v in p95]
    assert fig.layout.shapes[0].y0 == 1_000  # the target, in ms
    cap = curve.capacity_requests_per_s
    assert fig.layout.shapes[1].x0 == cap
    cap_band = curve.error_band.capacity_requests_per_s.band
    assert (fig.layout.shapes[2].x0, fig.layout.shapes[2].x1) == (cap * (1 - cap_band), cap * (1 + cap_band))


def test_the_cheapest_chart_names_each_offer_by_the_gpus_paid_and_highlights_the_pick():
    """The issue's link: 64 H100s pre-training. Each bar is one offer (billing tells aws's spot and on-demand p5
    apart), sorted by the run's cost, cheapest on top; its label counts the 64 GPUs paid (the answer's), not one
    replica's 4; the cheapest that meets the targets is outlined, its label and value bold."""
    from gpuplan_core import read_link, to_scenario
    from gpuplan_ui.figures_cost import cheapest_figure
    from tests.ui.apptest import PRETRAINING_64_H100

    sc, _ = to_scenario(read_link(PRETRAINING_64_H100)[0])
    cost = api.cost_report(sc)
    fig = cheapest_figure(cost.offers, inference=False)
    bars = fig.data[0]
    runs = sorted(r.run_cost_usd for r in cost.offers)[:10]
    assert list(bars.x) == runs[::-1]  # plotly draws the first bar at the bottom: the cheapest is the last
    assert len(set(bars.y)) == len(bars.y) == min(10, len(cost.offers))
    cheapest = min(cost.offers, key=lambda r: (r.run_cost_usd, r.offer_id))
    assert cheapest.gpus == 64 and bars.y[-1].startswith(f"{cheapest.provider} · 64 x H100-SXM (TP ")
    assert bars.y[-1].endswith("· spot") == (cheapest.billing_model == "spot")
    assert bars.marker.line.width[-1] == 3 and set(bars.marker.line.width[:-1]) <= {0}
    assert fig.layout.yaxis.ticktext[-1] == f"<b>{bars.y[-1]}</b>" and bars.text[-1] == f"  <b>${runs[0]:,.0f}</b>"
    assert f"at ${runs[0]:,.0f} for the run" in fig.layout.title.text.replace("<br>", " ")


def test_reference_line_labels_sit_beside_their_lines():
    """The sweep's two lines: the right-hand one's label to its right, the other's to its left, each shifted 4 px
    off its line, so no label runs across either line; the x range leaves room right of the last line."""
    import math

    from gpuplan_ui.figures import hline, vline, x_marker

    p = api.perf_report(LLAMA_8B_H100, gpus=["H100-SXM"]).gpus[0]
    fig = sweep_figure(p)
    notes = {n.text.split("<br>")[0]: n for n in fig.layout.annotations}
    fits, bound = notes["largest that"], notes["compute-bound"]
    assert p.compute_bound_batch == 231 > p.max_batch == 189  # here the compute-bound line is the right-hand one
    assert (bound.xanchor, bound.xshift, bound.x) == ("left", 4, math.log10(p.compute_bound_batch))
    assert (fits.xanchor, fits.xshift, fits.x) == ("right", -4, math.log10(p.max_batch))
    assert fig.layout.xaxis.range[1] == math.log10(max(p.max_batch, p.compute_bound_batch, p.sweep[-1].batch) * 4)
    assert vline(10, "t", "red", "dash")[1]["xshift"] == -4 and hline(5, "t", "red")[1]["yshift"] == 2
    assert x_marker(3, "t")[1]["xshift"] == 4


def test_the_memory_chart_names_the_fewest_gpus_the_answer_names():
    """Llama-3.1-8B pre-training at 8k x 8 needs 241 GB per GPU: B200, H200 and MI300X each hold it on 2. The answer
    and the chart's title name one and the same (of equals, the most room per GPU)."""
    from gpuplan_core import memory_answer

    sc, _ = to_scenario({"workload": "pretrain", "ctx": 8192})
    mem = api.memory_report(sc)
    two = sorted(g.label for g in mem.gpus if g.min_gpus == 2)
    assert mem.fewest.min_gpus == 2 and len(two) >= 2  # a tie to break
    assert mem.fewest.budget_bytes == max(g.budget_bytes for g in mem.gpus if g.min_gpus == 2)
    named = f"2 x {mem.fewest.label}"
    assert named in memory_figure(mem).layout.title.text and named in memory_answer(mem, sc).sentence


_CURVES = st_.fixed_dictionaries(
    {
        "preset": st_.sampled_from(["Llama-3.1-8B", "Mistral-7B-v0.1", "Llama-3.1-70B"]),
        "gpu": st_.sampled_from(["H100-SXM", "B200", "L40S", "A100-80GB-SXM"]),
        "input_tokens": st_.sampled_from([500, 2000, 8000]),
        "output_tokens": st_.sampled_from([100, 300]),
        "ttft_target_s": st_.sampled_from([0.5, 1.0, 2.0]),
        "tpot_target_s": st_.sampled_from([0.03, 0.05, 0.1]),
        "arrival": st_.sampled_from(["poisson", "bursty"]),
        "lengths": st_.sampled_from(["fixed", "chat"]),
    }
)


def _at(xs: list[float], ys: list[float], x: float) -> float:
    """The drawn line's value at ``x``: linear between the two points around it."""
    pts = sorted(zip(xs, ys, strict=True))
    for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    raise AssertionError(f"{x} is outside the drawn curve {pts[0][0]} .. {pts[-1][0]}")


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_CURVES)
def test_the_load_charts_cross_their_target_at_the_capacity_their_title_states(flat):
    """The p95 first-token line (and the time-per-token line) read at the capacity the title states is within the
    target: the curve is sampled at the capacity and around it, not only on a coarse log grid."""
    from gpuplan_core import Scenario

    sc = Scenario(**flat)
    curve = api.serving_curve_report(sc)
    cap = curve.capacity_requests_per_s
    if not cap:
        return  # no load meets the targets (the title says so instead)
    for which, target in (("ttft", curve.ttft_target_s), ("tpot", curve.tpot_target_s)):
        fig = load_figure(curve, which)
        main = next(t for t in fig.data if t.name in ("p95 TTFT", "mean TPOT"))
        assert f"{cap:,.2f} requests/s" in fig.layout.title.text
        assert _at(list(main.x), list(main.y), cap) <= target * 1e3 * (1 + 1e-9), which
    # and the points past it show the knee: the next sampled rate is within 2-20% of the capacity
    rates = sorted(p.requests_per_s for p in curve.points if not p.saturated)
    above = [x for x in rates if x > cap]
    assert not above or above[0] <= cap * 1.2


def test_runs_under_100_dollars_read_to_the_cent():
    """A LoRA fine-tune of Llama-3.1-8B costs a few dollars a run: each bar and the title give cents (two runs of
    $3.26 and $3.40 would both read $3 rounded to the dollar); from $100 up, whole dollars."""
    from gpuplan_core import read_link
    from gpuplan_ui.figures_cost import cheapest_figure

    sc, _ = to_scenario(read_link({"workload": "Fine-tuning", "method": "LoRA"})[0])
    fig = cheapest_figure(api.cost_report(sc).offers, inference=False)
    for x, text in zip(fig.data[0].x, fig.data[0].text, strict=True):
        shown = text.replace("<b>", "").replace("</b>", "").strip()
        assert shown == (f"${x:,.2f}" if x < 100 else f"${x:,.0f}")
    title = fig.layout.title.text.replace("<br>", " ")
    assert min(fig.data[0].x) < 100 and f"at ${min(fig.data[0].x):,.2f} for the run" in title
