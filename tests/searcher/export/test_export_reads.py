"""Issue 70, item 4 and `--balance-labels`: an export is read by training code without fixes.
`label` loads as a `ClassLabel`, a set and its random control concatenate in `datasets`,
`prediction` has one type in every format, a detect target's COCO export carries the detector's
boxes with masks pycocotools draws and ids that merge with its control's, and no export names a
path of the machine it was written on. Each test fails on the export before issue 70."""

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from searcher.campaign import load_campaign
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.export import export
from searcher.export.select import balance_labels

datasets = pytest.importorskip("datasets")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture
def load(tmp_path, monkeypatch):
    """`load(directory)`: `datasets.load_dataset(directory)["train"]`, as the export's README says, offline."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")

    def read(directory: Path):
        return datasets.load_dataset(str(directory), cache_dir=str(tmp_path / "hf-cache"))["train"]

    return read


def find_classes(directory: Path) -> tuple[list[str], dict[str, int]]:
    """torchvision.datasets.folder.find_classes, reproduced (torchvision has no build here): the
    class folders sorted, indexed in that order."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    return classes, {name: i for i, name in enumerate(classes)}


@pytest.mark.parametrize("fmt", ["imagefolder", "parquet"])
def test_label_loads_as_a_class_label_in_the_order_torchvision_gives(gender_campaign, tmp_path, load, fmt):
    result = export(gender_campaign, tmp_path / "hard", fmt=fmt, selection="all", limit=40)
    data = load(tmp_path / "hard")
    label = data.features["label"]
    assert isinstance(label, datasets.ClassLabel) and label.names == ["feminine", "masculine"]
    by_trial = result.metadata.set_index("trial")
    assert [label.int2str(v) for v in data["label"]] == by_trial.loc[data["trial"], "label"].tolist()
    assert isinstance(data.features["image"], datasets.Image) and data[0]["image"].size == (64, 64)
    if fmt == "imagefolder":  # torchvision's ImageFolder: root/<class>/<file>.png, the classes sorted as the ClassLabel's
        train = tmp_path / "hard" / "train"
        classes, index = find_classes(train)
        assert classes == label.names and index == {name: label.str2int(name) for name in label.names}
        assert sorted(str(p.relative_to(train)) for p in train.glob("*/*.png")) == sorted(result.metadata["file_name"])
        assert all(name.split("/")[0] == lab for name, lab in zip(result.metadata["file_name"], result.metadata["label"]))


@pytest.mark.parametrize("fmt", ["imagefolder", "parquet"])
def test_a_set_and_its_control_concatenate_in_datasets(gender_campaign, tmp_path, load, fmt):
    result = export(gender_campaign, tmp_path / "hard", fmt=fmt, limit=25, control="random", seed=1)
    hard, control = load(tmp_path / "hard"), load(tmp_path / "hard-control")
    assert control.column_names == hard.column_names and control.features == hard.features
    both = datasets.concatenate_datasets([hard, control])
    assert len(both) == 50 and both.features["label"].names == ["feminine", "masculine"]
    trials = control["trial"]
    assert all(isinstance(t, str) and t for t in trials) and len(set(trials)) == 25 and not set(trials) & set(hard["trial"])
    assert result.control.columns.tolist() == result.metadata.columns.tolist()


def test_prediction_has_one_type_in_every_format(haar_campaign, tmp_path, load):
    """haar-face answers True or False: every format holds those answers as the same strings."""
    meta = export(haar_campaign, tmp_path / "folder", selection="all").metadata
    export(haar_campaign, tmp_path / "pq", fmt="parquet", selection="all")
    export(haar_campaign, tmp_path / "coco", fmt="coco", selection="all")
    folder, parquet = load(tmp_path / "folder"), load(tmp_path / "pq")
    assert folder.features["prediction"] == parquet.features["prediction"] == datasets.Value("string")
    assert str(pq.read_schema(tmp_path / "pq" / "train.parquet").field("prediction").type) == "string"
    coco = json.loads((tmp_path / "coco" / "annotations" / "instances_train.json").read_text())["images"]
    expected = meta.set_index("trial")["prediction"]
    assert set(expected) == {"True", "False"}
    for trials, predictions in ((folder["trial"], folder["prediction"]), (parquet["trial"], parquet["prediction"]),
                                ([i["searcher"]["trial"] for i in coco], [i["searcher"]["prediction"] for i in coco])):
        assert all(isinstance(p, str) for p in predictions) and list(predictions) == expected.loc[list(trials)].tolist()


def test_coco_carries_the_detectors_boxes_masks_and_ids_that_merge(haar_campaign, tmp_path):
    coco_api = pytest.importorskip("pycocotools.coco")
    export(haar_campaign, tmp_path / "boxes", fmt="coco", selection="all", control="random")
    sets = {}
    for name in ("boxes", "boxes-control"):
        gt = coco_api.COCO(str(tmp_path / name / "annotations" / "instances_train.json"))
        found = gt.loadRes(str(tmp_path / name / "annotations" / "detections_train.json"))
        sets[name] = gt
        for ann in gt.loadAnns(gt.getAnnIds()):
            x, y, w, h = ann["bbox"]
            assert gt.annToMask(ann).sum() == pytest.approx(w * h, abs=2 * (w + h) + 4)  # the box's own pixels
        # the detector's boxes, image by image, as the campaign stored them (x0, y0, x1, y1)
        if name == "boxes":
            trials = load_campaign(haar_campaign).trials
            stored = {f"{s}-{i}": b for s, i, b in zip(trials["step"], trials["idx"], trials["boxes"])}
            for image_id in gt.getImgIds():
                info = gt.loadImgs(image_id)[0]
                boxes = [a["bbox"] for a in found.loadAnns(found.getAnnIds(imgIds=image_id))]
                assert boxes == [[x0, y0, x1 - x0, y1 - y0] for x0, y0, x1, y1 in stored[info["searcher"]["trial"]]]
                assert bool(boxes) == (info["searcher"]["prediction"] == "True")
        assert len(found.getAnnIds()) > 0
    hard, control = sets["boxes"].dataset, sets["boxes-control"].dataset
    assert not {i["id"] for i in hard["images"]} & {i["id"] for i in control["images"]}
    assert not {a["id"] for a in hard["annotations"]} & {a["id"] for a in control["annotations"]}
    merged = {**hard, "images": hard["images"] + control["images"], "annotations": hard["annotations"] + control["annotations"]}
    (tmp_path / "merged.json").write_text(json.dumps(merged))
    both = coco_api.COCO(str(tmp_path / "merged.json"))
    assert len(both.getImgIds()) == len(both.getAnnIds()) == len(hard["images"]) + len(control["images"])


def test_no_export_names_a_path_of_the_machine_it_was_written_on(gender_campaign, haar_campaign, tmp_path):
    exports = tmp_path / "exports"
    export(Path(gender_campaign).resolve(), exports / "folder", limit=5, control="random")
    export(Path(gender_campaign).resolve(), exports / "pq", fmt="parquet", limit=5)
    export(Path(haar_campaign).resolve(), exports / "coco", fmt="coco", limit=5)
    roots = {str(tmp_path), str(Path(gender_campaign).resolve().parent), str(Path(haar_campaign).resolve().parent)}
    texts = [p for p in exports.rglob("*") if p.is_file() and p.suffix in ("", ".md", ".csv", ".json")]
    assert {p.name for p in texts} >= {"README.md", "metadata.csv", "instances_train.json", "detections_train.json"}
    for path in texts:
        text = path.read_text()
        assert not any(root in text for root in roots), path
    readme = (exports / "folder" / "README.md").read_text()
    assert "from `gender`" in readme and '"out": "gender"' in readme


def test_balance_labels_takes_the_nearest_trial_of_the_other_label_for_each_failure():
    """The rule on a made-up source: anchors spread over the modes, each takes its nearest unused candidate."""
    rows = pd.DataFrame({
        "id": list("abcdefgh"), "image": list("abcdefgh"), "true_label": ["m", "m", "m", "f", "f", "f", "f", "m"],
        "loss": 0.1, "error": None, "excluded": None, "failure": [True, True, True, True, False, False, False, False],
        "mode": [0, 0, 1, 2, -1, -1, -1, -1],
        "x": [np.array(v, float) for v in ([0, 0], [0.1, 0], [1, 1], [5, 5], [0.05, 0.1], [0.9, 1], [0.95, 1], [3, 3])],
    })
    chosen = rows[rows["failure"]].assign(weight=1.0)  # 3 m, 1 f: two f missing
    out = balance_labels(chosen, rows)
    assert out["id"].tolist() == ["a", "b", "c", "d", "e", "g"]  # modes 0 and 1 anchor one each: e nearest mode 0, g nearest c
    assert out["true_label"].value_counts().to_dict() == {"m": 3, "f": 3}
    assert out.loc[out["failure"], "weight"].mean() == pytest.approx(1.0) and (out.loc[~out["failure"], "weight"] == 1).all()


def test_balance_labels_balances_a_campaigns_failures_from_its_own_trials(gender_campaign, tmp_path, capsys):
    plain = export(gender_campaign, tmp_path / "plain").metadata
    counts = plain["label"].value_counts()
    assert counts.iloc[0] > counts.iloc[1]  # gender-cnn's failures lean to one label
    result = export(gender_campaign, tmp_path / "bal", balance_labels=True, control="random")
    meta = result.metadata
    assert meta["label"].value_counts().to_dict() == {lab: counts.iloc[0] for lab in counts.index}
    assert meta["trial"].iloc[: len(plain)].tolist() == plain["trial"].tolist()  # every failure kept, first
    added = meta.iloc[len(plain):]
    assert (added["label"] == counts.index[1]).all() and not added["failure"].any() and (added["source"] != "control").all()
    assert set(added["trial"]) <= set(load_campaign(gender_campaign).trials.pipe(lambda t: t["step"].astype(str) + "-" + t["idx"].astype(str)))
    assert len(result.control) == len(meta)
    assert f"added {len(added)} {counts.index[1]}" in result.summary()
    assert f"--balance-labels added {len(added)}" in (tmp_path / "bal" / "README.md").read_text()
    assert '"balance_labels": true' in (tmp_path / "bal" / "README.md").read_text()
    assert main(["export", str(gender_campaign), "--out", str(tmp_path / "cli"), "--max", "10", "--balance-labels"]) == 0
    assert "--balance-labels added" in capsys.readouterr().out
    assert pd.read_csv(tmp_path / "cli" / "train" / "metadata.csv")["label"].value_counts().nunique() == 1


def test_balance_labels_is_refused_for_a_detect_target(haar_campaign, tmp_path):
    with pytest.raises(ParameterError, match="--balance-labels balances a classify target's labels; 'haar-face' is a detect"):
        export(haar_campaign, tmp_path / "bal", selection="all", balance_labels=True)
    assert not (tmp_path / "bal").exists()
