"""Methodology's energy, carbon, owning, other-accelerator, demand-growth and price-tier text, each formula and
default read from the core (pure: no streamlit; methodology.py places it after the serving formulas)."""

from __future__ import annotations

from gpuplan_core import Site, get_gpu, power_draw, site_figures


def _pw(gpu: str, phase: str) -> str:
    d = power_draw(get_gpu(gpu), phase)
    host = f" + {d.host_watts:,.0f} W host" if d.host_watts else ""
    return f"{d.fraction:.0%} of TDP on {gpu}{host}"


def _region_line() -> str:
    s = Site()
    f = site_figures(s.region, None, None, None)
    return f"{f.label}: {f.gco2_per_kwh:,.0f} g CO2/kWh, {f.usd_per_kwh:.4f} USD/kWh, PUE {f.pue:.2f}"


def energy_text() -> str:
    """Energy, carbon, owning and price tiers: each formula and default with its source (read from the core)."""
    return f"""
### Energy, carbon and owning (`gpuplan_core/pricing/energy.py`, `plan/site.py`)
- **Average power** per GPU = TDP x a measured power fraction for the phase + the host's share per GPU
  (`data/power.csv`): training at {_pw("H100-SXM", "training")}; serving at {_pw("A100-80GB-SXM", "serving")}
  (vLLM at full load); GPUs without a measurement of their own take the default row of their phase. Board TDP is
  never used as the average.
- **Energy** = GPU-hours x average watts / 1,000 x PUE; its cost = kWh x the electricity price; **CO2** = kWh x the
  grid's intensity. Serving: the always-on GPUs' kWh a month, and per 1M output tokens the month's kWh / the
  month's output tokens x 10^6 (at your traffic: requests a day x output tokens x days a month; without one, the
  replicas' capacity at the serving utilization). The region (`data/regions.csv`: codecarbon's grid intensities, a
  tariff per region with its own source: EIA, Eurostat, the Bundesnetzagentur, SDES; Google's and Uptime's PUE) sets
  the three unless you give them; a region with no published tariff read is priced at the US industrial average and
  says so; default {_region_line()}.
- **Owning** a month = server price per GPU x GPUs / (years x 12) + power at the busy share of hours + hosting per kW
  of peak IT load (TDP + host); renting = the rental's price x GPUs x hours x the busy share; **break-even** =
  purchase / (renting - power - hosting) a month; owning wins above the busy share where the two meet. Server
  prices: `data/ownership.csv` (Epoch AI's archived price list: complete servers / their GPUs), amortisation
  {Site().amortisation_years:g} years (Epoch AI), hosting
  {Site().hosting_usd_per_kw_month:,.2f} USD per kW-month (CBRE, H2 2024); each is an input.
- **Other accelerators** (TPU v5e / v5p / v6e, Trainium2, Inferentia2, Gaudi 3; `data/gpus.csv` rows of kind
  tpu / trainium / inferentia / gaudi, each figure from the vendor's pages): the memory and roofline models apply as
  they are; no published measurement calibrates them, so every estimate on them says "no comparable measurement".
  The recommender considers them only with "Also consider TPUs, Trainium, Inferentia and Gaudi" on (off by
  default, so no answer changes otherwise); Compare's B side can name one. Their vendors publish no board power
  (Gaudi 3 aside), so their energy is not estimated.
- **Demand that grows** (`gpuplan_core/plan/growth.py`): with a monthly growth rate and an optional spike (a month at
  a multiple of the traffic), the answer's pick is re-planned month by month with the same serving model: requests a
  day (m) = today's x (1 + growth)^m (x the spike factor in its month); replicas (m) = ceil(peak rate (m) / one
  replica's capacity within the targets); each month billed as the pick is (whole nodes). The Cost page marks the
  first month the pick needs more replicas, what that month costs, and the month serving passes a training bill.
- **Price tiers**: the cheapest offer of each billing (on-demand, spot with its restart overhead, reserved) for the
  answer's GPU type that can run its layout.

"""
