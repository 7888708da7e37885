"""`searcher report` of an export (imagefolder, parquet, coco) and of a retraining directory: the
page holds the numbers of the files `searcher export` and `searcher retrain` wrote, and fetches nothing."""

from __future__ import annotations

import html
import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import searcher
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.report import report
from searcher.report.build import kind_of
from searcher.report.page import data_uri


@pytest.fixture(scope="module")
def exports(stored_campaign, tmp_path_factory):
    """Every judged image of 40 random evaluations of gender-cnn (two labels, failures and successes),
    exported as an ImageFolder with a random control beside it, and as parquet."""
    gender = stored_campaign("gender-40", generator="faces", target="gender-cnn", strategy="random", budget=40, batch=20, seed=0,
                             generator_options={"resolution": 64})
    out = tmp_path_factory.mktemp("exports")
    searcher.export(gender, out / "hard", selection="all", control="random")
    searcher.export(gender, out / "hard-pq", fmt="parquet", selection="all")
    return out


def _counts(page_text: str, meta: pd.DataFrame, column: str) -> None:
    """Each value of `column` is a row of the page: its images and failures as metadata counts them."""
    for value, grp in meta.groupby(column):
        assert f"<tr><td>{value}</td><td>{len(grp)}</td><td>{int(grp['failure'].sum())}</td>" in page_text, (column, value)


def test_an_imagefolder_export_report_counts_what_metadata_csv_holds(exports, read_report, tmp_path):
    page = read_report(report(exports / "hard", out=tmp_path / "hard.html"))
    page.assert_self_contained()
    meta = pd.read_csv(exports / "hard" / "train" / "metadata.csv")
    control = pd.read_csv(exports / "hard-control" / "train" / "metadata.csv")
    assert {"summary", "contents", "gallery-exported", "readme"} <= page.ids
    text = page.text
    _counts(text, meta, "label")
    _counts(text, meta, "source")
    _counts(text, meta[meta["mode"] >= 0], "mode")
    assert f"{len(meta)} images written by <code>searcher export</code> as imagefolder" in text
    assert f"{int(meta['failure'].sum())} of them are failures of the target, from {meta.loc[meta['mode'] >= 0, 'mode'].nunique()} failure modes" in text
    # the control beside it is named and counted
    assert f"A random control of {len(control)} images ({int(control['failure'].sum())} failures)" in text
    assert "The random control beside it (hard-control), per label" in text
    for label, n in control["label"].value_counts().items():
        assert f"<td>{label}</td><td>{n}</td>" in text
    # every exported image is in the gallery, with its metadata columns
    gallery = page.gallery("exported")
    shown = pd.DataFrame(gallery["rows"], columns=gallery["columns"])
    assert len(shown) == len(meta) == len(page.find("figure", class_="item"))
    assert {"label", "weight", "prediction", "mode", "source", "age", "eyewear", "fitzpatrick"} <= set(shown.columns)
    assert "file_name" not in shown.columns
    assert shown["label"].tolist() == meta["label"].tolist() and shown["eyewear"].tolist() == meta["param.eyewear"].tolist()
    assert np.allclose(shown["weight"], meta["weight"], rtol=1e-3)
    # the README, word for word
    assert (exports / "hard" / "README.md").read_text() in html.unescape(text)


def test_a_parquet_export_shows_the_same_images_and_the_gallery_keeps_to_its_limit(exports, read_report, tmp_path):
    page = read_report(report(exports / "hard-pq", out=tmp_path / "pq.html"))
    page.assert_self_contained()
    meta = pq.read_table(exports / "hard-pq" / "train.parquet").drop_columns(["image"]).to_pandas()
    _counts(page.text, meta, "label")
    assert "as parquet (<code>train.parquet</code>)" in page.text and "No random control is beside it." in page.text
    thumbs = [a["src"] for a in page.find("img")]
    folder = read_report(report(exports / "hard", out=tmp_path / "hard.html"))
    assert len(thumbs) == len(meta) and thumbs == [a["src"] for a in folder.find("img")]  # the same PNGs, from the image struct

    small = read_report(report(exports / "hard-pq", out=tmp_path / "small.html", limit=5))
    assert len(small.gallery("exported")["rows"]) == 5 == len(small.find("figure", class_="item"))
    assert f"The first 5 of {len(meta)} shown, in the export&#39;s order." in small.text
    _counts(small.text, meta, "label")  # the counts are of the whole export


def test_a_coco_export_is_counted_and_shown(campaign, read_report, tmp_path):
    searcher.export(campaign, tmp_path / "boxes", fmt="coco", selection="all")
    page = read_report(report(tmp_path / "boxes"))
    page.assert_self_contained()
    images = json.loads((tmp_path / "boxes" / "annotations" / "instances_train.json").read_text())["images"]
    meta = pd.DataFrame([entry["searcher"] for entry in images])
    _counts(page.text, meta, "label")
    assert len(page.gallery("exported")["rows"]) == len(images)


def test_a_retraining_report_states_summary_md_and_the_files_numbers(retrained, read_report):
    page = read_report(report(retrained))
    page.assert_self_contained()
    assert {"summary", "scores", "groups"} <= page.ids
    text, shown = page.text, html.unescape(page.text)
    # summary.md's own lines: each arm's score, the gains over the base and the share of the gap closed
    summary = (retrained / "summary.md").read_text().split("\n\n")[1].splitlines()
    assert summary[0].startswith("retraining, 2 seeds, 20 images added per arm") and "\n".join(summary[1:]) in shown
    scores = pd.read_csv(retrained / "scores.csv")
    for test, s in scores.groupby("test"):
        wide = s.pivot(index="seed", columns="arm", values="balanced_accuracy")
        gain = {arm: (wide[arm] - wide["base"]).mean() for arm in ("hard", "spread", "random", "balanced")}
        assert (f"On the {test} test set, balanced accuracy gained over the base (mean of the per-seed gains): hard {gain['hard']:+.1%}, "
                f"spread {gain['spread']:+.1%}, random {gain['random']:+.1%}, balanced {gain['balanced']:+.1%}.") in shown
        assert f"Share of the gap to balanced closed: hard {gain['hard'] / gain['balanced']:.0%}" in shown
    assert "hard, random, spread each add 20 images to the base's 100" in shown
    # the scores table: mean ± sd over seeds per arm and test set
    for (arm, test), s in scores.groupby(["arm", "test"]):
        cells = (f"<td>{arm}</td><td>{test}</td><td>{s['balanced_accuracy'].mean():.1%} ± {s['balanced_accuracy'].std():.1%}</td>"
                 f"<td>{s['accuracy'].mean():.1%} ± {s['accuracy'].std():.1%}</td><td>2</td><td>{s['train_size'].iloc[0]}</td>")
        assert cells in text
    # groups.csv with its Wilson intervals, and the figure inline
    groups = pd.read_csv(retrained / "groups.csv")
    assert len(groups) == 20
    for r in groups.itertuples():
        assert f"<td>{r.group}</td><td>{r.arm}</td><td>{r.errors}/{r.n}</td><td>{r.error:.1%}</td><td>[{r.ci_low:.1%}, {r.ci_high:.1%}]</td>" in text
    assert data_uri((retrained / "retraining.png").read_bytes(), "image/png") in text


def test_the_command_reports_both_kinds_and_names_them_when_refusing(exports, retrained, tmp_path, capsys):
    for directory in (exports / "hard", retrained):
        assert main(["report", str(directory)]) == 0
        assert capsys.readouterr().out == f"{(directory / 'report.html').resolve()}\n"
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert ("an export (train/metadata.csv or train.parquet or annotations/instances_train.json, from `searcher export`) "
            "or a retraining (scores.csv, from `searcher retrain`).") in err


def test_a_campaign_stays_a_campaign_and_a_foreign_scores_csv_is_refused(tmp_path):
    (tmp_path / "campaign.sqlite").touch()  # the kind is told by the files there, first match first
    (tmp_path / "scores.csv").write_text("model,score\na,1\n")
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "metadata.csv").touch()
    assert kind_of(tmp_path) == "campaign"
    (tmp_path / "campaign.sqlite").unlink()
    assert kind_of(tmp_path) == "export"
    (tmp_path / "train" / "metadata.csv").unlink()
    assert kind_of(tmp_path) == "retraining"
    with pytest.raises(ParameterError, match=r"scores.csv lacks the columns arm, seed, test, .*expected the scores.csv `searcher retrain` writes"):
        report(tmp_path)
