"""Extracting the solution from a model's reply (kbench.agents.reply): fast, no processes."""

import random
import time

import pytest

from kbench.agents.reply import FAILURES, extract, find_blocks

SOLUTION = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return x.clone()
"""

HELPER = """import triton


@triton.jit
def helper(x_ptr):
    pass
"""


def fenced(code, tag="python", fence="```"):
    return f"{fence}{tag}\n{code}{fence}\n"


def test_single_block():
    e = extract("Here is my answer:\n\n" + fenced(SOLUTION) + "\nHope it helps.")
    assert e.ok and e.failure is None
    assert e.code == SOLUTION
    assert e.how == "fenced" and e.chosen == 0
    assert "defines ModelNew" in e.message


def test_the_block_defining_model_new_not_the_first():
    reply = "First a helper:\n" + fenced(HELPER) + "Then the model:\n" + fenced(SOLUTION) + "Usage:\n" + fenced("m = ModelNew()\n")
    e = extract(reply)
    assert e.ok and e.code == SOLUTION
    assert e.chosen == 1 and len(e.blocks) == 3
    assert "block 2 of 3" in e.message


@pytest.mark.parametrize("tag", ["", "python", "py", "Python3", "cuda", "cpp", "{.python}", "python title=solution.py"])
def test_any_or_no_language_tag(tag):
    e = extract(fenced(SOLUTION, tag=tag))
    assert e.ok and e.code == SOLUTION


def test_tilde_fences_and_longer_fences():
    assert extract(fenced(SOLUTION, fence="~~~")).code == SOLUTION
    # A four-backtick fence may hold ``` lines inside.
    inner = SOLUTION + '\nDOC = """\n```\nnot a fence end\n```\n"""\n'
    e = extract("````python\n" + inner + "````\n")
    assert e.ok and "not a fence end" in e.code


def test_last_of_several_complete_blocks_that_parse():
    first = SOLUTION.replace("x.clone()", "x + 0")
    broken = SOLUTION.replace("def forward(self, x):", "def forward(self, x)")
    e = extract(fenced(first) + "Improved:\n" + fenced(SOLUTION) + "Oops:\n" + fenced(broken))
    assert e.ok and e.code == SOLUTION and e.chosen == 1
    assert "2 blocks define it" in e.message


def test_missing_closing_fence_at_the_end():
    e = extract("Answer:\n```python\n" + SOLUTION)
    assert e.ok and e.code == SOLUTION
    assert e.how == "fenced-unclosed"
    assert not e.blocks[0].closed


def test_complete_block_preferred_to_an_unclosed_one():
    other = SOLUTION.replace("x.clone()", "x * 1")
    e = extract(fenced(SOLUTION) + "```python\n" + other)
    assert e.code == SOLUTION and e.how == "fenced"


def test_crlf_and_cr_line_endings():
    reply = ("Text\n" + fenced(SOLUTION) + "end\n").replace("\n", "\r\n")
    e = extract(reply)
    assert e.ok and e.code == SOLUTION and "\r" not in e.code
    assert extract(fenced(SOLUTION).replace("\n", "\r")).code == SOLUTION


def test_indented_fences():
    body = "".join("    " + line + "\n" if line else "\n" for line in SOLUTION.splitlines())
    reply = "1. The solution:\n\n    ```python\n" + body + "    ```\n"
    e = extract(reply)
    assert e.ok and e.code == SOLUTION


def test_none_parses_takes_the_last_mention():
    bad1 = "class ModelNew(nn.Module):\n    def forward(self, x)\n        return x\n"
    bad2 = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self x):\n        return x\n"
    e = extract(fenced(bad1) + fenced("print('hi')\n") + fenced(bad2))
    assert not e.ok and e.failure == "unparsable"
    assert e.code == bad2 and e.chosen == 2 and e.how == "mention-only"
    assert "SyntaxError" in e.message


def test_whole_reply_without_fences():
    e = extract(SOLUTION)
    assert e.ok and e.how == "whole-reply" and e.chosen is None
    assert e.code == SOLUTION


def test_no_code():
    e = extract("I am sorry, I cannot help with kernels today.")
    assert e.failure == "no_code" and e.code is None and not e.ok
    assert e.message


def test_code_without_model_new():
    e = extract(fenced(HELPER) + fenced("print(1)\n"))
    assert e.failure == "no_model_new" and e.code is None
    assert "2 fenced block" in e.message
    assert extract(HELPER).failure == "no_model_new"


def test_mentions_but_does_not_define_at_module_level():
    code = "def make():\n    class ModelNew:\n        pass\n    return ModelNew\n"
    e = extract(fenced(code))
    assert e.failure == "no_model_new" and "module level" in e.message


def test_unfenced_prose_mentioning_model_new():
    e = extract("You should write class ModelNew that calls a kernel.")
    assert e.failure == "unparsable" and e.code is None


@pytest.mark.parametrize(
    "junk",
    [
        "",
        "   \n\t",
        None,
        b"\xff\xfe\x00\x01garbage",
        b"```python\n\xff\xfeclass ModelNew: pass\n```",
        "\x00" * 100,
        "```",
        "```\n```",
        "~~~~~~",
        "```python\nclass ModelNew(\x00):\n```",
        "```python\n" + "(" * 5000 + "\n```\nclass ModelNew: pass",
        "class ModelNew:\n    x = " + "[" * 10000,
        12345,
        object(),
    ],
)
def test_never_raises(junk):
    e = extract(junk)
    assert e.failure in FAILURES or e.ok
    assert isinstance(e.message, str) and e.message


def test_random_binary_junk_never_raises():
    rng = random.Random(7)
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 400)))
        text = data.decode("latin-1")
        for reply in (data, text, "```python\n" + text, text + "\nclass ModelNew:\n pass\n"):
            e = extract(reply)
            assert e.ok or e.failure in FAILURES


def test_huge_reply_is_handled_quickly():
    filler = ("Some reasoning about memory coalescing and tiling. " * 20 + "\n") * 5000  # ~5 MB
    reply = filler + fenced(SOLUTION) + filler
    start = time.perf_counter()
    e = extract(reply)
    assert e.ok and e.code == SOLUTION
    huge_block = "```python\nclass ModelNew:\n    pass\n" + "x = 1\n" * 400_000 + "```\n"
    e = extract(huge_block)
    assert e.failure == "unparsable" and "too large" in e.message
    assert time.perf_counter() - start < 20


def test_find_blocks_records_lines_and_language():
    blocks = find_blocks("a\n```Python\nx = 1\n```\nb\n~~~\ny\n")
    assert [(b.language, b.first_line, b.closed) for b in blocks] == [("python", 2, True), ("", 6, False)]


def test_to_dict_summary():
    d = extract(fenced(SOLUTION)).to_dict()
    assert d["ok"] is True and d["blocks"] == 1 and d["how"] == "fenced"
