"""A rating page for people: annotate the images of a campaign or transect run, the way
Balakrishnan et al. had theirs annotated (docs/papers.md#balakrishnan, Sec. 4.3 and Fig. 6).

    searcher annotate runs/transects --attributes skin_tone,gender_presentation --annotator alice

    from searcher.annotate import serve, app
    serve("runs/transects", ["skin_tone", "gender_presentation"], "alice", port=0, ready=print)
    app("runs/bo", "age,fakeness", "bob")            # the ASGI app itself, e.g. for a test client

Why: the transect method measures a classifier against what people perceive, and prunes what they
find unrealistic or ambiguous (Sec. 5.2.1); simulated annotators stand in until people rate. The
page shows one image and one attribute at a time with the attribute's question and the names and
descriptions of its levels; number keys answer and go on, arrow keys and Backspace go back, and
U marks an image unrealistic (the paper's realism question, `fakeness`). Every answer is appended
to `DIR/annotations.csv` at once, in the format `searcher.analysis.annotations.read_annotations`
reads, so `searcher analyze` and `searcher transect` use people's ratings where they exist.

Modules: `form` (questions and scales), `images` (the directory's table of images), `log` (the
append-only ratings file), `session` (one annotator's pass), `server` (HTTP, the page, `serve`).
`app` and `serve` load on first use, so the light modules import without the renderers.
"""

from typing import Any

__all__ = ["app", "serve"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from searcher.annotate import server

        return getattr(server, name)
    raise AttributeError(f"module 'searcher.annotate' has no attribute {name!r}")
