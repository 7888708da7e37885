"""Reading back the CSV files the commands write (an analysis's tables, a transect run's, an
export's metadata, a retraining's scores): a file cut short, not UTF-8 or not CSV at all is a
ParameterError naming it and the command that writes it, never a pandas traceback."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from searcher.errors import ParameterError

__all__ = ["read_csv"]


def read_csv(path: str | os.PathLike, command: str = "", **options: Any) -> pd.DataFrame:
    """`pandas.read_csv(path, **options)`, a damaged file refused in one line (`command` names
    what writes it, to run again)."""
    try:
        return pd.read_csv(path, **options)
    except (ValueError, UnicodeDecodeError) as exc:  # ParserError, EmptyDataError, a missing usecols column, bad bytes
        again = f"; run `{command}` again" if command else ""
        raise ParameterError(f"{path} cannot be read as the table it should be ({str(exc).splitlines()[0]}){again}.") from None
