from pathlib import Path

import pytest
import torch

FIXTURES = Path(__file__).parent / "fixtures"
PROBLEM = FIXTURES / "problems" / "linear_tanh.py"
SOLUTIONS = FIXTURES / "solutions"
EXAMPLES = Path(__file__).parent.parent / "src" / "kbench" / "suite" / "examples"


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def serve():
    """Start OpenAI-compatible model servers on loopback (tests/model_server.py); closed afterwards."""
    from model_server import ModelServer

    servers = []

    def start(respond):
        servers.append(ModelServer(respond))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
