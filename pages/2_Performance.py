"""Performance: rooflines of prefill and decode, TTFT / TPOT / throughput, and how far to trust them."""

import pandas as pd
import streamlit as st

from gpuplan_ui import cached, figures, fmt, page

sc, values = page.setup("Performance", ":material/speed:")
key = sc.model_dump_json()

if sc.mode != "inference":
    st.info(
        "Performance models serving (prefill and decode). For training time, GPU-hours and cost see the Cost "
        "page; switch the job to inference to see rooflines.",
        icon=":material/info:",
    )
else:
    with page.guard("Performance on the chosen GPU"):
        perf = cached.perf_report(key, (sc.gpu or "H100-SXM",))
        p = perf["gpus"][0]
        if "ttft_s" not in p:
            st.warning(" ".join(p["notes"]), icon=":material/warning:")
        else:
            st.caption(
                f"{fmt.md_escape(perf['model'])} on {p['gpu']} x{p['gpu_count']} (tp {p['tp']}, pp {p['pp']}), math "
                f"{p['math_format'].upper()}, batch {p['batch']}, prompt {p['prompt_tokens']:,}, "
                f"output {p['output_tokens']:,} tokens"
            )
            c = st.columns(5)
            c[0].metric(
                "Time to first token", fmt.ms(p["ttft_s"]), help="Prefill of the batch's prompts + fixed overhead"
            )
            c[1].metric(
                "Time per output token",
                fmt.ms(p["tpot_s"]),
                help=f"Exclusive of the first token; inclusive: {fmt.ms(p['tpot_inclusive_s'])}",
            )
            c[2].metric("Tokens/s per user", f"{p['decode_tokens_per_s_per_sequence']:,.1f}")
            c[3].metric(
                "Tokens/s, whole batch",
                f"{p['decode_tokens_per_s']:,.0f}",
                help=f"End to end incl. prefill: {p['output_tokens_per_s']:,.0f} output tokens/s",
            )
            c[4].metric(
                "Largest batch that fits",
                f"{p['max_batch']:,}",
                help=f"Decode's matmuls turn compute-bound at batch {p['compute_bound_batch'] or 'never'}",
            )
            if p.get("output_tokens_per_s_at_max_batch"):
                st.caption(
                    f"At the largest batch that fits ({p['max_batch']:,}): "
                    f"{p['output_tokens_per_s_at_max_batch']:,.0f} output tokens/s end to end. Decode's weight "
                    f"matmuls turn compute-bound at batch {p['compute_bound_batch'] or 'never'}; attention's KV "
                    "reads stay bandwidth-bound at any batch."
                )
            for n in p["notes"]:
                st.caption(n)
            left, right = st.columns(2)
            left.plotly_chart(figures.roofline_figure(p), key="roofline", config={"displaylogo": False})
            right.plotly_chart(figures.sweep_figure(p), key="sweep", config={"displaylogo": False})
            ph = pd.DataFrame(
                [
                    {
                        "phase": name,
                        "TFLOP": round(p[name]["flops"] / 1e12, 4),
                        "GB moved": round(p[name]["bytes"] / 1e9, 3),
                        "intensity (FLOP/B)": round(p[name]["intensity_flops_per_byte"], 1),
                        "bound": p[name]["bound"],
                        "time (ms)": round(p[name]["time_s"] * 1e3, 3),
                        "MFU": round(p[name]["mfu"], 3),
                        "MBU": round(p[name]["mbu"], 3),
                    }
                    for name in ("prefill", "decode")
                ]
            )
            st.markdown(
                f"**Phases** (ridge point {p['ridge_flops_per_byte']:,.1f} FLOP/byte: below it memory "
                "bandwidth limits, above it compute)"
            )
            page.table(ph, "phases", "gpuplan-phases.csv")

    with page.guard("Every catalog GPU"):
        st.subheader("Every catalog GPU")
        allp = cached.perf_report(key, tuple(g["gpu"] for g in cached.gpu_table()))
        ok = [r for r in allp["gpus"] if "ttft_s" in r]
        st.plotly_chart(figures.latency_figure(ok), key="latency", config={"displaylogo": False})
        rows = [
            {
                "GPU": r["gpu"],
                "GPUs": r["gpu_count"],
                "tp": r["tp"],
                "pp": r["pp"],
                "batch": r["batch"],
                "TTFT (ms)": round(r["ttft_s"] * 1e3, 1),
                "TPOT (ms)": round(r["tpot_s"] * 1e3, 2),
                "tokens/s per user": round(r["decode_tokens_per_s_per_sequence"], 1),
                "output tokens/s": round(r["output_tokens_per_s"], 0),
                "max batch": r["max_batch"],
                "compute-bound batch": r["compute_bound_batch"],
                "decode bound": r["decode"]["bound"],
            }
            for r in ok
        ]
        page.table(pd.DataFrame(rows), "perf_all", "gpuplan-performance.csv")
        missing = [r["gpu"] for r in allp["gpus"] if "ttft_s" not in r]
        if missing:
            st.caption(f"Does not fit on any layout: {', '.join(missing)}.")

with page.guard("Calibration"):
    st.subheader("How far to trust these numbers")
    cal = cached.calibration_report()
    st.markdown(
        f"The model with its default assumptions against **{len(cal['points'])} published measurements** "
        f"(FasterTransformer, TensorRT-LLM, vLLM): median absolute error "
        f"**{cal['median_abs_error']:.1%}** ({cal['median_abs_error_speed_only']:.1%} on speed points). "
        "No point is corrected individually."
    )
    cdf = pd.DataFrame(
        [
            {
                "id": r["id"],
                "GPU": f"{r['gpu']} x{r['gpu_count']}",
                "model": r["model"],
                "metric": r["metric"],
                "batch": r["batch"],
                "measured": round(r["measured"], 2),
                "predicted": round(r["predicted"], 2),
                "unit": r["unit"],
                "error": f"{r['error']:+.1%}",
                "setup": r["setup"],
                "source": r["source"],
            }
            for r in cal["points"]
        ]
    )
    page.table(cdf, "calibration", "gpuplan-calibration.csv")
