"""The pipeline schedule's, expert parallel's and HSDP group's records (interface/records_parallel.py): searched by default, a
number set in a link sets the field, anything else is refused with the default kept."""

from gpuplan_core.interface.links import read_link
from gpuplan_core.interface.records_parallel import PARALLEL_RECORDS

RECORDS = {r.key: r for r in PARALLEL_RECORDS}


def test_each_defaults_to_searched_and_writes_its_field():
    assert set(RECORDS) == {"vpp", "pipe", "ep", "hsdp"}
    assert RECORDS["pipe"].default == "auto" and RECORDS["pipe"].field_names() == ("pipeline_schedule",)
    assert RECORDS["pipe"].label_of("zb-h1") == "ZB-H1" and RECORDS["pipe"].means_none("auto")
    assert RECORDS["hsdp"].default == "auto" and RECORDS["hsdp"].field_names() == ("shard_gpus",)
    assert RECORDS["hsdp"].label_of(0) == "off" and RECORDS["hsdp"].means_none("auto")
    assert RECORDS["vpp"].default == "auto" and RECORDS["ep"].default == "auto"
    assert RECORDS["vpp"].field_names() == ("virtual_stages",) and RECORDS["ep"].field_names() == ("ep",)
    assert RECORDS["vpp"].means_none("auto") and not RECORDS["vpp"].means_none(1)


def test_a_link_sets_them_and_a_bad_value_keeps_the_default():
    values, notes = read_link({"workload": "Pre-training", "vpp": "4", "ep": "16"})
    assert (values["vpp"], values["ep"], notes) == (4, 16, [])
    values, notes = read_link({"workload": "Pre-training", "vpp": "3"})
    assert "vpp" not in values and len(notes) == 1 and "not allowed" in notes[0]
