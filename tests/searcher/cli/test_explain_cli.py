"""`searcher explain RUN`: blocks on stdout, RUN/explain.json in the documented schema, read-only
beside a running campaign, one-line errors."""

import json

import pytest

from searcher.campaign.store import DirectoryLock
from searcher.cli import main

PLANTED = {"dim": 2, "k": 3, "volume": 0.3}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from searcher.campaign import Campaign

    out = tmp_path_factory.mktemp("explain_cli") / "random"
    Campaign(generator="planted", target="planted", strategy="random", budget=600, batch=200, out=str(out),
             generator_options=PLANTED, target_options=PLANTED).run(progress=False)
    return out


def test_explain_json_has_the_schema_and_the_blocks_say_the_same(run, capsys):
    def files() -> set[str]:
        return {p.name for p in run.iterdir() if not p.name.startswith("campaign.sqlite-")}  # SQLite's WAL files come and go

    before = files()
    lock = DirectoryLock(run)
    lock.acquire()  # a campaign still searching holds the lock: explain only reads
    try:
        assert main(["explain", str(run), "--min-failures", "12"]) == 0
    finally:
        lock.release()
    assert files() == before | {"explain.json"}  # no temporary file left, nothing else written
    records = json.loads((run / "explain.json").read_text())
    assert records and [r["mode"] for r in records] == sorted(r["mode"] for r in records)
    printed = capsys.readouterr().out
    for r in records:
        assert set(r) == {"mode", "failures", "rule", "caption", "precision", "coverage", "over", "trials"} and r["over"] == "parameters"
        assert r["trials"] == 600  # the evaluations explained, so that a report can tell a stale explain.json
        assert f"mode {r['mode']}: {r['failures']} failures" in printed and r["caption"] in printed
        if r["failures"] < 12:
            assert r["rule"] is None and r["precision"] is None and r["coverage"] is None
            continue
        for name, (low, high) in r["rule"].items():
            assert name in ("x0", "x1") and 0 <= low < high <= 1
        for share in (r["precision"], r["coverage"]):
            assert len(share) == 3 and 0 <= share[1] <= share[0] <= share[2] <= 1
    assert any(r["rule"] for r in records)


def test_json_flag_prints_the_file(run, capsys):
    assert main(["explain", str(run), "--json", "--depth", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((run / "explain.json").read_text())


@pytest.mark.parametrize(("argv", "message"), [
    (["--min-failures", "0"], "--min-failures must be an integer >= 1"),
    (["--depth", "11"], "--depth must be an integer in [1, 10]"),
])
def test_bad_options_get_one_line(run, capsys, argv, message):
    assert main(["explain", str(run), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_directory_without_a_campaign_gets_one_line(tmp_path, capsys):
    assert main(["explain", str(tmp_path)]) == 2
    assert "No campaign at" in capsys.readouterr().err
