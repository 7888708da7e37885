"""`gpus_per_worker`: each Ray actor asks Ray for its share of a GPU, and a cluster without the GPUs
is refused before any actor starts. Ray is a stand-in here (it records what it is asked), so the
argument path is checked on a machine without GPUs; the real Ray runs with 0 GPUs in the campaign tests."""

import sys

import pytest

from searcher.campaign.executors import RayExecutor, make_executor
from searcher.errors import ParameterError
from searcher.objective import ObjectiveSpec

SPEC = ObjectiveSpec("planted", "planted")


class FakeRay:
    """What `RayExecutor` uses of Ray, on a cluster with `gpus` GPUs."""

    def __init__(self, gpus: float, running: bool = False) -> None:
        self.resources = {"CPU": 16.0, **({"GPU": gpus} if gpus else {})}
        self.running, self.shut_down, self.options, self.actors = running, False, None, []

    def is_initialized(self) -> bool:
        return self.running

    def init(self, **_: object) -> None:
        self.running = True

    def shutdown(self) -> None:
        self.running, self.shut_down = False, True

    def cluster_resources(self) -> dict[str, float]:
        return self.resources

    def remote(self, **options: object):
        self.options = options
        fake = self

        class Actor:
            @staticmethod
            def remote(*args: object) -> tuple:
                fake.actors.append(args)
                return args

        return lambda cls: Actor


@pytest.fixture
def ray(monkeypatch):
    """`ray(gpus, running=False)`: the fake Ray that `import ray` gives from now on."""

    def install(gpus: float, running: bool = False) -> FakeRay:
        fake = FakeRay(gpus, running)
        monkeypatch.setitem(sys.modules, "ray", fake)
        return fake

    return install


@pytest.mark.parametrize(("share", "gpus"), [(0.0, 0), (0.25, 1), (1.0, 4)])
def test_each_actor_asks_ray_for_its_share_of_a_gpu(ray, share, gpus):
    fake = ray(gpus)
    executor = make_executor(None, SPEC, workers=4, gpus_per_worker=share)
    assert isinstance(executor, RayExecutor)
    assert fake.options == {"num_cpus": 1, "num_gpus": share}
    assert [name for _, name in fake.actors] == ["ray-0", "ray-1", "ray-2", "ray-3"]


@pytest.mark.parametrize("running", [False, True], ids=["started", "joined"])
def test_a_cluster_without_the_gpus_is_refused_before_any_actor_starts(ray, running):
    fake = ray(1, running=running)
    with pytest.raises(ParameterError, match=r"^gpus_per_worker=1 asks for 2 GPU\(s\) for 2 Ray worker\(s\), and the Ray cluster has 1; "
                                             r"nothing was started\."):
        RayExecutor(SPEC, workers=2, gpus_per_worker=1.0)
    assert fake.options is None and not fake.actors
    assert fake.shut_down is not running  # a Ray it started is stopped again; a cluster it joined is left alone


def test_the_local_executor_takes_no_gpu_share(ray):
    ray(1)
    with pytest.raises(ParameterError, match="gpus_per_worker is a Ray worker's GPU share; got gpus_per_worker=0.5 for the local"):
        make_executor("local", SPEC, gpus_per_worker=0.5)
