"""`searcher export --out X --overwrite` replaces only an earlier export (issue 73, defect 1): never
the source, an ancestor holding campaigns, the working directory or an ancestor of it, and never a
link, a FIFO or a device. Each refusal exits 2 with one line and changes nothing."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

import pytest

import searcher
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.export.staging import MARKER


@pytest.fixture
def planted(stored_campaign) -> Path:
    """A 16-evaluation planted campaign (about a second), copied by each test that may lose it."""
    return stored_campaign("bo", generator="planted", target="planted", strategy="random", budget=16, batch=8)


@pytest.fixture
def tree(planted, tmp_path, monkeypatch) -> Path:
    """tmp/work (the working directory) holding runs/bo, runs/other and notes.txt; tmp/archive/bo outside it."""
    for where in ("work/runs/bo", "work/runs/other", "archive/bo"):
        shutil.copytree(planted, tmp_path / where, ignore=shutil.ignore_patterns("campaign.lock"))
    (tmp_path / "work" / "notes.txt").write_text("mine")
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root` (links not followed): its kind, and a file's content hash."""
    seen = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(mode) else None
            seen[str(path.relative_to(root))] = (stat.S_IFMT(mode), digest)
    return seen


def one_line_error(capsys, *words: str) -> str:
    err = capsys.readouterr().err
    assert err.startswith("searcher: error: --out ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert all(w in err for w in words), err
    return err


@pytest.mark.parametrize(("source", "out", "words"), [
    ("runs/bo", "runs/bo", ("the source searcher export reads",)),
    ("runs/bo", "runs", ("an ancestor of runs/bo",)),
    ("runs/bo", ".", ("an ancestor of runs/bo",)),
    ("../archive/bo", ".", ("the working directory",)),
    ("../archive/bo", "../work", ("the working directory",)),
    ("../archive/bo", "..", ("an ancestor of ../archive/bo",)),
    ("../archive/bo", "runs", ("holds a campaign",)),
    ("runs/bo", "runs/other", ("holds a campaign", "runs/other/campaign.sqlite")),
], ids=["source", "ancestor-of-source", "cwd-holding-source", "cwd", "cwd-by-another-name", "ancestor-of-cwd",
        "campaigns-elsewhere", "another-campaign"])
def test_overwrite_never_deletes_a_source_a_campaign_or_the_working_directory(tree, source, out, words, capsys):
    before = snapshot(tree)
    assert main(["export", source, "--out", out, "--overwrite", "--select", "all"]) == 2
    one_line_error(capsys, out, "never", "Nothing was written")
    assert snapshot(tree) == before


def test_the_python_call_refuses_the_same(tree):
    before = snapshot(tree)
    with pytest.raises(ParameterError, match=r"--out runs is an ancestor of runs/bo, the source searcher export reads"):
        searcher.export("runs/bo", "runs", selection="all", overwrite=True)
    with pytest.raises(ParameterError, match=r"--out \. is the working directory"):
        searcher.export(tree / "archive" / "bo", ".", selection="all", overwrite=True)
    assert snapshot(tree) == before


def test_overwrite_replaces_an_earlier_export_and_nothing_else(tree, capsys):
    assert main(["export", "runs/bo", "--out", "hard", "--select", "all", "--max", "3", "--control", "random"]) == 0
    assert (tree / "work" / "hard" / MARKER).is_file() and (tree / "work" / "hard-control" / MARKER).is_file()
    assert main(["export", "runs/bo", "--out", "hard", "--select", "all", "--max", "5", "--control", "random", "--overwrite"]) == 0
    assert "exported 5 images" in capsys.readouterr().out
    assert len(list((tree / "work" / "hard" / "train").rglob("*.png"))) == 5

    mine = tree / "work" / "mine"  # a directory no export wrote: not replaced, even with --overwrite
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    before = snapshot(tree)
    assert main(["export", "runs/bo", "--out", "mine", "--select", "all", "--overwrite"]) == 2
    one_line_error(capsys, "not written by searcher export", MARKER)
    assert snapshot(tree) == before
    (mine / "thesis.tex").unlink()  # an empty directory is as good as a new one
    assert main(["export", "runs/bo", "--out", "mine", "--select", "all"]) == 0


@pytest.mark.parametrize("kind", ["fifo", "symlink", "file", "device"])
def test_an_out_of_the_wrong_kind_is_refused_and_left_as_it_was(tree, kind, capsys):
    assert main(["export", "runs/bo", "--out", "hard", "--select", "all"]) == 0
    capsys.readouterr()
    out = {"fifo": "pipe", "symlink": "link", "file": "notes.txt", "device": "/dev/null"}[kind]
    if kind == "fifo":
        os.mkfifo("pipe")
    elif kind == "symlink":
        os.symlink("hard", "link")  # to an earlier export: --overwrite still does not replace the link
    elif not Path(out).exists():
        pytest.skip(f"no {out} here")
    before = snapshot(tree)
    assert main(["export", "runs/bo", "--out", out, "--select", "all", "--overwrite"]) == 2
    what = {"fifo": "a FIFO", "symlink": "a symbolic link (to hard)", "file": "a regular file, not a directory",
            "device": "a character device"}[kind]
    one_line_error(capsys, f"--out {out} is {what}")
    assert snapshot(tree) == before
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)
