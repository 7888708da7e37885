"""Transects: hyperplanes, Algorithm 1's projection, Algorithm 2, grids and drift (`searcher transect`: tests/searcher/studies)."""


import numpy as np
import pandas as pd
import pytest

from searcher.analysis.transects import (
    Hyperplane,
    attribute_vector,
    axis_drift,
    fit_hyperplanes,
    hyperplane_table,
    make_transects,
    orthogonalise,
    plan_transects,
    project_to_intersection,
    prune_transects,
    transect_drift,
)
from searcher.errors import ParameterError

D = 16


def unit(v):
    return v / np.linalg.norm(v)


def plane(normal, offset=0.0, name="a"):
    return Hyperplane(name, "continuous", unit(np.asarray(normal, float)), offset, 1.0, 0.0, "r2", 1.0, 0, 0)


@pytest.fixture(scope="module")
def planted():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((1500, D))
    u = unit(rng.standard_normal(D))
    y = 3.0 * z @ u + 0.5 * rng.standard_normal(len(z)) + 10.0
    return z, u, y


def test_ridge_recovers_a_planted_direction(planted):
    z, u, y = planted
    p = fit_hyperplanes(z, pd.DataFrame({"y": y}), neutral={"y": 10.0})["y"]
    assert p.kind == "continuous" and p.metric == "r2" and p.score > 0.9
    assert p.normal @ u > 0.95 and np.isclose(np.linalg.norm(p.normal), 1.0)
    assert p.n_train == 1200 and p.n_test == 300
    # decision values are latent distances; predict() is in attribute units
    assert p.scale == pytest.approx(3.0, rel=0.05)
    assert np.corrcoef(p.predict(z), y)[0, 1] > 0.98 and abs(p.predict(np.zeros(D))[0] - 10.0) < 0.1


def test_svm_recovers_a_planted_direction_and_binarises_at_a_cut(planted):
    z, u, y = planted
    table = pd.DataFrame({"flag": (z @ u + 0.2 * np.random.default_rng(1).standard_normal(len(z))) > 0.3, "y": y})
    planes = fit_hyperplanes(z, table, binary={"y": 10.0})
    assert planes["flag"].kind == "binary" and planes["flag"].metric == "accuracy" and planes["flag"].score > 0.9
    assert planes["flag"].normal @ u > 0.95 and np.isnan(planes["flag"].neutral)
    assert planes["y"].kind == "binary" and planes["y"].neutral == 10.0 and planes["y"].normal @ u > 0.95
    assert planes["flag"].decision(np.array([0.3 * u, 2 * u])) @ [1, 0] == pytest.approx(0.0, abs=0.1)  # boundary near u.z = 0.3
    assert list(hyperplane_table(planes)["attribute"]) == ["flag", "y"] and "w15" in hyperplane_table(planes)


def test_fit_rejects_bad_input(planted):
    z, _, y = planted
    with pytest.raises(ParameterError, match="Numeric columns: y"):
        fit_hyperplanes(z, pd.DataFrame({"y": y}), ["nope"])
    with pytest.raises(ParameterError, match="one row per annotation row"):
        fit_hyperplanes(z[:10], pd.DataFrame({"y": y}))
    with pytest.raises(ParameterError, match="one class only"):
        fit_hyperplanes(z, pd.DataFrame({"y": y}), binary={"y": 1e9})


def test_attribute_vector_balances_the_confounder():
    """Label and confounder correlated by selection (as in CelebA): balancing removes the confounder's direction."""
    rng = np.random.default_rng(2)
    z = rng.standard_normal((20000, D))
    label, conf = z[:, 0] + rng.standard_normal(len(z)) > 0, z[:, 1] > 0
    keep = rng.random(len(z)) < np.where(label == conf, 0.9, 0.1)
    z, label, conf = z[keep], label[keep], conf[keep]
    naive = attribute_vector(z, label, np.zeros(len(z)))
    balanced = attribute_vector(z, label, conf)
    assert abs(naive[1]) > 0.5 and abs(balanced[1]) < 0.1 and balanced[0] > 0.95
    assert np.array_equal(balanced, attribute_vector(z, label, conf))  # seeded
    with pytest.raises(ParameterError, match="one row each"):
        attribute_vector(z, label[:5], conf)


def test_projection_lands_on_the_intersection_and_is_the_nearest_point():
    rng = np.random.default_rng(3)
    W = rng.standard_normal((3, D))
    planes = [plane(w, o) for w, o in zip(W, [0.5, -1.0, 0.2])]
    z = rng.standard_normal((5, D))
    targets = np.array([1.0, 0.0, -2.0])
    proj = project_to_intersection(z, planes, targets)
    N = np.stack([p.normal for p in planes])
    b = np.array([p.offset for p in planes])
    assert np.abs(proj.z @ N.T + b - targets).max() < 1e-6 and proj.residual <= proj.tolerance
    assert 1 < proj.iterations < 1000
    closed = z - (np.linalg.solve(N @ N.T, (z @ N.T + b - targets).T).T) @ N  # nearest point of the intersection
    assert np.allclose(proj.z, closed, atol=1e-6)
    # orthogonal normals: one sweep, and any other point of the intersection is farther away
    Q = np.linalg.qr(rng.standard_normal((D, 3)))[0].T
    orth = project_to_intersection(z[0], [plane(q, 0.1) for q in Q])
    assert orth.iterations == 1 and np.abs(orth.z @ Q.T + 0.1).max() < 1e-6
    other = orth.z + (np.eye(D) - Q.T @ Q) @ rng.standard_normal(D)
    assert np.abs(other @ Q.T + 0.1).max() < 1e-6
    assert np.linalg.norm(other - z[0]) > np.linalg.norm(orth.z - z[0])


def test_projection_refuses_parallel_hyperplanes():
    w = np.ones(D)
    with pytest.raises(ParameterError, match="linearly dependent"):
        project_to_intersection(np.zeros(D), [plane(w, 0.0), plane(w, 1.0)])


def test_orthogonalised_directions_are_orthogonal_to_the_other_normals():
    N = np.random.default_rng(4).standard_normal((4, D))
    N[1] += 2 * N[0]  # strongly correlated normals
    V = orthogonalise(N)
    dots = V @ N.T
    assert np.allclose(np.linalg.norm(V, axis=1), 1.0)
    assert np.abs(dots[~np.eye(4, dtype=bool)]).max() < 1e-10 and (np.diag(dots) > 0).all()
    with pytest.raises(ParameterError, match="span of the others"):
        orthogonalise(np.stack([N[0], N[1], N[0] + N[1]]))


def test_grid_decision_values_are_exact_and_held_hyperplanes_stay_put():
    rng = np.random.default_rng(5)
    W = rng.standard_normal((3, D))
    W[1] += W[0]
    planes = {name: plane(w, 0.3, name) for name, w in zip("abc", W)}
    t = plan_transects(planes, ["a", "b"], size=(3, 2), n=4, steps={"a": 1.0, "b": [-0.5, 2.0]}, seed=0)
    assert len(t.table) == 24 and t.latents.shape == (24, D) and t.projection.residual < 1e-6
    assert np.allclose(t.table["decision_a"], t.table["value_a"]) and np.allclose(t.table["decision_b"], t.table["value_b"])
    assert sorted(t.table["value_a"].unique()) == [-1.0, 0.0, 1.0] and sorted(t.table["value_b"].unique()) == [-0.5, 2.0]
    assert t.table.groupby("transect")["decision_c"].agg(np.ptp).max() < 1e-9  # c is held
    raw = plan_transects(planes, ["a", "b"], size=(3, 2), n=4, steps={"a": 1.0, "b": [-0.5, 2.0]}, seed=0, orthogonalise=False)
    assert not np.allclose(raw.table["decision_a"], raw.table["value_a"])
    assert raw.table.groupby("transect")["decision_c"].agg(np.ptp).min() > 0.01
    assert np.allclose(raw.projection.z, t.projection.z)  # same base points
    with pytest.raises(ParameterError, match="hyperplanes: a, b, c"):
        plan_transects(planes, ["a", "zz"], size=(2, 2))
    with pytest.raises(ParameterError, match="one integer >= 1 per attribute"):
        plan_transects(planes, ["a", "b"], size=(2,))


@pytest.fixture(scope="module")
def latent_planes(latent):
    z = np.random.default_rng(6).standard_normal((2000, latent.latent_dim))
    truth = pd.DataFrame(latent.attributes(z))  # the rendered attributes, without rendering
    return fit_hyperplanes(z, truth, ["hair_length", "gender_presentation", "skin_tone"])


def test_orthogonalised_hair_transects_hold_gender(latent, latent_planes):
    """The planted hair<->gender entanglement: walking the raw hair normal drags gender; Algorithm 2 does not."""
    planes = {a: latent_planes[a] for a in ("hair_length", "gender_presentation")}
    drift = {}
    for ortho in (False, True):
        t = plan_transects(planes, ["hair_length"], size=(2,), n=40, steps=1.5, seed=1, orthogonalise=ortho)
        truth = pd.DataFrame(latent.attributes(t.latents))
        change = axis_drift(pd.concat([t.table, truth], axis=1), ["hair_length"], ["hair_length", "gender_presentation"])
        drift[ortho] = change.assign(change=change["change"].abs()).groupby("attribute")["change"].mean()
    assert drift[False]["gender_presentation"] > 0.15 and drift[True]["gender_presentation"] < 0.2 * drift[False]["gender_presentation"]
    assert drift[True]["hair_length"] > 0.6  # hair still changes


def test_make_transects_renders_every_grid_point(latent, latent_planes):
    t = make_transects(latent, latent_planes, ["skin_tone", "hair_length"], size=(2, 2), n=2, seed=3)
    assert t.images.shape == (8, 64, 64, 3) and len(t.table) == 8
    expected = {"transect", "image", "idx_skin_tone", "value_hair_length", "decision_gender_presentation", "skin_tone", "earrings"}
    assert expected <= set(t.table.columns)
    # the grid moves skin tone where asked; gender (held, orthogonalised) stays within the nonlinearity's wiggle
    dark = t.table.groupby("idx_skin_tone")["skin_tone"].mean()
    assert dark[1] - dark[0] > 2.5
    drift = transect_drift(t.table, ["gender_presentation", "earrings"])
    assert set(drift.columns) == {"transect", "attribute", "range", "std"} and len(drift) == 4
    assert drift.set_index("attribute").loc["gender_presentation", "range"].max() < 0.05


def test_drift_and_pruning_of_transects():
    table = pd.DataFrame({
        "transect": [0, 0, 0, 0, 1, 1, 1, 1],
        "idx_a": [0, 0, 1, 1] * 2,
        "idx_b": [0, 1, 0, 1] * 2,
        "beard": [0.0, 0.0, 0.5, 0.7, 0.1, 0.1, 0.1, 0.1],
        "age": [30.0, 31, 30, 31, 50, 50, 50, 70],
    })
    drift = transect_drift(table, ["beard", "age"]).set_index(["transect", "attribute"])
    assert drift.loc[(0, "beard"), "range"] == pytest.approx(0.7) and drift.loc[(1, "age"), "range"] == 20
    assert drift.loc[(1, "beard"), "std"] == 0
    change = axis_drift(table, ["a", "b"], ["beard"])
    along_a = change[change["axis"] == "a"].set_index(["transect", "idx_b"])["change"]
    assert along_a[(0, 0)] == pytest.approx(0.5) and along_a[(0, 1)] == pytest.approx(0.7) and along_a[(1, 0)] == 0
    report = prune_transects(transect_drift(table, ["beard", "age"]), {"beard": 0.3, "age": 10})
    assert list(report.kept) == [] and report.steps["removed"].tolist() == [1, 1]
    assert list(prune_transects(transect_drift(table, ["beard"]), 0.3).kept) == [1]
    with pytest.raises(ParameterError, match="Measured: beard"):
        prune_transects(transect_drift(table, ["beard"]), {"smile": 0.1})
