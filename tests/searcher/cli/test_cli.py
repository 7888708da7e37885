import subprocess
import sys

from PIL import Image

from searcher.cli import main
from searcher.strategies import DEFAULT_STRATEGY


def test_render_writes_a_labelled_sheet(tmp_path, capsys):
    out = tmp_path / "sheet.png"
    truth = tmp_path / "truth.csv"
    assert main(["render", "--generator", "faces", "-n", "6", "--seed", "0", "--out", str(out), "--truth", str(truth), "--set", "yaw=20"]) == 0
    sheet = Image.open(out)
    assert sheet.width > 3 * 128 and sheet.height > 2 * 128
    text = truth.read_text()
    assert text.count("\n") == 7 and "yaw" in text.splitlines()[0]
    assert "rendered 6 faces" in capsys.readouterr().out


def test_bad_input_is_a_clear_error_not_a_traceback(tmp_path, capsys):
    assert main(["render", "-n", "2", "--set", "yaw=99", "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "'yaw' parameter must be a number in [-75, 75]" in err and "Traceback" not in err
    assert main(["render", "--generator", "nope", "--out", str(tmp_path / "x.png")]) == 2
    assert "Available generators: faces, faces-latent" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_list_and_params(capsys):
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert "faces-latent" in listed and "dlib-cnn" in listed and "cmaes" in listed
    assert main(["params", "faces"]) == 0
    assert "skin_tone" in capsys.readouterr().out


def test_console_script_help():
    done = subprocess.run([sys.executable, "-m", "searcher.cli", "--help"], capture_output=True, text=True, check=True)
    assert "render" in done.stdout and "list" in done.stdout


def test_params_prints_range_default_and_meaning(capsys):
    assert main(["params", "faces"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["name", "range", "default", "meaning"]
    yaw = next(line for line in lines if line.split()[0] == "yaw")
    assert "[-75, 75]" in yaw and yaw.split()[6] == "0.0"  # name, "a number in [-75, 75]", default
    eyewear = next(line for line in lines if line.split()[0] == "eyewear")
    assert "'none', 'glasses', 'sunglasses'" in eyewear and " none " in eyewear


def test_compare_help_shows_its_defaults(capsys):
    import pytest

    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    out = capsys.readouterr().out
    for default in ("(default: dlib-cnn)", "(default: 400)", "(default: runs/compare)", f"(default: random,{DEFAULT_STRATEGY})"):
        assert default in " ".join(out.split()), default
