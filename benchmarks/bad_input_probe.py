"""The bad-input probe of the reliability issue, rerun: each input a new user typed (or a fault they
met) that once ended in a traceback, a wrong directory or a wasted budget, run through the real
command line in a fresh process. Prints one row per input: exit code, traceback or not, and the
first line the user reads.

    python benchmarks/bad_input_probe.py                 # about 2 minutes on 2 cores
    python benchmarks/bad_input_probe.py --keep probe    # keep the scratch directory

Exit code 1 when any input ends in a traceback or an unexpected exit code (0 where the input is
good, 2 for the project's own one-line error, 130 for Ctrl-C).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from searcher.testing.ports import free_port

FAST = ["--generator-option", "resolution=64", "--no-progress"]
PLANTED = ["--generator", "planted", "--target", "planted", "--budget", "8", "--batch", "4", "--no-progress"]


@dataclass
class Case:
    name: str
    argv: list[str]
    expect: int = 2
    setup: Callable[[Path], None] | None = None
    check: Callable[[Path, str], str | None] | None = None  # returns what went wrong, or None
    signal_after: float | None = None  # send SIGINT after this many seconds (Ctrl-C)
    env: dict[str, str] = field(default_factory=dict)


def _cli(argv: list[str], cwd: Path, env: dict[str, str] | None = None, sigint_after: float | None = None) -> tuple[int, str, str]:
    proc = subprocess.Popen([sys.executable, "-m", "searcher.cli", *argv], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **(env or {})})
    if sigint_after is not None:
        time.sleep(sigint_after)
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err


def _campaign(dir_: Path, *extra: str) -> None:
    code, _, err = _cli(["hunt", *PLANTED, *extra, "--out", dir_.name], dir_.parent)  # stored as typed: relative
    assert code == 0, err


def _moved(root: Path) -> None:
    _campaign(root / "a")
    (root / "moved").mkdir()
    shutil.move(root / "a", root / "moved" / "b")


def _moved_check(root: Path, _: str) -> str | None:
    if (root / "elsewhere" / "a").exists() or (root / "a").exists():
        return "trials went to the old path"
    rows = sqlite3.connect(root / "moved" / "b" / "campaign.sqlite").execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    return None if rows == 16 else f"moved/b holds {rows} trials, expected 16"


def _toml(text: str) -> Callable[[Path], None]:
    return lambda root: (root / "c.toml").write_text(text)


def _garbage_store(root: Path) -> None:
    (root / "g").mkdir()
    (root / "g" / "campaign.sqlite").write_bytes(b"this is not a database" * 100)


def _truncated_store(root: Path) -> None:
    _campaign(root / "t")
    data = (root / "t" / "campaign.sqlite").read_bytes()
    (root / "t" / "campaign.sqlite").write_bytes(data[: len(data) // 3])
    for leftover in ("campaign.sqlite-wal", "campaign.sqlite-shm"):
        (root / "t" / leftover).unlink(missing_ok=True)


def _deleted_image(root: Path) -> None:
    _campaign(root / "d")
    next((root / "d" / "images").rglob("*.png")).unlink()


def _all_errors(root: Path) -> None:
    _cli(["hunt", *PLANTED, "--option", "error_rate=1.0", "--out", str(root / "e")], root)


def _extend_check(root: Path, _: str) -> str | None:
    rows = sqlite3.connect(root / "x" / "campaign.sqlite").execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    return None if rows == 12 else f"{rows} trials after extending to 12"


def _file_as_dir(root: Path) -> None:
    (root / "afile").write_text("x")


CASES = [
    Case("resume a moved campaign from another directory", ["hunt", "--resume", "../moved/b", "--budget", "16", "--no-progress"], 0,
         setup=lambda r: (_moved(r), (r / "elsewhere").mkdir()), check=_moved_check),
    Case("the README's gender hunt", ["hunt", "--target", "gender-cnn", "--vary", "hair_length,skin_tone,gender_presentation,yaw",
                                      "--fix", "identity=7", "--budget", "24", "--strategy", "random", "--out", "g", *FAST], 0),
    Case("gender hunt with the cut's attribute left at the cut", ["hunt", "--target", "gender-cnn", "--vary", "hair_length,skin_tone,yaw",
                                                                  "--fix", "identity=7", "--budget", "40", "--out", "g0", *FAST]),
    Case("render --generator planted -n 4", ["render", "--generator", "planted", "-n", "4", "--out", "p.png"], 0),
    Case("--truth-column nosuch", ["hunt", "--target", "gender-cnn", "--truth-column", "nosuch", "--budget", "8", "--out", "tc", *FAST]),
    Case("--truth-column hair_color (categorical)", ["hunt", "--target", "gender-cnn", "--truth-column", "hair_color", "--budget", "8",
                                                     "--out", "tc2", *FAST]),
    Case("--fix identity=inf", ["hunt", "--fix", "identity=inf", "--target", "haar-face", "--budget", "8", "--out", "fi", *FAST]),
    Case("render --set identity=inf", ["render", "--set", "identity=inf", "-n", "2", "--out", "s.png"]),
    Case("render --seed -1", ["render", "--seed", "-1", "-n", "2", "--out", "s.png"]),
    Case("compare --seeds 0", ["compare", "--seeds", "0", "--out", "cmp0"]),
    Case("compare --strategies random,nope (refused before any campaign)", ["compare", "--strategies", "random,nope", "--out", "cmpn"],
         check=lambda r, _: "a campaign ran first" if (r / "cmpn" / "runs").exists() else None),
    Case("serve-target --port 70000", ["serve-target", "haar-face", "--port", "70000"]),
    Case("serve-target --host 0.0.0.0 without a token", ["serve-target", "haar-face", "--host", "0.0.0.0"]),
    Case('TOML fix = ["yaw=10"]', ["hunt", "--config", "c.toml", "--out", "t1"], setup=_toml('fix = ["yaw=10"]\n')),
    Case('TOML fix = "yaw=10"', ["hunt", "--config", "c.toml", "--out", "t2"], setup=_toml('fix = "yaw=10"\n')),
    Case('TOML target_options = "x"', ["hunt", "--config", "c.toml", "--out", "t3"], setup=_toml('target_options = "x"\n')),
    Case("--out under /proc", ["hunt", *PLANTED, "--out", "/proc/searcher-probe"]),
    Case("--out inside a file", ["hunt", *PLANTED, "--out", "afile/run"], setup=_file_as_dir),
    Case("garbage campaign.sqlite, resumed", ["hunt", "--resume", "g", "--no-progress"], setup=_garbage_store),
    Case("truncated campaign.sqlite, analysed", ["analyze", "t"], setup=_truncated_store),
    Case("a deleted image, then gallery", ["gallery", "d", "--out", "d.png"], 0, setup=_deleted_image),
    Case("Ctrl-C during a hunt says how to continue", ["hunt", "--target", "dlib-cnn", "--budget", "400", "--out", "ctrl", *FAST], 130,
         signal_after=12, check=lambda r, err: None if "--resume" in err else "no --resume hint"),
    Case("http target where nothing listens", ["hunt", "--target", "http", "--option", "url=http://127.0.0.1:{port}/predict",
                                               "--budget", "40", "--out", "h", *FAST]),
    Case("http target with env:API_KEY unset", ["hunt", "--config", "c.toml", "--out", "h2", *FAST],
         setup=_toml('target = "http"\nbudget = 40\n[target_options]\nurl = "http://127.0.0.1:9/predict"\n'
                     '[target_options.headers]\nAuthorization = "Bearer env:SEARCHER_PROBE_UNSET"\n')),
    Case("--resume DIR --budget N extends the campaign", ["hunt", "--resume", "x", "--budget", "12", "--no-progress"], 0,
         setup=lambda r: _campaign(r / "x"), check=_extend_check),
    Case("--cut on a detect target", ["hunt", *PLANTED, "--cut", "0.5", "--out", "cd"]),
    Case("--cut 5 outside the truth's range", ["hunt", "--target", "gender-cnn", "--cut", "5", "--budget", "8", "--out", "c5", *FAST]),
    Case("gallery --limit 0", ["gallery", "x2", "--limit", "0", "--out", "x2.png"], setup=lambda r: _campaign(r / "x2")),
    Case("analyze an all-error campaign", ["analyze", "e"], setup=_all_errors),
    Case("verify -n 8", ["verify", "-n", "8", "--out", "v8"]),
    Case("--ray-address where no cluster runs", ["hunt", *PLANTED, "--workers", "2", "--ray-address", "127.0.0.1:{port}", "--out", "r"]),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", help="a directory to run in and keep (default: a temporary one, removed)")
    args = parser.parse_args()
    root = Path(args.keep or tempfile.mkdtemp(prefix="probe-")).resolve()
    root.mkdir(parents=True, exist_ok=True)
    bad = 0
    print(f"{'input':<64} {'exit':>4}  {'ok':<3} first line of what the user reads")
    for case in CASES:
        work = root / f"case{CASES.index(case):02d}"
        work.mkdir()
        if case.setup:
            case.setup(work)
        cwd = work / "elsewhere" if (work / "elsewhere").is_dir() else work
        argv = [a.replace("{port}", str(free_port())) for a in case.argv]
        code, out, err = _cli(argv, cwd, case.env, case.signal_after)
        problem = "traceback" if "Traceback" in err else f"exit {code}, expected {case.expect}" if code != case.expect else None
        problem = problem or (case.check(work, err) if case.check else None)
        bad += problem is not None
        said = next((line for line in (err if case.expect else out + err).splitlines() if line.strip()), "")
        print(f"{case.name:<64} {code:>4}  {'yes' if problem is None else 'NO':<3} {problem + ': ' if problem else ''}{said[:160]}")
    print(f"\n{len(CASES) - bad} of {len(CASES)} inputs handled; {bad} not")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
