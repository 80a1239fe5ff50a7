"""The explorer's head-roles view: its data from head_scores, and in headless Chromium a
layers × heads table per score whose cells open that head; `explore --induction`'s refusals."""

from __future__ import annotations

import pytest
from explorer_support import browser_fixture, browser_marks, page_fixture  # noqa: F401
from test_interp import T, _circuit

from attnlab.cli import main as cli_main
from attnlab.data.repeated import repeated_probe
from attnlab.explorer import write_page
from attnlab.explorer.sources.build import view_from_traces
from attnlab.explorer.sources.models import model_page
from attnlab.explorer.sources.roles import roles_data, with_roles
from attnlab.explorer.sources.traces import attnlab_traces
from attnlab.interp import SCORES, head_scores


def _page() -> dict:
    model = _circuit()
    ids = repeated_probe(16, 8, n=1, seed=0)[0].tolist()
    view = view_from_traces("repeat", [f"t{i}" for i in ids], attnlab_traces(model, ids))
    return with_roles(model_page(model, [view], "circuit", "a hand-built circuit"), model)


def test_roles_data_holds_every_score_as_layers_by_heads():
    roles = roles_data(head_scores(_circuit()))
    assert list(roles["scores"]) == list(SCORES)
    assert all(len(g) == 2 and len(g[0]) == 1 for g in roles["scores"].values())
    assert roles["scores"]["previous"][0][0] > 0.95 and roles["scores"]["induction"][1][0] > 0.9
    assert f"{T // 2} random tokens" in roles["note"]


def test_explore_induction_refuses_text_and_serve(capsys):
    assert cli_main.main(["explore", "--induction", "--text", "a b"]) == 2
    assert "--induction shows its own sentences" in capsys.readouterr().err


@pytest.fixture(scope="module")
def roles_url(tmp_path_factory) -> str:
    return write_page(_page(), tmp_path_factory.mktemp("roles") / "r.html").as_uri()


@browser_marks[0]
@browser_marks[1]
def test_a_roles_cell_opens_its_head(page, roles_url) -> None:
    page.goto(roles_url)
    assert page.get_by_test_id("roles").is_visible()
    for name in SCORES:
        assert page.get_by_test_id(f"roles-{name}").locator("td").count() == 2
    cell = page.get_by_test_id("role-induction-1-0")
    assert float(cell.text_content()) > 0.9
    page.get_by_test_id("mode-grid").click()
    cell.click()
    assert page.get_by_test_id("mode-head").get_attribute("aria-pressed") == "true"
    assert page.get_by_test_id("layer-select").input_value() == "1"
    page.get_by_test_id("role-previous-0-0").focus()
    page.keyboard.press("Enter")
    assert page.get_by_test_id("layer-select").input_value() == "0"
    assert all(u.startswith("file://") for u in page.requests)
