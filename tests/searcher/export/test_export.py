"""`searcher export`: what it writes is read, unchanged, by libraries nobody here wrote (Hugging Face
`datasets`, pyarrow, pycocotools), holds the right labels, and is whole or absent."""

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import searcher
import targets
from searcher.campaign import Campaign, load_campaign
from searcher.campaign.store import Store
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.export import export
from searcher.export.select import quotas, weights

datasets = pytest.importorskip("datasets")


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_imagefolder_loads_unchanged_with_hugging_face_datasets(gender_campaign, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    result = export(gender_campaign, tmp_path / "hard")
    trials = load_campaign(gender_campaign).trials
    judged_failures = trials[(trials["loss"] >= 0.5) & trials["error"].isna()]
    assert len(result.metadata) == judged_failures["image"].nunique() > 20

    data = datasets.load_dataset("imagefolder", data_dir=str(tmp_path / "hard"), cache_dir=str(tmp_path / "cache"))["train"]
    meta = pd.read_csv(tmp_path / "hard" / "train" / "metadata.csv")
    assert len(data) == len(meta) and set(meta.columns) - {"file_name"} <= set(data.column_names)
    by_name = meta.set_index("trial", drop=False).loc[data["trial"]].reset_index(drop=True)  # the rows in the order HF read them
    loaded = data.to_pandas().drop(columns=["image"])
    assert loaded.columns.tolist() == [c for c in meta.columns if c != "file_name"]
    pd.testing.assert_frame_equal(loaded, by_name.drop(columns=["file_name"]), check_dtype=False)
    # the label is the rendered truth's, never the target's answer: every row is a failure, so they differ
    truth = by_name["truth.gender_presentation"].to_numpy()
    assert (by_name["label"] == np.where(truth >= 0.5, "feminine", "masculine")).all()
    assert (by_name["label"] != by_name["prediction"]).all()
    # the pixels are the campaign's
    store = Store(gender_campaign)
    digest = trials.set_index(trials["step"].astype(str) + "-" + trials["idx"].astype(str)).loc[by_name["trial"][0], "image"]
    assert np.array_equal(np.asarray(data[0]["image"].convert("RGB")), store.load_image(digest))
    store.close()


def test_imagefolder_is_readable_by_folder_too(gender_campaign, tmp_path):
    export(gender_campaign, tmp_path / "hard", selection="all", limit=60)
    train = tmp_path / "hard" / "train"
    meta = pd.read_csv(train / "metadata.csv")
    folders = {p.parent.name for p in train.glob("*/*.png")}
    assert folders == set(meta["label"]) == {"masculine", "feminine"}
    for name, label in zip(meta["file_name"], meta["label"]):
        assert name.split("/")[0] == label and (train / name).is_file()
    tv = pytest.importorskip("torchvision", reason="torchvision has no CPU build here; the folder layout is checked above")
    assert len(tv.datasets.ImageFolder(str(train))) == len(meta)


def test_parquet_holds_the_same_rows_with_the_png_bytes(gender_campaign, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    folder = export(gender_campaign, tmp_path / "a", selection="all", limit=50)
    export(gender_campaign, tmp_path / "b", fmt="parquet", selection="all", limit=50)
    table = pq.read_table(tmp_path / "b" / "train.parquet").to_pandas()
    assert table.drop(columns=["image"]).equals(folder.metadata)
    first = _pixels(table["image"][0]["bytes"])
    assert np.array_equal(first, np.asarray(Image.open(tmp_path / "a" / "train" / folder.metadata["file_name"][0]).convert("RGB")))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    data = datasets.load_dataset("parquet", data_dir=str(tmp_path / "b"), cache_dir=str(tmp_path / "cache"))["train"]
    assert data.features["image"].__class__.__name__ == "Image" and data[0]["image"].size == (64, 64)


def test_coco_boxes_are_the_rendered_faces_and_load_with_pycocotools(haar_campaign, tmp_path):
    coco_api = pytest.importorskip("pycocotools.coco")
    result = export(haar_campaign, tmp_path / "coco", fmt="coco", selection="all")
    coco = coco_api.COCO(str(tmp_path / "coco" / "annotations" / "instances_train.json"))
    assert len(coco.getImgIds()) == len(result.metadata) == len(coco.getAnnIds())
    for image_id in coco.getImgIds()[:10]:
        info = coco.loadImgs(image_id)[0]
        (ann,) = coco.loadAnns(coco.getAnnIds(imgIds=image_id))
        row = info["searcher"]
        x, y, w, h = ann["bbox"]
        assert x == pytest.approx(max(0.0, row["truth.face_x0"])) and x + w == pytest.approx(min(96.0, row["truth.face_x1"]))
        assert (tmp_path / "coco" / "train" / info["file_name"]).is_file() and (info["width"], info["height"]) == (96, 96)
    assert coco.loadCats(1)[0]["name"] == "face"
    assert sum(not r["searcher"]["failure"] for r in coco.dataset["images"]) > 0  # found faces are labelled too with --select all


def test_near_boundary_and_spread_choose_what_they_say(gender_campaign, tmp_path):
    near = export(gender_campaign, tmp_path / "near", selection="near-boundary", band=0.15).metadata
    p_right = np.where(near["prediction"] == near["label"], near["score"], 1 - near["score"])
    assert len(near) and (np.abs(p_right - 0.5) <= 0.15 + 1e-12).all()
    first = export(gender_campaign, tmp_path / "first", limit=12).metadata
    spread = export(gender_campaign, tmp_path / "spread", limit=12, spread=True).metadata
    every = export(gender_campaign, tmp_path / "every").metadata
    assert list(first["trial"]) == list(every["trial"][:12])
    assert spread["mode"].nunique() == min(12, every["mode"].nunique()) >= first["mode"].nunique()


def test_quotas_fill_every_group_before_any_twice():
    assert list(quotas(np.array([10, 1, 3]), 6)) == [3, 1, 2]
    assert list(quotas(np.array([10, 1, 3]), 2)) == [1, 0, 1]  # the largest groups first
    assert list(quotas(np.array([2, 2]), 9)) == [2, 2]


def test_weights_give_each_failure_mode_the_same_total():
    w = weights(pd.DataFrame({"mode": [0, 0, 0, 1, -1]}))
    assert w[:3].sum() == pytest.approx(w[3]) and w[:4].mean() == pytest.approx(1.0) and w[4] == 1.0


def test_random_control_is_matched_labelled_and_seeded(gender_campaign, tmp_path):
    a = export(gender_campaign, tmp_path / "a", limit=30, control="random", seed=3)
    b = export(gender_campaign, tmp_path / "b", limit=30, control="random", seed=3)
    control = a.control
    assert a.control_out == tmp_path / "a-control" and len(control) == len(a.metadata) == 30
    assert (control["source"] == "control").all() and (control["strategy"] == "random").all()
    truth = control["truth.gender_presentation"]
    assert (np.abs(truth - 0.5) >= 0.1).all()  # ambiguous draws are left out, as the campaign's judge does
    assert (control["label"] == np.where(truth >= 0.5, "feminine", "masculine")).all()
    assert control.equals(b.control)
    assert control["failure"].mean() < a.metadata["failure"].mean()  # random images fail less than the failures do
    assert (tmp_path / "a-control" / "README.md").read_text().partition("\n---\n")[2].startswith("# Random control")  # after the card


def test_readme_says_where_it_came_from(gender_campaign, tmp_path):
    export(gender_campaign, tmp_path / "hard", limit=5)
    text = (tmp_path / "hard" / "README.md").read_text()
    assert "gender-cnn" in text and 'load_dataset("hard")' in text and "commit" in text and '"max": 5' in text


def test_a_transect_run_exports_the_images_its_target_saw(tmp_path):
    searcher.run_transects("gender-cnn", attributes=["hair_length"], size="3", n=3, fit_samples=100, resolution=64, out=tmp_path / "t")
    result = export(tmp_path / "t", tmp_path / "hard", selection="all")
    meta = result.metadata
    images = np.stack([np.asarray(Image.open(tmp_path / "hard" / "train" / f).convert("RGB")) for f in meta["file_name"]])
    assert list(targets.load("gender-cnn").predict(images).label) == list(meta["prediction"])
    assert (meta["source"] == "transect").all()


def test_a_comparison_exports_every_campaign(tmp_path):
    searcher.compare(tmp_path / "cmp", generator="planted", target="planted", strategies=("random", "sobol"), seeds=(0,),
                     budget=40, batch=8, progress=False)
    meta = export(tmp_path / "cmp", tmp_path / "hard", selection="all").metadata
    assert set(meta["campaign"]) == {"random-s0", "sobol-s0"} and set(meta["strategy"]) == {"random", "sobol"}
    table = pd.read_csv(tmp_path / "cmp" / "compare.csv")
    assert (meta["label"] == "face").all() and meta["failure"].sum() == table["failures"].sum() and len(meta) == 80


def test_bad_input_is_refused_and_nothing_is_written(gender_campaign, tmp_path, capsys):
    out = tmp_path / "hard"
    export(gender_campaign, out, limit=3)
    before = sorted(p.name for p in (out / "train").rglob("*"))
    with pytest.raises(ParameterError, match="already exists and is not empty.*--overwrite"):
        export(gender_campaign, out, limit=5)
    assert sorted(p.name for p in (out / "train").rglob("*")) == before
    assert len(export(gender_campaign, out, limit=5, overwrite=True).metadata) == 5
    assert len(pd.read_csv(out / "train" / "metadata.csv")) == 5
    for kwargs, message in (({"fmt": "yaml"}, "imagefolder', 'parquet', 'coco'"), ({"selection": "worst"}, "'failures', 'all', 'near-boundary'"),
                            ({"control": "sobol"}, "'random'"), ({"fmt": "coco"}, "needs a detect target"), ({"limit": 0}, r"--max|'limit' argument")):
        with pytest.raises(ParameterError, match=message):
            export(gender_campaign, tmp_path / "bad", **kwargs)
        assert not (tmp_path / "bad").exists()
    with pytest.raises(ParameterError, match="Nothing to export at"):
        export(tmp_path, tmp_path / "bad")
    assert main(["export", str(gender_campaign), "--out", str(tmp_path / "bad"), "--format", "yaml"]) == 2
    assert "--format must be one of" in capsys.readouterr().err


def test_a_campaign_without_failures_says_what_to_do(tmp_path):
    Campaign(generator="planted", target="planted", strategy="random", budget=8, batch=8, out=str(tmp_path / "c"),
             generator_options={"volume": 1e-9}, target_options={"volume": 1e-9}).run(progress=False)
    with pytest.raises(ParameterError, match="no failures among 8 judged.*--select all"):
        export(tmp_path / "c", tmp_path / "hard")
    assert len(export(tmp_path / "c", tmp_path / "hard", selection="all").metadata) == 8


def test_a_killed_export_leaves_no_partial_directory(gender_campaign, tmp_path):
    script = f"""
import os, signal
from pathlib import Path
written = []
real = Path.write_bytes
def write_bytes(self, data):
    written.append(self)
    if len(written) == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self, data)
Path.write_bytes = write_bytes
from searcher.export import export
export({str(gender_campaign)!r}, {str(tmp_path / 'hard')!r})
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert proc.returncode == -9
    assert not (tmp_path / "hard").exists()
    assert [p.name.split("-")[0] for p in tmp_path.iterdir()] == [".hard.partial"]  # hidden, and swept by the next export
    export(gender_campaign, tmp_path / "hard", limit=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard"]


def test_cli_export_and_python_call(gender_campaign, tmp_path, capsys):
    assert main(["export", str(gender_campaign), "--out", str(tmp_path / "cli"), "--max", "7", "--spread", "--format", "parquet"]) == 0
    assert "exported 7 images" in capsys.readouterr().out
    assert len(searcher.export(gender_campaign, tmp_path / "py", limit=7, spread=True).metadata) == 7
    assert sorted(os.listdir(tmp_path / "cli")) == [".searcher-export", "README.md", "train.parquet"]  # the marker lets --overwrite replace it
    help_text = subprocess.run([sys.executable, "-m", "searcher.cli", "export", "--help"], capture_output=True, text=True).stdout
    from searcher.export import CONTROLS, FORMATS, SELECTIONS
    assert all(name in help_text for name in (*FORMATS, *SELECTIONS, *CONTROLS))
    assert Path(tmp_path / "py" / "train" / "metadata.csv").is_file()
