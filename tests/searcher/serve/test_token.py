"""`searcher serve-target` on any host but loopback requires a bearer token read from the environment."""

import base64
import io

import numpy as np
import pytest
from PIL import Image
from starlette.testclient import TestClient

from searcher.cli import main
from searcher.errors import ParameterError
from searcher.serve import create_app, is_loopback, resolve_token
from searcher.testing import CallableTarget


def _body() -> dict:
    buf = io.BytesIO()
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(buf, format="PNG")
    return {"image": base64.b64encode(buf.getvalue()).decode()}


def test_with_a_token_predict_answers_only_the_bearer():
    client = TestClient(create_app(CallableTarget(lambda x: [True] * len(x)), "fake", token="s3cret"))
    assert client.post("/predict", json=_body()).status_code == 401
    assert client.post("/predict", json=_body(), headers={"Authorization": "Bearer wrong"}).status_code == 401
    answer = client.post("/predict", json=_body(), headers={"Authorization": "Bearer s3cret"})
    assert answer.status_code == 200 and answer.json()["label"] is True
    assert client.get("/health").json()["requests"] == 1  # refused requests never reach the model


@pytest.mark.parametrize("host, loopback", [("127.0.0.1", True), ("127.0.0.5", True), ("::1", True), ("localhost", True),
                                            ("0.0.0.0", False), ("192.168.1.4", False), ("::", False), ("example.org", False)])
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


def test_a_token_is_required_off_loopback_and_read_from_the_environment(monkeypatch):
    monkeypatch.delenv("SEARCHER_SERVE_TOKEN", raising=False)
    assert resolve_token(None, "127.0.0.1") is None
    with pytest.raises(ParameterError, match=r"--host 0\.0\.0\.0 serves every machine.*--token env:NAME"):
        resolve_token(None, "0.0.0.0")
    with pytest.raises(ParameterError, match="must be env:NAME") as literal:
        resolve_token("hunter2-literal", "0.0.0.0")
    assert "hunter2-literal" not in str(literal.value)
    with pytest.raises(ParameterError, match="'SEARCHER_SERVE_TOKEN', which is not set"):
        resolve_token("env:SEARCHER_SERVE_TOKEN", "0.0.0.0")
    monkeypatch.setenv("SEARCHER_SERVE_TOKEN", "t0k3n")
    assert resolve_token("env:SEARCHER_SERVE_TOKEN", "0.0.0.0") == "t0k3n"


def test_the_cli_refuses_before_it_serves(capsys):
    assert main(["serve-target", "haar-face", "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "--host 0.0.0.0 serves every machine" in err and "Traceback" not in err
