"""`searcher report --out PATH` writes a new file or replaces a regular one, and nothing else (issue 73,
defect 2): a FIFO, a symbolic link, a character device and a directory are refused before the page
is built, with one line and exit 2, and are left as they were."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import searcher.report
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.report import report


@pytest.fixture
def planted(stored_campaign) -> Path:
    """A 16-evaluation planted campaign (about a second)."""
    return stored_campaign("bo", generator="planted", target="planted", strategy="random", budget=16, batch=8)


@pytest.fixture
def no_write(monkeypatch):
    """Fails the test if the report would be written at all (it must be refused before)."""
    def write(text, path):
        raise AssertionError(f"the report was about to be written to {path}")

    monkeypatch.setattr(searcher.report, "write", write)


def refused(capsys, out: str, what: str) -> None:
    err = capsys.readouterr().err
    assert err.startswith(f"searcher: error: --out {out} is {what}") and err.count("\n") == 1 and "Traceback" not in err, err


def test_a_fifo_is_refused_and_stays_a_fifo(planted, tmp_path, no_write, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert main(["report", str(planted), "--out", str(fifo), "--boot", "0"]) == 2
    refused(capsys, str(fifo), "a FIFO (named pipe)")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_symlink_is_refused_and_neither_it_nor_its_target_changes(planted, tmp_path, no_write, capsys):
    (tmp_path / "kept.html").write_text("an old page")
    link = tmp_path / "report.html"
    link.symlink_to("kept.html")
    assert main(["report", str(planted), "--out", str(link), "--boot", "0"]) == 2
    refused(capsys, str(link), "a symbolic link (to kept.html)")
    assert link.is_symlink() and os.readlink(link) == "kept.html" and (tmp_path / "kept.html").read_text() == "an old page"


def test_a_character_device_is_refused_before_anything_touches_it(planted, no_write, capsys):
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null here")
    before = os.lstat("/dev/null")
    assert main(["report", str(planted), "--out", "/dev/null", "--boot", "0"]) == 2
    refused(capsys, "/dev/null", "a character device")
    after = os.lstat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_a_directory_is_refused_as_a_file_output(planted, tmp_path, no_write, capsys):
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "a.html").write_text("kept")
    assert main(["report", str(planted), "--out", str(tmp_path / "pages"), "--boot", "0"]) == 2
    refused(capsys, str(tmp_path / "pages"), "a directory; a file is written here")
    assert [p.name for p in (tmp_path / "pages").iterdir()] == ["a.html"]
    with pytest.raises(ParameterError, match="is a directory"):
        report(planted, out=tmp_path / "pages", n_boot=0)


def test_a_regular_file_is_replaced_as_before(planted, tmp_path, capsys):
    out = tmp_path / "report.html"
    out.write_text("an old page")
    assert main(["report", str(planted), "--out", str(out), "--boot", "0"]) == 0
    assert capsys.readouterr().out == f"{out.resolve()}\n"
    assert stat.S_ISREG(os.lstat(out).st_mode) and out.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]  # no temporary file left beside it


def test_the_page_writer_checks_too(tmp_path):
    from searcher.report.page import write

    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(ParameterError, match="FIFO"):
        write("<html></html>", tmp_path / "pipe")
    assert stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)
