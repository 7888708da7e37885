"""How long `searcher report` takes for a 400-evaluation campaign, and how big the page is (goals:
under 5 seconds and under 5 MB).

    python benchmarks/report_speed.py                        # runs/report_speed: built on first use, reused after
    python benchmarks/report_speed.py --campaign runs/bo     # any campaign directory instead

The campaign is a random search of the Haar detector on 128 px faces, 400 evaluations, seed 0
(random search, so the report holds the subgroup rates and effects too). The report is built three
times in one process and the best time printed, with the CPU time it took (a steadier figure on
shared cores): the libraries it uses (torch for the generator, matplotlib, scikit-learn) are
imported before the first build. One `searcher report` command from a cold start is timed too,
imports and interpreter included.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

from searcher.campaign import Campaign
from searcher.campaign.loop import run_or_resume
from searcher.report import report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--campaign", type=Path, help="an existing campaign directory (default: run or reuse runs/report_speed)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    directory = args.campaign
    if directory is None:
        directory = Path("runs/report_speed")
        reused = (directory / "campaign.sqlite").exists()
        start = time.perf_counter()
        run_or_resume(Campaign(generator="faces", target="haar-face", strategy="random", budget=400, batch=50, seed=0,
                               out=str(directory)), progress=False)
        print(f"campaign {directory} (400 evaluations, haar-face, random): "
              + ("reused" if reused else f"{time.perf_counter() - start:.1f} s"))
    out = directory / "report.html"
    report(directory, out=out)  # imports the libraries a report uses
    best = (float("inf"), 0.0)
    for _ in range(args.repeats):
        start, cpu = time.perf_counter(), time.process_time()
        report(directory, out=out)
        best = min(best, (time.perf_counter() - start, time.process_time() - cpu))
    images = out.read_text().count('class="item"')
    print(f"report of {directory}: {best[0]:.2f} s (best of {args.repeats}; {best[1]:.2f} s of CPU), "
          f"{out.stat().st_size / 1e6:.2f} MB, {images} gallery images")
    searcher_cli = shutil.which("searcher", path=str(Path(sys.executable).parent)) or "searcher"
    start, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([searcher_cli, "report", str(directory)], check=True, capture_output=True)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"`searcher report {directory}` from a cold start: {time.perf_counter() - start:.2f} s "
          f"({used.ru_utime + used.ru_stime - cpu.ru_utime - cpu.ru_stime:.2f} s of CPU)")

if __name__ == "__main__":
    main()
