import numpy as np
import pytest

from fedsearch.algorithms.xarmed.tree import Nodes, Partition


def _descend(part, depth):
    nodes = part.root()
    for _ in range(depth):
        nodes = part.children(nodes)
    return nodes


@pytest.mark.parametrize("split", ["random", "longest"])
@pytest.mark.parametrize("k", [2, 3])
def test_children_tile_their_parent(split, k):
    part = Partition(3, split=split, k=k, random_state=0)
    parents = _descend(part, 3)
    children = part.children(parents)
    assert len(children) == k * len(parents)
    # indices: the children of (h, i) are (h + 1, k i - j), j = k - 1 .. 0
    assert np.all(children.depth == 4)
    expected = (k * parents.index[:, None] - np.arange(k - 1, -1, -1)[None, :]).ravel()
    assert np.array_equal(children.index, expected)
    vol = lambda n: np.prod(n.upper - n.lower, axis=1)
    assert np.allclose(vol(children).reshape(-1, k).sum(axis=1), vol(parents))
    lower = children.lower.reshape(len(parents), k, 3)
    upper = children.upper.reshape(len(parents), k, 3)
    assert np.all(lower >= parents.lower[:, None] - 1e-15)
    assert np.all(upper <= parents.upper[:, None] + 1e-15)
    # every random point of a parent lies in exactly one of its children
    rng = np.random.default_rng(0)
    points = parents.sample(50, rng)
    owner = np.repeat(np.arange(len(parents)), 50)
    inside = np.all((points[:, None] >= lower[owner]) & (points[:, None] < upper[owner]), axis=2)
    assert np.all(inside.sum(axis=1) == 1)
    # a whole level tiles the cube
    assert np.isclose(vol(children).sum(), 1.0)


def test_root_and_single_node_lookup():
    part = Partition(2, random_state=3)
    root = part.root()
    assert root.keys() == [(0, 1)]
    assert np.array_equal(root.lower, [[0, 0]]) and np.array_equal(root.upper, [[1, 1]])
    level = _descend(part, 5)
    for j in (0, 7, 31):
        node = part.node(5, j + 1)
        assert node.keys() == [(5, j + 1)]
        assert np.array_equal(node.lower, level.lower[[j]])
        assert np.array_equal(node.upper, level.upper[[j]])
    with pytest.raises(ValueError, match="no node"):
        part.node(2, 5)


def test_diameters_shrink():
    for split in ("random", "longest"):
        part = Partition(4, split=split, random_state=1)
        nodes = part.root()
        for _ in range(8):
            children = part.children(nodes)
            assert np.all(children.diameters.reshape(len(nodes), 2) <= nodes.diameters[:, None] + 1e-15)
            nodes = children
    # "longest" halves every side once per n_dims levels: diameter sqrt(d) 2^(-h/d)
    part = Partition(4, split="longest")
    nodes = _descend(part, 8)
    assert np.allclose(nodes.diameters, 2.0 * 0.25)
    assert np.allclose(nodes.upper - nodes.lower, 0.25)


def test_same_seed_same_split_and_seeds_differ():
    a, b, c = (Partition(5, random_state=s) for s in (7, 7, 8))
    na, nb, nc = (_descend(p, 6) for p in (a, b, c))
    assert np.array_equal(na.lower, nb.lower) and np.array_equal(na.upper, nb.upper)
    assert not np.array_equal(na.lower, nc.lower)
    # a node's split does not depend on which other nodes are expanded
    sub = na[[3, 17]]
    assert np.array_equal(a.split_dims(sub), a.split_dims(na)[[3, 17]])
    assert sub.keys() == [na.keys()[3], na.keys()[17]]


def test_random_split_dimension_is_roughly_uniform():
    part = Partition(4, random_state=0)
    dims = part.split_dims(_descend(part, 12))
    freq = np.bincount(dims, minlength=4) / len(dims)
    assert np.allclose(freq, 0.25, atol=0.03)


def test_longest_split_breaks_ties_on_lowest_dimension():
    part = Partition(3, split="longest")
    assert part.split_dims(part.root()).tolist() == [0]
    assert part.split_dims(part.children(part.root())).tolist() == [1, 1]


def test_sample_points_lie_in_their_node():
    part = Partition(2, random_state=0)
    nodes = _descend(part, 4)
    counts = np.arange(len(nodes)) % 3
    points = nodes.sample(counts, np.random.default_rng(0))
    owner = np.repeat(np.arange(len(nodes)), counts)
    assert points.shape == (counts.sum(), 2)
    assert np.all((points >= nodes.lower[owner]) & (points <= nodes.upper[owner]))
    centers = nodes.sample(2, None, pull="center")
    assert np.array_equal(centers, np.repeat(nodes.centers, 2, axis=0))
    with pytest.raises(ValueError, match="pull"):
        nodes.sample(1, None, pull="corner")


def test_nodes_indexing_keeps_columns_together():
    nodes = _descend(Partition(2, random_state=0), 3)
    sub = nodes[nodes.index % 2 == 0]
    assert isinstance(sub, Nodes) and len(sub) == 4
    assert sub.index.tolist() == [2, 4, 6, 8]


@pytest.mark.parametrize("kwargs, match", [
    ({"n_dims": 0}, "n_dims"),
    ({"n_dims": 2, "split": "median"}, "split"),
    ({"n_dims": 2, "k": 1}, "k must"),
])
def test_invalid_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Partition(**kwargs)


def test_depth_limit():
    part = Partition(1)
    deep = Nodes(np.array([part.max_depth]), np.array([1]), np.zeros((1, 1)), np.ones((1, 1)))
    with pytest.raises(ValueError, match="deeper"):
        part.children(deep)
