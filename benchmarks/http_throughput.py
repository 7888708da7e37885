"""How much do requests in flight buy against a slow API? Predictions per second of the `http` target
with 1, 4 and 16 requests in flight, against `searcher serve-target` on loopback where every request
sleeps `--sleep` seconds (without blocking the others) in front of a cheap model (dlib HOG, no
upsampling, 64 px faces). The goal: 16 in flight gives at least 12x the rate of one.

    python benchmarks/http_throughput.py [--sleep 0.1] [--rounds 10] [--in-flight 1 4 16]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import httpx
import numpy as np

import generators
from searcher.testing.ports import free_port
from targets.http import HttpTarget


def start_server(sleep: float) -> tuple[subprocess.Popen, str]:
    """`searcher serve-target dlib-hog` on a free loopback port; returns the process and /predict URL once healthy."""
    port = free_port()
    cmd = [sys.executable, "-m", "searcher.cli", "serve-target", "dlib-hog", "--option", "upsample=0", "--port", str(port), "--sleep", str(sleep)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            httpx.get(f"{base}/health", timeout=1).raise_for_status()
            return proc, f"{base}/predict"
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit("serve-target did not answer /health")


def rate(url: str, images: np.ndarray, warm_up: np.ndarray, in_flight: int) -> tuple[float, float]:
    """Seconds for a new target to answer `images` (none cached) once `warm_up` opened its connections, and predictions per second."""
    target = HttpTarget(url=url, max_in_flight=in_flight)
    target.predict(warm_up)
    start = time.perf_counter()
    pred = target.predict(images)
    seconds = time.perf_counter() - start
    target.close()
    assert pred.error == [None] * len(images) and target.requests_sent == len(images) + len(warm_up), "one request per image"
    return seconds, len(images) / seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sleep", type=float, default=0.1, help="seconds the server sleeps per request (default: 0.1)")
    ap.add_argument("--rounds", type=int, default=10, help="images per run = rounds x in-flight (default: 10)")
    ap.add_argument("--in-flight", type=int, nargs="+", default=[1, 4, 16])
    args = ap.parse_args()

    gen = generators.load("faces", resolution=64)
    most = args.rounds * max(args.in_flight)
    images = gen.generate(gen.space.sample(most + max(args.in_flight), seed=0)).images  # all distinct
    timed, warm_up = images[:most], images[most:]
    proc, url = start_server(args.sleep)
    try:
        rows = [(k, args.rounds * k, *rate(url, timed[: args.rounds * k], warm_up[:k], k)) for k in args.in_flight]
    finally:
        proc.terminate()
        proc.wait()
    base = rows[0][3]
    print(f"server sleep {args.sleep} s per request; ideal rate = in flight / sleep\n")
    print("| in flight | images | seconds | predictions/s | ideal | vs 1 in flight |")
    print("|---|---|---|---|---|---|")
    for k, n, seconds, per_s in rows:
        print(f"| {k} | {n} | {seconds:.2f} | {per_s:.1f} | {k / args.sleep:.0f} | {per_s / base:.1f}x |")


if __name__ == "__main__":
    main()
