"""Performance: is it fast enough? The answer first, then latency under traffic, then why (the roofline)."""

import streamlit as st

from gpuplan_core import DEFAULT_GPU, FORMATS, Answer, GpuPerf, perf_answer
from gpuplan_ui import cached, fmt, page, profiles

sc, values = page.setup("Performance", gpu_figures="speed")
chart = {"displaylogo": False}


def _roofline(p: GpuPerf, views: cached.PerfViews) -> None:
    """The roofline and the batch sweep: what limits each phase, and the phases' FLOPs and bytes."""
    st.caption(
        f"{fmt.md_escape(sc.model().name)} on {p.gpu} x{p.gpu_count} (tp {p.tp}, pp {p.pp}), math "
        f"{p.math_format.upper()}, batch {p.batch}, prompt {p.prompt_tokens:,}, output "
        f"{p.output_tokens:,} tokens. Reading the prompt (prefill) does many operations per byte of "
        "weights and is limited by compute; writing the answer (decode) rereads every weight for each "
        "token and is limited by memory bandwidth until many requests share the reads."
    )
    left, right = st.columns(2)
    left.plotly_chart(views.roofline, key="roofline", config=chart)
    if views.sweep is not None:
        right.plotly_chart(views.sweep, key="sweep", config=chart)
    else:
        right.info(
            f"Only a batch of {p.max_batch} fits beside the KV cache at this context on {p.gpu} "
            f"x{p.gpu_count}: no batch sweep to draw. More GPUs or a shorter context leave room.",
            icon=":material/info:",
        )
    if p.notes:
        st.caption("\n\n".join(fmt.md_escape(n) for n in p.notes))
    st.markdown("**Phase by phase (FLOPs, bytes, what bounds each)**")
    st.caption(
        f"Ridge point {p.ridge_flops_per_byte:,.0f} FLOP per byte: below it memory bandwidth "
        "limits, above it compute. MFU / MBU: the share of peak compute / bandwidth achieved."
    )
    page.table(views.phases, "phases", "gpuplan-phases.csv")


if sc.job.mode != "inference":
    page.answer(
        Answer(
            sentence="Speed here is about serving a model; for a training job's time, GPU-hours and cost see the "
            "Cost page (switch the job to inference to see serving speed).",
        )
    )
else:
    p = None
    with page.guard("Performance on the chosen GPU"):
        ans = cached.answer(sc)
        shown = ans.detail_scenario(sc)  # the recommended layout, unless the user picked another
        key, gpu = shown.model_dump_json(), shown.parallelism.gpu or DEFAULT_GPU
        views = cached.perf_views(key, gpu)
        p = views.perf
        sv = cached.serving_views(key, gpu) if p.fits else None
        curve = None if sv is None else sv.curve
        page.answer(perf_answer(p, curve, shown, ans if ans.shows_pick(sc.parallelism) else None))
        if ans.shows_pick(sc.parallelism):
            st.caption(
                f"This page shows the recommended layout ({fmt.md_escape(ans.memory_layout)}, "
                f"{FORMATS[ans.pick.weights_format].label} weights); pick a GPU type or a tensor-parallel split in "
                "the sidebar to see another."
            )
        elif not sc.parallelism.gpu:
            st.caption("The sidebar's GPU is 'any': this page shows the H100 SXM; pick a GPU to see another.")
    if p is not None and p.fits:
        with page.guard("Under traffic"):
            band = p.error_band
            st.caption(
                f"**How sure:** a single request's time per token: {band.tpot_s.text} Under traffic, first "
                f"token: {curve.error_band.ttft_p95_s.text}"
            )
            st.subheader("Under traffic: how long users wait as requests per second grow")
            st.caption(
                "Servers such as vLLM run every request in flight together and slice long prompts into chunks: a "
                "request waits for its prompt to be read (and for any queue), then gets one token per engine step, "
                f"shared with everyone else. One replica of {curve.gpu} x{curve.replica_gpus} holds at "
                f"most {curve.max_running_sequences:,} requests at once (its KV cache or the engine's limit)."
            )
            st.plotly_chart(sv.ttft, key="load_ttft", config=chart)
            if curve.notes:
                st.caption(" ".join(curve.notes))
            per_token = "Time per token as requests per second grow"
            if not page.meeting() and (box := page.section(per_token, "perf_tpot", ":material/timer:")):
                with box:
                    st.plotly_chart(sv.tpot, key="load_tpot", config=chart)

        if not page.meeting():
            with page.guard("Why: the roofline"):
                why = "Why: what limits each phase on the roofline"
                if box := page.section(why, "perf_roofline", ":material/show_chart:"):
                    with box:
                        _roofline(p, views)
            with page.guard("Every catalog GPU"):
                every = "Every GPU type: first-token wait and time per token"
                if box := page.section(every, "perf_catalog", ":material/bar_chart:"):
                    with box:
                        cat = cached.perf_catalog(sc)  # every GPU type as the plan runs it at this load
                        st.caption(
                            "Each GPU type as the recommendation would run it: its cheapest layout and replicas "
                            + ("at your peak traffic (p95 first token)" if cat.at_load else "(a static batch)")
                            + "; the pick's row is the answer's."
                        )
                        st.plotly_chart(cat.figure, key="latency", config=chart)
                        st.markdown("**The numbers per GPU type**")
                        page.table(cat.table, "perf_all", "gpuplan-performance.csv")
                        if cat.missing:
                            st.caption("Not run: " + "; ".join(f"{g} ({why})" for g, why in cat.missing.items()))

if not page.meeting() and sc.job.mode == "inference":
    with page.guard("Calibrate to your deployment"):
        if box := page.section("Calibrate to your deployment", "perf_calib", ":material/tune:"):
            with box:
                profiles.section(sc)

if not page.meeting():
    with page.guard("Calibration"):
        if box := page.section("How far to trust these numbers", "perf_trust", ":material/verified:"):
            with box:
                cal = cached.calibration_report()
                st.markdown(
                    f"The model with its default assumptions against **{len(cal.points)} published measurements** "
                    "(FasterTransformer, TensorRT-LLM, vLLM, gpt-fast, torchao, transformers; A100 to B200 and "
                    f"MI300X): median absolute error **{cal.median_abs_error:.1%}** overall, no point corrected "
                    "individually. The error differs by kind of run, so each estimate above carries the error of its "
                    "own kind (regime)."
                )
                st.markdown("**Error per regime, and every measurement**")
                page.table(cached.calibration_regimes_table(), "calibration_regimes", "gpuplan-calibration-regimes.csv")
                page.table(cached.calibration_table(), "calibration", "gpuplan-calibration.csv")
                st.markdown(
                    f"**Under load**: {len(cal.serving_points):,} published serving measurements (TensorRT-LLM, "
                    "NVIDIA NIM, LMDeploy, vLLM and SGLang), each run simulated as its benchmark sent it. On the third "
                    "of the runs held out from every fit, the median absolute error is "
                    f"**{cal.serving_median_abs_error:.0%}** on online serving of dense models."
                )
                st.markdown("**Error per serving regime**")
                page.table(cached.serving_calibration_table(), "serving_calibration", "gpuplan-serving-calibration.csv")
