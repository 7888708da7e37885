"""Where evaluations run: in this process (`local`) or on Ray actors (`ray`).

Both take an `ObjectiveSpec` and evaluate a batch of params dicts with one seed; the objective is a
pure function of (params, seed), so the same batch gives the same outcomes on either executor.
Ray actors build the generator and target once and receive a slice of the batch per call (a call
costs milliseconds, an image far less), and `address=` joins an existing Ray cluster;
`gpus_per_worker=` gives each actor that share of a GPU (Ray's `num_gpus`), so that Ray places the
actors on the cluster's GPUs and each holds its own (torch sees only the GPU Ray gives it).

Both report what their targets spend (`targets.base.SpendingTarget`) by worker, as
`{worker: target.spending()}` (None for a target that spends nothing to keep), take such a record
back on resume, and say when a target's cap is reached; each Ray actor has its own target, so its
own count (and its own cap).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from searcher.errors import ParameterError, PluginError
from searcher.objective import Objective, ObjectiveSpec, Outcome
from searcher.validation import check_choice
from targets.base import SpendingTarget

__all__ = ["EXECUTORS", "LocalExecutor", "RayExecutor", "check_reachable", "make_executor"]

EXECUTORS = ("local", "ray")


class LocalExecutor:
    """Evaluates in this process (with `objective`, one already built from `spec`)."""

    name = "local"

    def __init__(self, spec: ObjectiveSpec, objective: Objective | None = None) -> None:
        self.spec = spec
        self.objective = objective if objective is not None else spec.build()
        self.workers = 1

    def evaluate(self, params: Sequence[Mapping[str, Any]], seed: int) -> list[tuple[Outcome, str]]:
        return [(o, "local") for o in self.objective.evaluate(params, seed)]

    def spending(self, ahead: int = 0) -> dict[str, dict[str, Any]] | None:
        """`{"local": what the target spent}` (with `ahead` images more, at most), or None for a target
        that is not a `SpendingTarget`."""
        state = _spending(self.objective.target, ahead)
        return None if state is None else {"local": state}

    def restore_spending(self, state: Mapping[str, Mapping[str, Any]]) -> None:
        """Gives the target back the spending stored by an earlier run."""
        _restore(self.objective.target, state.get("local"))

    def cap_reached(self) -> str | None:
        """Why the target sends nothing more, or None."""
        return _cap_reached(self.objective.target)

    def close(self) -> None:
        pass


class RayExecutor:
    """Evaluates on `workers` Ray actors, each holding its own generator and target.

    Args:
        spec: what to evaluate.
        workers: number of actors (one CPU each).
        address: a running Ray cluster to join ("auto" or "ray://host:port"); None starts a local
            Ray on this machine.
        gpus_per_worker: each actor's share of a GPU (0: none); the cluster must have them all.
    """

    name = "ray"

    def __init__(self, spec: ObjectiveSpec, workers: int = 2, address: str | None = None, gpus_per_worker: float = 0.0) -> None:
        if address is not None:
            check_reachable(address)  # whether or not this process already runs Ray: the address given must answer
            _present_token(address)  # before Ray is imported: it reads its auth mode then
        try:
            import ray
        except ImportError as exc:
            raise PluginError("The ray executor needs Ray: pip install 'ray'") from exc
        self._ray = ray
        self.spec, self.workers = spec, int(workers)
        started = not ray.is_initialized()
        if started:
            if address is None:
                ray.init(num_cpus=max(self.workers, os.cpu_count() or 1), include_dashboard=False, log_to_driver=False)
            else:
                try:
                    ray.init(address=address, log_to_driver=False)
                except (ConnectionError, RuntimeError) as exc:  # a port answered, but not a cluster this process can join
                    raise ParameterError(_join_failure(address, exc)) from None
        missing = _missing_gpus(ray.cluster_resources(), self.workers, gpus_per_worker)
        if missing:  # Ray would wait for them for good
            if started:
                ray.shutdown()
            raise ParameterError(missing)
        self._actor_class = ray.remote(num_cpus=1, num_gpus=gpus_per_worker)(_Worker)
        self._actors = [self._actor_class.remote(spec, f"ray-{i}") for i in range(self.workers)]

    def evaluate(self, params: Sequence[Mapping[str, Any]], seed: int) -> list[tuple[Outcome, str]]:
        parts = [list(p) for p in np.array_split(np.arange(len(params)), self.workers) if len(p)]
        futures = [actor.evaluate.remote([params[i] for i in part], seed) for actor, part in zip(self._actors, parts)]
        out: list[tuple[Outcome, str]] = []
        for result in self._ray.get(futures):
            out.extend(result)
        return out

    def spending(self, ahead: int = 0) -> dict[str, dict[str, Any]] | None:
        """What each actor's target spent (with `ahead` images more, at most: any actor may get them all),
        by actor name; None for targets that spend nothing to keep."""
        states = self._ray.get([actor.spending.remote(ahead) for actor in self._actors])
        kept = {f"ray-{i}": state for i, state in enumerate(states) if state is not None}
        return kept or None

    def restore_spending(self, state: Mapping[str, Mapping[str, Any]]) -> None:
        """Gives each actor's target back its own stored spending."""
        self._ray.get([actor.restore_spending.remote(state.get(f"ray-{i}")) for i, actor in enumerate(self._actors)])

    def cap_reached(self) -> str | None:
        """Why an actor's target sends nothing more (the first such), or None."""
        return next((r for r in self._ray.get([actor.cap_reached.remote() for actor in self._actors]) if r is not None), None)

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []


class _Worker:
    """A Ray actor: builds the objective once, evaluates slices of batches."""

    def __init__(self, spec: ObjectiveSpec, name: str) -> None:
        import torch

        torch.set_num_threads(1)  # one CPU per actor
        self.objective, self.name = spec.build(), name

    def evaluate(self, params: list[dict[str, Any]], seed: int) -> list[tuple[Outcome, str]]:
        return [(o, self.name) for o in self.objective.evaluate(params, seed)]

    def spending(self, ahead: int = 0) -> dict[str, Any] | None:
        return _spending(self.objective.target, ahead)

    def restore_spending(self, state: Mapping[str, Any] | None) -> None:
        _restore(self.objective.target, state)

    def cap_reached(self) -> str | None:
        return _cap_reached(self.objective.target)


def _spending(target: Any, ahead: int = 0) -> dict[str, Any] | None:
    return target.spending(ahead) if isinstance(target, SpendingTarget) else None


def _restore(target: Any, state: Mapping[str, Any] | None) -> None:
    if state is not None and isinstance(target, SpendingTarget):
        target.restore_spending(state)


def _cap_reached(target: Any) -> str | None:
    return target.cap_reached() if isinstance(target, SpendingTarget) else None


def _missing_gpus(resources: Mapping[str, float], workers: int, share: float) -> str | None:
    """Why a Ray cluster with `resources` cannot give `workers` actors `share` of a GPU each, or None."""
    need, have = workers * share, float(resources.get("GPU", 0.0))
    if need <= have:
        return None
    return (f"gpus_per_worker={share:g} asks for {need:g} GPU(s) for {workers} Ray worker(s), and the Ray cluster has "
            f"{have:g}; nothing was started. Use gpus_per_worker 0 (--gpus-per-worker 0), fewer workers, or a cluster "
            "with GPUs (--ray-address).")


def check_reachable(address: str) -> None:
    """Refuses a Ray address nobody answers at, at once: `ray.init` would wait minutes on it and end
    in a traceback. "auto" (the cluster this machine belongs to) is left to Ray."""
    import socket
    from urllib.parse import urlsplit

    if address == "auto":
        return
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    how = ("Start a cluster with `ray start --head` and pass the address it prints (host:6379, or ray://host:10001 "
           "for a Ray client), or --ray-address auto on a node of a running cluster.")
    if not host or not port:
        raise ParameterError(f"The Ray address {address!r} is not host:port or ray://host:port. {how}")
    try:
        socket.create_connection((host, port), timeout=3).close()
    except OSError as exc:
        raise ParameterError(f"No Ray cluster answers at {address!r} ({exc.strerror or exc}). {how}") from None


_TOKEN_SOURCES = "RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token"


def _present_token(address: str) -> None:
    """Clusters that `ray start` makes ask for an authentication token; Ray presents it when it
    finds the cluster itself ("auto") but not for an address given by hand, so a head joined by
    its host:port fails. With a token at hand and no auth mode chosen, present it (a cluster
    without authentication accepts it too)."""
    if address == "auto" or "RAY_AUTH_MODE" in os.environ:
        return
    if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.isfile(os.path.expanduser("~/.ray/auth_token")):
        os.environ["RAY_AUTH_MODE"] = "token"


def _join_failure(address: str, exc: BaseException) -> str:
    """One line on why `ray.init(address)` failed, with the remedy for the cause found in its chain."""
    chain, cause = [], exc
    while cause is not None:
        chain.append(f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__ or cause.__context__
    if any("AuthToken" in c or "AuthenticationError" in c for c in chain):
        return (f"Could not join the Ray cluster at {address!r}: it asks for its authentication token. Give this machine the "
                f"cluster's token ({_TOKEN_SOURCES}; `ray get-auth-token` prints it on the head) and set RAY_AUTH_MODE=token, "
                "or use --ray-address auto on a machine of the cluster.")
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return (f"Could not join the Ray cluster at {address!r}: {reason}. Pass the address `ray start --head` printed, or "
            "--ray-address auto on a machine of the cluster.")


def make_executor(name: str | None, spec: ObjectiveSpec, workers: int = 1, address: str | None = None,
                  objective: Objective | None = None, gpus_per_worker: float = 0.0) -> LocalExecutor | RayExecutor:
    """`local` for one worker, `ray` for more (or when an address is given), unless named; a local
    executor evaluates `objective` if given (Ray actors always build their own, each with
    `gpus_per_worker` of a GPU)."""
    if name is None:
        name = "ray" if workers > 1 or address else "local"
    check_choice("executor", name, EXECUTORS)
    if name == "local":
        if workers != 1:
            raise ParameterError(f"The local executor runs one worker; got workers={workers}. Use executor='ray' for more.")
        if gpus_per_worker:
            raise ParameterError(f"gpus_per_worker is a Ray worker's GPU share; got gpus_per_worker={gpus_per_worker:g} for the local "
                                 "executor, which runs on the spec's device. Use executor='ray', or leave gpus_per_worker out.")
        return LocalExecutor(spec, objective)
    return RayExecutor(spec, workers=workers, address=address, gpus_per_worker=gpus_per_worker)
