"""The cluster path, tested on a real cluster: a head started with `ray start --head`, a campaign
that joins it by host:port in another process, as a user of a cluster does, and exactly the trials
of a local run. Ray advertises the machine's node IP even when told 127.0.0.1, and its heads ask for
an authentication token; joining by 127.0.0.1:PORT works all the same (the executor presents the
token it finds) and a token it cannot find is a one-line error that says where to put it."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from searcher.campaign import Campaign, load_campaign
from searcher.campaign.executors import _join_failure
from searcher.testing.ports import free_port

RAY = str(Path(sys.executable).with_name("ray"))
SETTINGS = ["--generator", "planted", "--target", "planted", "--strategy", "bo", "--budget", "16", "--batch", "4", "--seed", "1"]


def _processes_under(path: str) -> list[int]:
    """Process ids whose command line names `path` (every process of a head started in it)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and path in (entry / "cmdline").read_bytes().decode(errors="replace"):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


@pytest.fixture(scope="module")
def ray_head():
    """`host:port` of a Ray head of 2 CPUs started for this module in its own temporary directory,
    whose processes (and only those: `ray stop` would stop every Ray of the machine) are killed after."""
    port = free_port()
    temp = f"/tmp/rayhead{port}"  # short: Ray's socket paths live under it
    started = subprocess.run([RAY, "start", "--head", "--port", str(port), "--num-cpus", "2", "--include-dashboard", "false",
                              "--disable-usage-stats", "--temp-dir", temp], capture_output=True, text=True, timeout=180)
    if started.returncode != 0:
        pytest.fail(f"ray start --head failed: {started.stderr[-2000:]}")
    yield f"127.0.0.1:{port}"
    for pid in _processes_under(temp):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _hunt(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "searcher.cli", "hunt", *args, "--no-progress"], capture_output=True, text=True,
                          timeout=300, env=env)


ENV = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}


def test_a_campaign_joins_a_running_head_by_host_and_port(ray_head, tmp_path):
    env = ENV
    joined = _hunt(*SETTINGS, "--workers", "2", "--ray-address", ray_head, "--out", str(tmp_path / "cluster"), env=env)
    assert joined.returncode == 0, joined.stderr[-2000:]
    on_cluster = load_campaign(tmp_path / "cluster").trials
    assert set(on_cluster["worker"]) == {"ray-0", "ray-1"}
    local = Campaign.from_dir(tmp_path / "cluster")
    local = Campaign(**{**local.config(), "workers": 1, "ray_address": None, "out": str(tmp_path / "local")}).run(progress=False).trials
    np.testing.assert_array_equal(np.stack(on_cluster["x"]), np.stack(local["x"]))
    assert on_cluster["loss"].tolist() == local["loss"].tolist()


@pytest.mark.slow  # Ray retries for about 40 s before it gives up; `_join_failure` is tested on its own below
def test_a_head_that_wants_a_token_it_is_not_given_is_a_one_line_error(ray_head, tmp_path):
    refused = _hunt(*SETTINGS, "--workers", "2", "--ray-address", ray_head, "--out", str(tmp_path / "no-token"),
                    env={**ENV, "RAY_AUTH_MODE": "disabled"})
    if refused.returncode == 0:
        pytest.skip("this Ray's heads ask for no token: nothing to refuse")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert f"Could not join the Ray cluster at '{ray_head}': it asks for its authentication token" in refused.stderr


def test_the_join_failure_names_its_cause():
    """The cause is read from the exception chain Ray raises (its outer message says only that it
    could not connect)."""
    try:
        try:
            raise RuntimeError("Failed to connect to GCS. Last connection error: AuthenticationError: InvalidAuthToken")
        except RuntimeError as inner:
            raise ConnectionError("Failed to connect to Ray cluster at 192.0.2.2:6379") from inner
    except ConnectionError as exc:
        assert "it asks for its authentication token" in _join_failure("127.0.0.1:6379", exc)
    plain = _join_failure("10.0.0.1:6379", ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379"))
    assert plain.startswith("Could not join the Ray cluster at '10.0.0.1:6379': Failed to connect") and "--ray-address auto" in plain
