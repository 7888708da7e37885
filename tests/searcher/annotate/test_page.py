"""The rating page through starlette's test client: ratings logged once each, several annotators,
resuming, refusals (off-scale ratings, images outside the directory's table), the log's lock, and
a transect run's images rendered again."""

from __future__ import annotations

import io
import json
import re
import shutil
import socket
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from starlette.testclient import TestClient

import generators
from searcher.analysis.annotations import read_annotations
from searcher.annotate import app, serve
from searcher.annotate.images import read_images
from searcher.annotate.server import MAX_BODY
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.studies.transects import run_transects

CAMPAIGN = {"generator": "faces", "target": "haar-face", "budget": 12, "batch": 4, "generator_options": {"resolution": 64}}


@pytest.fixture
def run_dir(stored_campaign, tmp_path):
    """A copy of a small finished campaign, to rate (the stored one is shared and never written)."""
    return shutil.copytree(stored_campaign("annotate", **CAMPAIGN), tmp_path / "run")


def client(directory, annotator, attributes="skin_tone,gender_presentation"):
    return TestClient(app(directory, attributes, annotator), base_url="http://127.0.0.1:8765")


def state(c):
    """The state the page starts from, as embedded in it."""
    return json.loads(re.search(r'<script type="application/json" id="state"[^>]*>(.*?)</script>', c.get("/").text, re.S).group(1))


def test_two_annotators_rate_and_every_rating_lands_once(run_dir):
    alice, bob = client(run_dir, "alice"), client(run_dir, "bob")
    keys = read_images(run_dir).keys
    posts = [(alice, 0, "skin_tone", 2), (bob, 0, "skin_tone", 3), (alice, 1, "skin_tone", 5), (bob, 1, "gender_presentation", 1),
             (alice, 0, "skin_tone", 1)]  # alice corrects herself: the last answer counts
    for c, image, attribute, value in posts:
        assert c.post("/rate", json={"image": image, "attribute": attribute, "value": value}).json() == {"ok": True}
    assert bob.post("/mark", json={"image": 2, "marked": True}).status_code == 200

    lines = (run_dir / "annotations.csv").read_text().splitlines()
    assert lines[0] == "image,attribute,annotator,value" and len(lines) == 1 + len(posts) + 1
    table = read_annotations(run_dir / "annotations.csv")
    got = {(i, a, n): v for i, a, n, v in table.itertuples(index=False)}
    assert got == {(keys[0], "skin_tone", "alice"): 1, (keys[0], "skin_tone", "bob"): 3, (keys[1], "skin_tone", "alice"): 5,
                   (keys[1], "gender_presentation", "bob"): 1, (keys[2], "fakeness", "bob"): 5}
    assert keys[0] == pd.read_csv(run_dir / "annotations.csv")["image"].iloc[0]  # a campaign image's key is its content hash
    assert len(set(keys)) == len(keys) and (run_dir / "images" / keys[0][:2] / f"{keys[0]}.png").is_file()


def test_the_page_resumes_at_the_annotators_first_unrated_image_and_attribute(run_dir):
    alice = client(run_dir, "alice")
    first = state(alice)
    n = first["images"]
    assert first["position"] == 0 and first["questions"][0]["attribute"] == "skin_tone" and first["marked"] == [False] * n
    assert [lv["label"] for lv in first["questions"][0]["levels"]] == ["light", "fair", "medium", "olive", "brown", "black"]
    for image in (0, 1, 2, 4):
        alice.post("/rate", json={"image": image, "attribute": "skin_tone", "value": 3})
    alice.post("/mark", json={"image": 0, "marked": True})
    client(run_dir, "bob").post("/rate", json={"image": 3, "attribute": "skin_tone", "value": 2})  # bob's answers are his own

    again = state(client(run_dir, "alice"))  # a restarted server reads where she stopped from the file
    assert again["position"] == 3 and again["answers"]["skin_tone"][:5] == [3, 3, 3, 0, 3] and again["marked"][:2] == [True, False]
    for image in range(n):
        alice.post("/rate", json={"image": image, "attribute": "skin_tone", "value": 4})
    assert state(alice)["position"] == n  # the first image of the second attribute
    alice.post("/mark", json={"image": 0, "marked": False})
    assert state(alice)["marked"][0] is False


def test_a_rating_off_the_scale_is_refused_with_the_value_and_the_levels(run_dir):
    alice = client(run_dir, "alice")
    cases = [({"image": 0, "attribute": "skin_tone", "value": 7}, r"The 'skin_tone' rating must be an integer in \[1, 6\]. Got 7 instead"),
             ({"image": 0, "attribute": "gender_presentation", "value": 0}, r"must be an integer in \[1, 5\]. Got 0 instead"),
             ({"image": 0, "attribute": "skin_tone", "value": "3"}, r"Got '3' instead"),
             ({"image": 0, "attribute": "skin_tone", "value": 2.5}, r"Got 2.5 instead"),
             ({"image": 0, "attribute": "age", "value": 2}, r"This page rates skin_tone, gender_presentation. Got the attribute 'age'")]
    for body, message in cases:
        r = alice.post("/rate", json=body)
        assert r.status_code == 400 and re.search(message, r.json()["error"]), (body, r.text)
    r = alice.post("/mark", json={"image": 0, "marked": "yes"})
    assert r.status_code == 400 and "'marked' must be true or false. Got 'yes'" in r.json()["error"]
    assert alice.post("/rate", content='{"image": 0, "attribute": "skin_tone", "value": 2}', headers={"content-type": "text/plain"}).status_code == 415
    assert alice.post("/rate", content="{not json", headers={"content-type": "application/json"}).status_code == 400
    huge = alice.post("/rate", content=b" " * (MAX_BODY + 1) + b"{}", headers={"content-type": "application/json"})
    assert huge.status_code == 413 and f"longer than {MAX_BODY} bytes" in huge.json()["error"]  # never read whole
    assert not (run_dir / "annotations.csv").exists()


def test_only_the_directorys_own_images_are_served(run_dir):
    alice = client(run_dir, "alice")
    images = read_images(run_dir)
    r = alice.get("/image/0")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert r.content == (run_dir / "images" / images.keys[0][:2] / f"{images.keys[0]}.png").read_bytes()
    (run_dir / "secret.png").write_bytes(r.content)
    for path in (f"/image/{len(images)}", "/image/-1", "/image/../campaign.sqlite", "/image/..%2Fcampaign.sqlite",
                 "/image/%2e%2e%2fcampaign.sqlite", "/image/0/../../campaign.sqlite", "/campaign.sqlite", "/secret.png",
                 f"/images/{images.keys[0][:2]}/{images.keys[0]}.png", "/image/1e3", "/image/0x1", "/annotations.csv"):
        assert alice.get(path).status_code == 404, path
    r = alice.post("/rate", json={"image": len(images), "attribute": "skin_tone", "value": 1})
    assert r.status_code == 404 and f"images 0 .. {len(images) - 1}" in r.json()["error"]
    assert TestClient(alice.app, base_url="http://evil.example").get("/").status_code == 400  # DNS rebinding: not a loopback Host
    csp = alice.get("/").headers["content-security-policy"]
    assert "default-src 'none'" in csp and "img-src 'self'" in csp and "connect-src 'self'" in csp


def test_bad_names_are_one_line_parameter_errors(run_dir, capsys):
    with pytest.raises(ParameterError, match=r"Unknown attribute\(s\) \['wings'\] in --attributes. Valid attributes: skin_tone, age, "
                                             r".*fakeness"):
        app(run_dir, "skin_tone,wings", "alice")
    with pytest.raises(ParameterError, match=r"'annotator' option must be a name starting with a letter.*Got 'a,b' instead"):
        app(run_dir, "skin_tone", "a,b")
    with pytest.raises(ParameterError, match="--attributes needs at least one attribute"):
        app(run_dir, " , ", "alice")
    with pytest.raises(ParameterError, match=r"--host must be a loopback address .* Got '0.0.0.0'"):
        serve(run_dir, "skin_tone", "alice", host="0.0.0.0")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(ParameterError, match=rf"Cannot listen on 127.0.0.1:{port} .*--port 0 for any free one"):
            serve(run_dir, "skin_tone", "alice", port=port)
    assert main(["annotate", str(run_dir), "--attributes", "skin_tone,shoe_size", "--annotator", "alice"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'shoe_size'" in err and "Valid attributes: skin_tone" in err
    assert main(["annotate", str(run_dir.parent), "--attributes", "skin_tone", "--annotator", "alice"]) == 2
    assert "is neither a campaign directory (campaign.sqlite" in capsys.readouterr().err


def test_concurrent_appends_from_several_processes_never_interleave(tmp_path):
    path = tmp_path / "annotations.csv"
    script = ("import sys; from searcher.annotate.log import RatingLog\n"
              "log = RatingLog(sys.argv[1])\n"
              "for i in range(100): log.append(f'img-{i}', 'skin_tone', sys.argv[2], 1 + i % 6)\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), f"annotator{k}"]) for k in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    lines = path.read_text().splitlines()
    assert lines.count("image,attribute,annotator,value") == 1 and len(lines) == 1 + 300
    table = read_annotations(path)
    assert len(table) == 300 and table.groupby("annotator").size().tolist() == [100, 100, 100]


def test_a_transect_runs_images_are_rendered_again_and_keyed_by_their_row(tmp_path):
    out = tmp_path / "transects"
    run_transects("haar-face", attributes=["hair_length", "gender_presentation"], size=(2, 2), n=1, out=out, fit_samples=20,
                  resolution=64, sheets=0)
    ann = client(out, "ann", "hair_length,fakeness")
    png = ann.get("/image/3").content
    expected = generators.load("faces-latent", resolution=64).from_latent(np.load(out / "latents.npy")[3:4], seed=0, keys=[("transect", 0)])
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(png)).convert("RGB")), expected.images[0])
    assert ann.get("/image/4").status_code == 404
    ann.post("/rate", json={"image": 3, "attribute": "hair_length", "value": 5})
    ann.post("/mark", json={"image": 3, "marked": True})
    assert (out / "annotations.csv").read_text().splitlines()[1:] == ["3,hair_length,ann,5", "3,fakeness,ann,5"]
    assert state(ann)["position"] == 0 and state(ann)["answers"] == {"hair_length": [0, 0, 0, 5], "fakeness": [0, 0, 0, 5]}
