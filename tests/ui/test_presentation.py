"""What a product manager sees first: each page's answer, tables for people, the meeting view, your prices, and
no numbers for a model that did not load."""

import math
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gpuplan_core import api, load_pricing
from gpuplan_core.interface.inputs import to_scenario
from gpuplan_core.report.memory_answer import memory_answer
from gpuplan_ui.frame import PAGES as FRAME_PAGES
from gpuplan_ui.tables import SNAKE, for_people
from tests.ui.apptest import open_page

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGES = [f"app_pages/{f}" for f, *_ in FRAME_PAGES]
JOBS = {
    "inference": {},
    "traffic": {"rpd": "100000"},
    "finetune": {"workload": "Fine-tuning"},
    "pretrain": {"workload": "Pre-training"},
}


def run(page: str, params: dict | None = None) -> AppTest:
    return open_page(page, params, timeout=90)


def check_tables(at: AppTest, where: str) -> None:
    """No table shows None, a snake_case header or a float with more than 4 decimals."""
    for d in at.dataframe:
        df = d.value
        for col in df.columns:
            assert not SNAKE.fullmatch(str(col)), f"{where}: header {col!r}"
            values = df[col].tolist()
            assert not any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values), f"{where}: {col}"
            assert not any(isinstance(v, str) and v.strip() in ("None", "nan") for v in values), f"{where}: {col}"
            for v in values:
                if isinstance(v, float):
                    assert round(v, 4) == v, f"{where}: {col} = {v!r} is not rounded"


@pytest.mark.parametrize("job", list(JOBS))
@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_with_its_answer_and_shows_tables_for_people(page, job):
    at = run(page, JOBS[job])
    assert not at.exception, at.exception
    children = list(at.main.children.values())
    assert type(children[0]).__name__ == "Title"
    first = children[1]
    assert type(first).__name__ in ("Success", "Info", "Warning"), (page, job, type(first).__name__)
    sentence = first.value
    assert "\n" not in sentence and sentence.rstrip().endswith("."), sentence
    assert len(at.main.get("metric")) <= 12  # the answer's at most four, then the page's own (Compare's panels)
    check_tables(at, f"{page} {job}")


def test_the_memory_answer_is_the_cores():
    """The Memory page's answer is the core's at the answer's layout (the report built with the default prices)."""
    at = run("app_pages/Memory.py")
    sc, _ = to_scenario({})
    ans = memory_answer(api.memory_report(sc, offers=load_pricing().offers), sc)
    assert at.success[0].value == ans.sentence.replace("$", "\\$")
    assert [m.label for m in at.metric[:4]] == [h.label for h in ans.headlines]


def test_tables_for_people_round_and_fill_gaps():
    import pandas as pd

    df = pd.DataFrame({"offer_id": ["a", "b"], "USD/GPU-hour": [1.23456, None], "GPUs": [1, 8]})
    shown = for_people(df)
    assert list(shown.columns) == ["offer id", "USD/GPU-hour", "GPUs"]
    assert shown["USD/GPU-hour"].tolist() == ["1.23", "n/a"]
    assert df["USD/GPU-hour"][0] == 1.23456  # the CSV keeps full precision


def test_meeting_view_from_a_link_hides_the_detail_tables():
    normal, meeting = run("app_pages/Memory.py"), run("app_pages/Memory.py", {"meeting": "true"})
    assert normal.dataframe and not meeting.dataframe
    assert len(meeting.get("plotly_chart")) == 1  # the answer, its numbers and one chart
    assert any(b.key == "leave_meeting" for b in meeting.button)
    assert meeting.success[0].value == normal.success[0].value


def test_your_price_changes_the_recommendation_and_is_marked():
    base = run("app_pages/overview.py")
    top = re.search(r"from (\S+) for \\\$([\d,.]+) a month", base.success[0].value)
    assert top
    offer = next(d.value for d in base.dataframe if "offer" in d.value.columns)["offer"].iloc[0]
    at = run("app_pages/overview.py", {"myprice": f"{offer}=0.01"})
    assert "at your price" in at.success[0].value
    cheaper = float(re.search(r"for \\\$([\d,.]+) a month", at.success[0].value).group(1).replace(",", ""))
    assert cheaper < float(top.group(2).replace(",", ""))
    assert "Your prices (1)" in " ".join(c.value for c in at.caption)
    bad = run("app_pages/overview.py", {"myprice": "no-equals-sign"})
    notes = " ".join(w.value for w in bad.warning)  # the link's note, said once
    assert "your prices: 'no-equals-sign' is not 'offer-id=USD per GPU-hour'" in notes
