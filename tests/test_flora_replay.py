"""The paper's own heart-statlog run replayed through fedsearch's surfaces (issue 16, item 2).

The paper's uploaded pairs go to :class:`LossSurfaces`; fedsearch's four picks are scored as the
paper scored (one stratified 10-fold split, seed 5489). A change to the surfaces or their arg-min
that loses the paper's quality on its own data fails here.
"""

import numpy as np
import pytest

from benchmarks import flora_replay

TABLE7_HEART = {"sgm": 0.69, "sgm+u": 0.55, "mplm": 0.89, "aplm": 0.50}  # the paper's Table 7


@pytest.fixture(scope="module")
def rows(data_dir):
    if not flora_replay.available(data_dir, "hgb", "heart_statlog"):
        pytest.skip("flora_paper_runs is absent")
    return flora_replay.replay(data_dir, "hgb", "heart_statlog")


def test_the_paper_frame_reproduces_table7(rows):
    paper = {r["surface"]: r["regret"] for r in rows if r["source"] == "paper"}
    assert {s: round(v, 2) for s, v in paper.items()} == TABLE7_HEART


def test_fedsearch_surfaces_keep_the_paper_quality_on_its_own_pairs(rows):
    ours = {r["surface"]: r["regret"] for r in rows if r["source"] == "fedsearch"}
    paper = {r["surface"]: r["regret"] for r in rows if r["source"] == "paper"}
    # measured: fedsearch 0.82 / 0.55 / 0.62 / 0.86 (sgm, sgm+u, aplm, mplm), mean 0.72, against the
    # paper's 0.66; one scoring split moves a regret by sd 0.3-0.6 here, hence the margin
    assert all(v < 1 for v in ours.values())  # every pick beats the default configuration
    assert np.mean(list(ours.values())) <= np.mean(list(paper.values())) + 0.1
