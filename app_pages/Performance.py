"""Performance: rooflines of prefill and decode, TTFT / TPOT / throughput, and how far to trust them."""

import streamlit as st

from gpuplan_ui import cached, fmt, page

sc, values = page.setup("Performance")
key = sc.model_dump_json()

if sc.mode != "inference":
    st.info(
        "Performance models serving (prefill and decode). For training time, GPU-hours and cost see the Cost "
        "page; switch the job to inference to see rooflines.",
        icon=":material/info:",
    )
else:
    if not sc.gpu:
        st.caption("The sidebar's GPU is 'any': the detail views below show the H100 SXM; pick a GPU to see another.")
    with page.guard("Performance on the chosen GPU"):
        perf = cached.perf_report(key, (sc.gpu or "H100-SXM",))
        views = cached.perf_views(key, sc.gpu or "H100-SXM")
        p = views["perf"]
        if views["phases"] is None:
            st.warning(" ".join(p.notes), icon=":material/warning:")
        else:
            st.caption(
                f"{fmt.md_escape(perf.model)} on {p.gpu} x{p.gpu_count} (tp {p.tp}, pp {p.pp}), math "
                f"{p.math_format.upper()}, batch {p.batch}, prompt {p.prompt_tokens:,}, "
                f"output {p.output_tokens:,} tokens"
            )
            band = p.error_band
            c = st.columns(5)
            c[0].metric("Time to first token", fmt.ms(p.ttft_s), help="Prefill of the batch's prompts + fixed overhead")
            c[1].metric(
                "Time per output token",
                fmt.ms(p.tpot_s),
                help=f"Exclusive of the first token; inclusive: {fmt.ms(p.tpot_inclusive_s)}",
            )
            c[2].metric("Tokens/s per user", f"{p.decode_tokens_per_s_per_sequence:,.1f}")
            c[3].metric(
                "Tokens/s, whole batch",
                f"{p.decode_tokens_per_s:,.0f}",
                help=f"End to end incl. prefill: {p.output_tokens_per_s:,.0f} output tokens/s",
            )
            c[4].metric(
                "Largest batch that fits",
                f"{p.max_batch:,}",
                help=f"Decode's matmuls turn compute-bound at batch {p.compute_bound_batch or 'never'}",
            )
            shown = ("ttft_s", "tpot_s", "decode_tokens_per_s_per_sequence", "output_tokens_per_s")
            for col, k in zip(c[:4], shown, strict=True):
                col.caption(band[k].short, help=band[k].text)
            st.caption(
                f"**How sure:** {band['tpot_s'].text} The ± under each number is the median error of the "
                "published measurements of its kind (GPU generation, format, phase); the table at the foot of "
                "this page lists them."
            )
            if p.output_tokens_per_s_at_max_batch:
                st.caption(
                    f"At the largest batch that fits ({p.max_batch:,}): "
                    f"{p.output_tokens_per_s_at_max_batch:,.0f} output tokens/s end to end. Decode's weight "
                    f"matmuls turn compute-bound at batch {p.compute_bound_batch or 'never'}; attention's KV "
                    "reads stay bandwidth-bound at any batch."
                )
            if p.notes:
                st.caption("\n\n".join(p.notes))
            left, right = st.columns(2)
            left.plotly_chart(views["roofline"], key="roofline", config={"displaylogo": False})
            right.plotly_chart(views["sweep"], key="sweep", config={"displaylogo": False})
            st.markdown(
                f"**Phases** (ridge point {p.ridge_flops_per_byte:,.1f} FLOP/byte: below it memory "
                "bandwidth limits, above it compute)"
            )
            page.table(views["phases"], "phases", "gpuplan-phases.csv")

    with page.guard("Under traffic"):
        st.subheader("Under traffic: one replica with continuous batching")
        sv = cached.serving_views(key, sc.gpu or "H100-SXM")
        curve = sv["curve"]
        st.caption(
            "Servers such as vLLM run every request in flight together and slice long prompts into chunks: a request "
            "waits for its own prompt (and any queue), then gets one token per engine step shared with everyone "
            "else's. TTFT = time to first token; TPOT = time per later token. The charts show one replica of "
            f"{curve['gpu']} x{curve['tp'] * curve['pp']} (at most {curve['max_running_sequences']:,} requests in "
            "flight: the KV cache or the engine's limit)."
        )
        sband = curve["error_band"]
        c = st.columns(3)
        c[0].metric(
            "Saturates at",
            f"{curve['max_requests_per_s']:,.2f} req/s",
            help="Every slot busy: beyond this, queues grow without bound",
        )
        if curve["capacity_requests_per_s"] is not None:
            c[1].metric(
                "Capacity within the targets",
                f"{curve['capacity_requests_per_s']:,.2f} req/s",
                help="The largest request rate with p95 TTFT and mean TPOT within the targets (Traffic and latency "
                "targets in the sidebar)",
            )
        if curve["replicas"]:
            c[2].metric(
                "Replicas for your traffic",
                f"{curve['replicas']:,}",
                help=f"Peak {curve['peak_requests_per_s']:,.2f} req/s (requests per day / 86,400 x peak-to-average) "
                "divided by one replica's capacity, rounded up",
            )
        c[0].caption(sband["max_requests_per_s"]["short"], help=sband["max_requests_per_s"]["text"])
        if curve["capacity_requests_per_s"] is not None:
            c[1].caption(sband["capacity_requests_per_s"]["short"], help=sband["capacity_requests_per_s"]["text"])
        st.caption(
            f"**How sure, under load:** TTFT: {sband['ttft_p95_s']['text']} TPOT: {sband['tpot_mean_s']['text']} "
            "Throughput: " + sband["output_tokens_per_s"]["text"]
        )
        left, right = st.columns(2)
        left.plotly_chart(sv["ttft"], key="load_ttft", config={"displaylogo": False})
        right.plotly_chart(sv["tpot"], key="load_tpot", config={"displaylogo": False})
        if curve["notes"]:
            st.caption(" ".join(curve["notes"]))

    with page.guard("Every catalog GPU"):
        st.subheader("Every catalog GPU")
        cat = cached.perf_catalog_views(key)
        st.plotly_chart(cat["figure"], key="latency", config={"displaylogo": False})
        page.table(cat["table"], "perf_all", "gpuplan-performance.csv")
        missing = cat["missing"]
        if missing:
            st.caption(f"Does not fit on any layout: {', '.join(missing)}.")

with page.guard("Calibration"):
    st.subheader("How far to trust these numbers")
    cal = cached.calibration_report()
    st.markdown(
        f"The model with its default assumptions against **{len(cal['points'])} published measurements** "
        f"(FasterTransformer, TensorRT-LLM, vLLM, gpt-fast, torchao, transformers; A100 to B200 and MI300X): median "
        f"absolute error **{cal['median_abs_error']:.1%}** overall. No point is corrected individually. The error "
        "differs by kind of run, so each estimate above carries the error of its own regime:"
    )
    page.table(cached.calibration_regimes_table(), "calibration_regimes", "gpuplan-calibration-regimes.csv")
    with st.expander(f"All {len(cal['points'])} measurements, predicted vs measured"):
        page.table(cached.calibration_table(), "calibration", "gpuplan-calibration.csv")
    st.markdown(
        f"**Under load**: {len(cal['serving_points'])} published serving measurements (TensorRT-LLM 0.14 and 1.0, "
        "NVIDIA NIM, LMDeploy, vLLM and SGLang on DeepSeek), each with its source and setup. Median absolute error "
        f"**{cal['serving_median_abs_error']:.0%}** on online serving of dense models; the regimes the model "
        "covers less well are listed with their own errors."
    )
    page.table(cached.serving_calibration_table(), "serving_calibration", "gpuplan-serving-calibration.csv")
