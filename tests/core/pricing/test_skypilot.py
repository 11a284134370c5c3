"""The SkyPilot catalog importer: GCP's split host/GPU rows, fake spot prices, fractional GPUs, zero prices."""

import pytest

from gpuplan_core.pricing.skypilot import import_skypilot_vms

SKYPILOT_GCP = """InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice
a2-highgpu-1g,12,85,A100,1,,us-central1,us-central1-a,0.73948,0.2
,,,A100,1,,us-central1,us-central1-a,2.93391,1.0
n2-standard-8,8,32,,,,us-central1,us-central1-a,0.38,0.1
"""
SKYPILOT_RUNPOD = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Region,SpotPrice,Price,AvailabilityZone,GpuInfo
1x_H100_SECURE,H100,1,16,80,CA,3.29,3.29,,
"""
SKYPILOT_AWS = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,Arch
g6f.2xlarge,L4,0.25,8,32,,0.475,0.2,us-east-1,use1-az1,x86_64
"""


def test_skypilot_import_traps():
    gcp = import_skypilot_vms(SKYPILOT_GCP, "gcp", retrieved="2026-11-29")
    od = [o for o in gcp.offers if o.billing_model == "on_demand"]
    assert len(od) == 1 and od[0].price_per_node_hour_usd == pytest.approx(0.73948 + 2.93391)  # host + GPU = 3.67339
    rp = import_skypilot_vms(SKYPILOT_RUNPOD, "runpod")
    assert [o.billing_model for o in rp.offers] == ["on_demand"]  # spot == on-demand: not a spot offer
    aws = import_skypilot_vms(SKYPILOT_AWS, "aws")
    quarter = [o for o in aws.offers if o.billing_model == "on_demand"][0]
    assert quarter.gpus_per_node == 0.25 and quarter.price_per_gpu_hour_usd == pytest.approx(1.9)
    bad = import_skypilot_vms("a,b\n1,2\n", "aws")
    assert bad.errors and not bad.offers


def test_a_zero_on_demand_price_is_an_error_not_a_free_offer():
    text = SKYPILOT_AWS + "p5.48xlarge,H100,8,192,2048,,0,0,us-east-1,use1-az1,x86_64\n"
    r = import_skypilot_vms(text, "aws")
    assert {o.product for o in r.offers} == {"g6f.2xlarge"}  # the L4 row stays; a zero spot price is skipped
    assert [(e.line, e.column) for e in r.errors] == [(3, "Price")]
    assert "0 is not allowed; allowed: above 0" in r.errors[0].message
