"""The folder tree is the architecture: these rules keep it so (read with `ast`, nothing imported).

- only `searcher/cli/` parses arguments or prints;
- imports inside `searcher/` run downward through the layers of `LAYERS`;
- `searcher/analysis/` is pure: it imports neither Ray, the campaign runner nor the studies;
- `searcher/` reaches generators and targets only through their registries and protocol modules;
- generators and targets import nothing from `searcher/` but the protocol types, errors, space,
  validation and devices (a plug-in package's `__init__.py` also builds its `Registry`).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# searcher's rooms, lowest first; a room may import its own layer and the layers below it.
# This table is the one home of the layer order: the README and the design note point here.
LAYERS = [
    {"errors", "defaults"},
    {"validation", "registry", "causal", "packages", "outputs", "tables", "devices"},  # outputs: the one rule for every path a command writes
    {"space"},
    {"objective"},
    {"strategies", "testing"},
    {"campaign", "serve"},
    {"figures"},
    {"analysis"},  # pure functions over stored runs: no Ray, no campaign runner, no studies
    {"studies", "export"},  # runners that evaluate (compare, transects, verification, ...); export reads runs through analysis
    {"retrain", "report", "annotate", "bench"},
    {"cli", "__init__"},
]
RANK = {room: i for i, rooms in enumerate(LAYERS) for room in rooms}
PLUGIN_MAY_USE = {"searcher.devices", "searcher.errors", "searcher.space", "searcher.validation"}


def _modules(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _room(path: Path) -> str:
    parts = path.relative_to(ROOT / "searcher").parts
    return parts[0].removesuffix(".py")


@pytest.mark.parametrize("path", _modules("searcher"), ids=lambda p: str(p.relative_to(ROOT)))
def test_searcher_modules_keep_to_their_layer(path):
    room = _room(path)
    for name in _imports(path):
        parts = name.split(".")
        if parts[0] == "searcher" and len(parts) > 1:
            assert RANK[parts[1]] <= RANK[room], f"{room} (layer {RANK[room]}) imports {name} (layer {RANK[parts[1]]}): upward"
        if parts[0] in ("generators", "targets"):
            assert name in ("generators", "targets", "generators.base", "targets.base"), \
                f"{path.name} imports the plug-in internals {name}; reach plug-ins through their registry"
        if room != "cli":
            assert parts[0] != "argparse", f"{path.name} parses arguments outside searcher/cli"
    if room != "cli":
        calls = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print"]
        assert not calls, f"{path.name} prints outside searcher/cli (line {calls[0].lineno if calls else 0})"


ANALYSIS_MAY_NOT_USE = ("ray", "searcher.campaign.loop", "searcher.campaign.executors", "searcher.studies")


@pytest.mark.parametrize("path", _modules("searcher/analysis"), ids=lambda p: str(p.relative_to(ROOT)))
def test_analysis_runs_nothing(path):
    """`analysis/` holds pure functions over stored runs: the runners that evaluate are `studies/`."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        else:
            continue
        for name in names:
            assert not any(name == banned or name.startswith(f"{banned}.") for banned in ANALYSIS_MAY_NOT_USE), \
                f"{path.relative_to(ROOT)} imports {name}; runners belong in searcher/studies"
            assert name != "searcher.campaign.Campaign", f"{path.relative_to(ROOT)} imports the campaign runner (Campaign)"


@pytest.mark.parametrize("path", _modules("generators") + _modules("targets"), ids=lambda p: str(p.relative_to(ROOT)))
def test_plugins_see_only_the_protocol_side_of_the_engine(path):
    allowed = PLUGIN_MAY_USE | ({"searcher.registry"} if path.name == "__init__.py" and path.parent.name in ("generators", "targets") else set())
    for name in _imports(path):
        if name.split(".")[0] == "searcher":
            assert name in allowed, f"{path.relative_to(ROOT)} imports {name}; plug-ins may use {sorted(allowed)}"


@pytest.mark.parametrize("path", _modules("benchmarks") + _modules("lab") + _modules("experiments"), ids=lambda p: str(p.relative_to(ROOT)))
def test_scripts_use_only_public_names(path):
    """A script is a user of the package: what it imports is what a user may rely on."""
    private = [f"{node.module}.{alias.name}" for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("searcher", "generators", "targets")
               for alias in node.names if alias.name.startswith("_")]
    assert not private, f"{path.relative_to(ROOT)} imports private names {private}; make them public or keep the script off them"
