"""Hostile input, property-based: URL query parameters through AppTest, uploaded pricing CSVs,
scenario JSON and Hugging Face configs through their parsers. Nothing escapes as an exception;
every rejection names the field."""

import json
import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gpuplan_core.interface.inputs import DEFAULTS
from gpuplan_core.interface.links import read_link, read_scenario_file, upgrade_link
from gpuplan_core.model.hf_config import HFConfigError, model_from_hf_config
from gpuplan_core.pricing.csv_file import ALL_COLUMNS, load_pricing_text
from gpuplan_ui.fmt import md_escape
from tests.ui.apptest import COMPARE, COST, MEMORY, OVERVIEW, PERF, run_page

KEYS = sorted(DEFAULTS) + ["embed", "s", "x"]
nasty_text = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "",
            "nan",
            "inf",
            "-inf",
            "1e309",
            "-1",
            "0",
            "99999999999999999999",
            "true",
            "None",
            "<script>alert(1)</script>",
            "=cmd|' /C calc'!A0",
            "../../etc/passwd",
            "%00",
            "😀",
            "1,5",
        ]
    ),
    st.integers(-(10**12), 10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
)
params = st.dictionaries(st.sampled_from(KEYS), nasty_text, max_size=6)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    params,
    st.sampled_from([OVERVIEW, MEMORY, PERF, COST, COMPARE]),
)
def test_fuzzed_links_never_crash_a_page(qp, page):
    at = run_page(page, qp)
    assert not at.exception, [e.message for e in at.exception]
    shown = "\n".join(w.value for w in at.warning)
    for note in read_link(upgrade_link(qp)[0])[1]:
        key = note.split("=", 1)[0].removeprefix("Link value ")
        assert md_escape(key) in shown  # every rejected link value is named on the page (as escaped text)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(DEFAULTS)), nasty_text, max_size=8))
@example(qp={"batch": "1.1"})  # a whole-number field: rounded, and the note says to what
def test_link_notes_name_every_rejected_field(qp):
    for note in read_link(qp)[1]:
        assert note.startswith("Link value ") and "=" in note
        key = note.split("=", 1)[0].removeprefix("Link value ")
        assert key in qp
        rounded = re.search(r"is not a whole number; (-?\d+) is used\.$", note)
        if rounded:
            assert int(rounded.group(1)) == round(float(qp[key]))
        else:
            assert note.endswith("the default is used.")
            assert re.search(r"\(allowed: .+\)|is outside -?[\d.e+]+ to [\d.e+]+|must be true or false", note), note


cells = st.one_of(nasty_text, st.sampled_from(["H100", "on_demand", "spot", "3.5", "8", "aws", "x"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(cells, min_size=0, max_size=30), max_size=8), st.sampled_from([",", ";", "\t"]))
def test_fuzzed_pricing_csv_never_raises(rows, sep):
    header = sep.join(ALL_COLUMNS)
    body = "\n".join(sep.join(c.replace("\n", " ").replace("\r", " ") for c in r) for r in rows)
    report = load_pricing_text(header + "\n" + body)
    assert report.rows_read <= len(rows)
    for e in report.errors:
        assert str(e)  # every problem is a sentence with its line


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_fuzzed_pricing_bytes_never_raise(data):
    report = load_pricing_text(data)
    assert report.offers == [] or report.rows_read >= len(report.offers)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**15), 10**15), st.floats(), nasty_text),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=10), c, max_size=3),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(DEFAULTS) + ["zzz"]), json_values, max_size=8))
def test_fuzzed_scenario_files_never_raise(widgets):
    text = json.dumps({"kind": "gpuplan-scenario", "inputs": widgets}, default=str)
    values, notes = read_scenario_file(text)
    assert set(values) <= set(DEFAULTS)
    for k in widgets:
        assert k in values or any(k in n for n in notes)


HF_KEYS = [
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "num_key_value_heads",
    "vocab_size",
    "intermediate_size",
    "head_dim",
    "model_type",
    "num_local_experts",
    "num_experts_per_tok",
    "kv_lora_rank",
    "text_config",
    "tie_word_embeddings",
    "sliding_window",
    "layer_types",
]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(HF_KEYS), json_values, max_size=10))
def test_fuzzed_hf_configs_raise_only_clear_errors(cfg):
    try:
        model_from_hf_config(json.dumps(cfg, default=str))
    except HFConfigError as exc:
        assert str(exc).startswith("config.json:")
