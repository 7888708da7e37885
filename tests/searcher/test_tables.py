"""Tables a command wrote, read back damaged: one line naming the file and the command to run again."""

import pytest

from searcher.cli import main
from searcher.errors import ParameterError
from searcher.tables import read_csv


@pytest.mark.parametrize("content", [b'a,b\n"cut short', b"\x80\x81 not utf-8", b""])
def test_a_damaged_table_is_one_line_naming_it(tmp_path, content):
    (tmp_path / "t.csv").write_bytes(content)
    with pytest.raises(ParameterError, match=r"t\.csv cannot be read as the table it should be .*run `searcher analyze` again") as caught:
        read_csv(tmp_path / "t.csv", "searcher analyze")
    assert "\n" not in str(caught.value)


def test_a_report_of_an_analysis_with_a_damaged_table_is_one_line(tmp_path, capsys):
    (tmp_path / "subgroups.csv").write_bytes(b'attribute,level\n"cut short')
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1 and "subgroups.csv cannot be read" in err
    assert not (tmp_path / "report.html").exists()
