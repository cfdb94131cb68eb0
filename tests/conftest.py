from pathlib import Path

import pytest
import torch

FIXTURES = Path(__file__).parent / "fixtures"
PROBLEM = FIXTURES / "problems" / "linear_tanh.py"
SOLUTIONS = FIXTURES / "solutions"
EXAMPLES = Path(__file__).parent.parent / "src" / "kbench" / "examples"


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
