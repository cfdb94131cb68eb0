import importlib.util
import sys
from pathlib import Path

import pytest
import torch

FIXTURES = Path(__file__).parent / "fixtures"
PROBLEM = FIXTURES / "problems" / "linear_tanh.py"
SOLUTIONS = FIXTURES / "solutions"
EXAMPLES = Path(__file__).parent.parent / "src" / "kbench" / "suite" / "examples"
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_benchmark(name: str):
    """A script of benchmarks/ as a module (they run on the GPU machine; their logic is tested here)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# Whole modules that judge many solutions or problems end to end (the exploit suite, the
# audit, the bundled levels): `make test-fast` (-m "not slow") leaves them to `make test`.
SLOW_MODULES = {
    "test_exploits.py", "test_audit.py", "test_level2.py", "test_level3.py", "test_level4.py", "test_honest.py",
}


def pytest_collection_modifyitems(config, items):
    no_gpu = not torch.cuda.is_available()
    for item in items:
        if item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
        if no_gpu and "gpu" in item.keywords:
            item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU"))


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
