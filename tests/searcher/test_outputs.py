"""`searcher.outputs`: the one rule every command applies to a path before writing it, and the
commands that write a single file or directory refusing a path of the wrong kind with one line."""

from __future__ import annotations

import os
import stat

import pytest

from searcher.campaign.store import Store
from searcher.cli import main
from searcher.errors import ParameterError
from searcher.outputs import STORE_FILE, check_output_dir, check_output_file, leave_marker


def test_the_store_file_is_the_one_a_campaign_writes(tmp_path):
    store = Store(tmp_path / "c")
    try:
        assert store.path.name == STORE_FILE
    finally:
        store.close()


def test_a_file_output_is_new_or_a_regular_file(tmp_path):
    assert check_output_file(tmp_path / "new" / "report.html") == tmp_path / "new" / "report.html"
    (tmp_path / "old.html").write_text("old")
    assert check_output_file(tmp_path / "old.html") == tmp_path / "old.html"
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link").symlink_to("old.html")
    (tmp_path / "dangling").symlink_to("nowhere")
    for name, what in (("pipe", "a FIFO"), ("link", "a symbolic link (to old.html)"), ("dangling", "a symbolic link (to nowhere)"),
                       (".", "a directory")):
        with pytest.raises(ParameterError, match=f"--out {tmp_path / name} is {what}".replace("(", r"\(").replace(")", r"\)")):
            check_output_file(tmp_path / name)
    with pytest.raises(ParameterError, match="--truth /dev/null is a character device"):
        check_output_file("/dev/null", flag="--truth")
    with pytest.raises(ParameterError, match=r"cannot be created: .*old.html is a file, not a directory"):
        check_output_file(tmp_path / "old.html" / "report.html")
    (tmp_path / STORE_FILE).write_text("")
    with pytest.raises(ParameterError, match="is a campaign's store; it is never replaced"):
        check_output_file(tmp_path / STORE_FILE)


def test_a_directory_written_into_is_new_or_a_directory(tmp_path):
    assert check_output_dir(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert check_output_dir(tmp_path) == tmp_path
    (tmp_path / "file").write_text("x")
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link").symlink_to(tmp_path)
    for name, what in (("file", "a regular file, not a directory"), ("pipe", "a FIFO"), ("link", "a symbolic link")):
        with pytest.raises(ParameterError, match=f"is {what}"):
            check_output_dir(tmp_path / name, command="searcher compare")
    assert (tmp_path / "file").read_text() == "x" and stat.S_ISFIFO(os.lstat(tmp_path / "pipe").st_mode)


def test_a_replaced_directory_must_be_new_empty_or_marked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kw = {"replace": True, "marker": ".mine", "command": "searcher export"}
    (tmp_path / "empty").mkdir()
    assert check_output_dir("empty", **kw) == tmp_path / "empty"
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "data").write_text("x")
    with pytest.raises(ParameterError, match="already exists and is not empty.*--overwrite"):
        check_output_dir("full", **kw)
    with pytest.raises(ParameterError, match="not written by searcher export"):
        check_output_dir("full", overwrite=True, **kw)
    leave_marker(tmp_path / "full", ".mine", "searcher export")
    assert check_output_dir("full", overwrite=True, **kw) == tmp_path / "full"
    (tmp_path / "full" / "c").mkdir()
    (tmp_path / "full" / "c" / STORE_FILE).write_text("")
    with pytest.raises(ParameterError, match="holds a campaign"):
        check_output_dir("full", overwrite=True, **kw)
    with pytest.raises(ParameterError, match="the source searcher export reads"):
        check_output_dir("empty", sources=["empty"], **kw)
    with pytest.raises(ParameterError, match="an ancestor of full/c/x"):
        check_output_dir("full", overwrite=True, sources=["full/c/x"], **kw)


def test_root_home_and_the_working_directory_are_never_replaced(tmp_path, monkeypatch):
    home = tmp_path / "home" / "me"
    (home / "work").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home / "work")
    kw = {"replace": True, "overwrite": True, "marker": ".mine"}
    for out, what in ((home / "work", "the working directory"), (home, "an ancestor of the working directory"),
                      ("", "must name a file or directory"), ("/", "an ancestor of the working directory")):
        with pytest.raises(ParameterError, match=what):
            check_output_dir(out, **kw)
    monkeypatch.chdir(tmp_path)
    for out, what in ((home, "the home directory"), (tmp_path / "home", "the home directory or an ancestor of it")):
        with pytest.raises(ParameterError, match=what):
            check_output_dir(out, **kw)


@pytest.mark.parametrize(("argv", "out", "what"), [
    (["render", "-n", "1", "--out", "{link}"], "{link}", "a symbolic link"),
    (["render", "-n", "1", "--out", "{dir}"], "{dir}", "a directory"),
    (["render", "-n", "1", "--truth", "{link}"], "{link}", "a symbolic link"),
    (["gallery", "{dir}", "--out", "{link}"], "{link}", "a symbolic link"),
    (["compare", "--strategies", "random", "--seeds", "1", "--budget", "8", "--out", "{fifo}"], "{fifo}", "a FIFO"),
    (["compare", "--strategies", "random", "--seeds", "1", "--budget", "8", "--out", "{file}"], "{file}", "a regular file, not a directory"),
    (["hunt", "--generator", "planted", "--target", "planted", "--budget", "8", "--out", "{fifo}"], "{fifo}", "a FIFO"),
    (["transect", "--target", "gender-cnn", "--out", "{file}"], "{file}", "a regular file"),
    (["analyze", "{dir}", "--out", "{fifo}"], "{fifo}", "a FIFO"),
    (["verify", "--out", "/dev/null"], "/dev/null", "a character device"),
], ids=lambda v: v[0] if isinstance(v, list) else None)
def test_commands_refuse_an_output_of_the_wrong_kind(argv, out, what, tmp_path, capsys):
    paths = {"link": tmp_path / "link", "dir": tmp_path / "dir", "fifo": tmp_path / "fifo", "file": tmp_path / "file"}
    paths["dir"].mkdir()
    paths["file"].write_text("kept")
    paths["link"].symlink_to("file")
    os.mkfifo(paths["fifo"])
    if "/dev/null" in argv and not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null here")
    before = sorted((p.name, stat.S_IFMT(os.lstat(p).st_mode)) for p in tmp_path.iterdir())
    assert main([a.format(**paths) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"searcher: error: {'--truth' if '--truth' in argv else '--out'} {out.format(**paths)} is {what}"), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert sorted((p.name, stat.S_IFMT(os.lstat(p).st_mode)) for p in tmp_path.iterdir()) == before
    assert paths["file"].read_text() == "kept" and list(paths["dir"].iterdir()) == []
