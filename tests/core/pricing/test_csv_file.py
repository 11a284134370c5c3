"""The pricing CSV: the bundled file, a corpus of broken files (every bad row reported), prices above zero only,
consistency warnings, GPU aliases and the round trip through offers_to_csv."""

import datetime as dt

import pytest

from gpuplan_core.pricing.csv_file import ALL_COLUMNS, RowIssue, load_pricing_text, offers_to_csv, parse_row


def test_seed_pricing_loads_clean_with_sources(seed):
    assert len(seed.offers) == 113 and seed.errors == []  # 98 GPU offers + 15 of the other accelerators
    assert all(o.source for o in seed.offers)
    assert {o.gpu for o in seed.offers} >= {"H100-SXM", "H200", "B200", "L40S", "L4", "RTX-PRO-6000", "A100-80GB-SXM"}
    assert all(o.price_per_gpu_hour_usd > 0 and o.price_per_node_hour_usd > 0 for o in seed.offers)


@pytest.mark.parametrize(
    "name,line,column,match,good",
    [
        ("negative_price.csv", 3, "price_per_node_hour_usd", "-55.04 is not allowed; allowed: above 0 (> 0", 1),
        ("negative_price.csv", 3, "price_per_gpu_hour_usd", "-6.88 is not allowed; allowed: above 0 (> 0", 1),
        ("zero_price.csv", 3, "price_per_gpu_hour_usd", "0 is not allowed; allowed: above 0 (> 0 USD per GPU-hour)", 1),
        ("zero_price.csv", 4, "price_per_node_hour_usd", "0 is not allowed; allowed: above 0 (> 0 USD per node", 1),
        ("unknown_gpu.csv", 3, "gpu", "unknown GPU 'Z900'", 1),
        ("text_in_number.csv", 3, "price_per_node_hour_usd", "'fifty' is not a number", 1),
        ("bad_billing_model.csv", 3, "billing_model", "'weekly' is not allowed", 1),
        ("short_row.csv", 4, "", "has 2 cells but the header has 28", 2),
        ("missing_columns.csv", 1, "product", "required column is missing", 0),
        ("empty.csv", 0, "", "empty", 0),
        ("binary.csv", 0, "", "not a UTF-8 text file", 0),
    ],
)
def test_broken_pricing_files_report_every_bad_row(corpus, name, line, column, match, good):
    r = load_pricing_text((corpus / name).read_bytes())
    assert len(r.offers) == good
    hit = [e for e in r.errors if e.line == line and e.column == column]
    assert hit, [str(e) for e in r.errors]
    assert match in hit[0].message


def test_a_price_of_zero_or_below_is_a_row_error_naming_the_offer_and_the_row_is_not_used(corpus):
    r = load_pricing_text((corpus / "zero_price.csv").read_bytes())
    assert [o.offer_id for o in r.offers] == ["aws-p6-b200-48xl-use1-od"]  # the good row stays
    assert [(e.line, e.offer_id, e.column) for e in r.errors] == [
        (3, "aws-p5-zero-gpu-price", "price_per_gpu_hour_usd"),  # 0 per GPU-hour, no node price to derive from
        (4, "aws-p5-zero-node-price", "price_per_node_hour_usd"),  # "0.00" per node-hour, no per-GPU price
    ]
    # what the Data page shows: line, offer, column and what is allowed
    assert str(r.errors[0]) == (
        "line 3 (offer aws-p5-zero-gpu-price), column price_per_gpu_hour_usd: 0 is not allowed; "
        "allowed: above 0 (> 0 USD per GPU-hour)"
    )


@pytest.mark.parametrize("value", ["0", "-0", "0.0", "$0.00", "-0.01", "-1,000"])
@pytest.mark.parametrize("column", ["price_per_gpu_hour_usd", "price_per_node_hour_usd"])
def test_each_price_column_refuses_zero_and_negatives(seed_row, column, value):
    header, row = seed_row
    cells = dict(zip(header.split(","), row.split(","), strict=True)) | {column: value}
    offer, issues = parse_row(cells, 2)
    assert offer is None
    assert [(i.column, i.offer_id) for i in issues] == [(column, "aws-p6-b200-48xl-use1-od")]
    assert "allowed: above 0 (> 0 USD per" in issues[0].message


def test_a_positive_price_is_kept_and_the_other_derived_from_it(seed_row):
    header, row = seed_row
    cells = dict(zip(header.split(","), row.split(","), strict=True))
    by_gpu, issues = parse_row(cells | {"price_per_gpu_hour_usd": "0.01", "price_per_node_hour_usd": ""}, 2)
    assert issues == [] and by_gpu.price_per_node_hour_usd == pytest.approx(0.01 * 8)  # 8 GPUs per node
    by_node, issues = parse_row(cells | {"price_per_gpu_hour_usd": "", "price_per_node_hour_usd": "0.08"}, 2)
    assert issues == [] and by_node.price_per_gpu_hour_usd == pytest.approx(0.08 / 8)


def test_a_row_issue_names_line_offer_and_column():
    assert str(RowIssue(7, "gpu", "unknown GPU 'Z900'", "x-1")) == "line 7 (offer x-1), column gpu: unknown GPU 'Z900'"
    assert str(RowIssue(0, "", "the file is empty")) == "file: the file is empty"


def test_semicolon_file_is_read_with_a_warning(corpus):
    r = load_pricing_text((corpus / "semicolons.csv").read_bytes())
    assert len(r.offers) == 2
    assert any("semicolons" in w.message for w in r.warnings)


def test_consistency_warnings(seed_row):
    header, row = seed_row
    bad_node = row.replace("113.9328", "100.0")  # per-GPU x 8 != node price
    spot = (
        row.replace("aws-p6-b200-48xl-use1-od", "aws-p6-b200-spot-x")
        .replace(",on_demand,", ",spot,")
        .replace("113.9328,14.2416", "200,25")
    )
    old = row.replace("aws-p6-b200-48xl-use1-od", "old-row").replace("undated,2026-11-29", "2020-01-01,2020-01-02")
    r = load_pricing_text("\n".join([header, bad_node, spot, old]), max_age_days=365, today=dt.date(2026, 11, 29))
    msgs = " | ".join(str(w) for w in r.warnings)
    assert "but the node price is 100.0000" in msgs  # 14.2416 x 8 = 113.9328, not 100
    assert "spot 25.0000 is above on-demand" in msgs
    assert "days old" in msgs
    assert len(r.offers) == 3  # warnings keep the rows


def test_gpu_aliases_in_pricing(seed_row):
    header, row = seed_row
    rows = [
        row.replace(",B200,SXM,", f",{name},,").replace("aws-p6-b200-48xl-use1-od", f"id{i}")
        for i, name in enumerate(["H100 80GB HBM3", "RTX PRO 6000 Blackwell", "a100-40gb"])
    ]
    r = load_pricing_text("\n".join([header, *rows]))
    assert [o.gpu for o in r.offers] == ["H100-SXM", "RTX-PRO-6000", "A100-40GB"]


def test_round_trip_csv(seed):
    text = offers_to_csv(seed.offers)
    assert text.splitlines()[0] == ",".join(ALL_COLUMNS)
    again = load_pricing_text(text)
    assert len(again.offers) == 113 and not again.errors
    assert [o.price_per_gpu_hour_usd for o in again.offers] == [o.price_per_gpu_hour_usd for o in seed.offers]
