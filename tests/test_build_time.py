"""benchmarks/build_time.py: what it reads from ninja, nvcc and g++, and its plan with builds faked
(a real build takes tens of seconds here; the benchmark itself runs on the GPU machine)."""

from __future__ import annotations

import json
import os
import stat

import pytest
from conftest import load_benchmark


@pytest.fixture(scope="module")
def bt():
    return load_benchmark("build_time")


def test_ninja_steps_per_target_and_link(bt):
    log = "# ninja log v5\n0\t29750\t1\tmain.o\tab\n3\t118400\t1\tcuda.cuda.o\tcd\n118400\t119300\t1\tx_ext.so\tef\n"
    assert bt.ninja_steps(log) == {"main.o": 29.75, "cuda.cuda.o": 118.397, "link": 0.9}
    assert bt.ninja_steps("# ninja log v5\n") == {}


def test_pch_command_is_main_cpp_flags_without_the_extension_name(bt):
    build = ("ninja_required_version = 1.3\ncxx = c++\nnvcc = /usr/local/cuda/bin/nvcc\n\n"
             "cflags = -DTORCH_EXTENSION_NAME=relu_x -DTORCH_API_INCLUDE_EXTENSION_H -isystem /t/include "
             "-isystem '/a b/include' -fPIC -std=c++20\npost_cflags = -O3\n\nrule compile\n  command = $cxx -c $in\n")
    variables = bt.ninja_vars(build)
    assert variables["cxx"] == "c++" and "rule" not in " ".join(variables)
    command = bt.pch_command(variables, "/t/include/torch/extension.h", "/p/extension.h.gch/default.gch")
    assert command == ["c++", "-DTORCH_API_INCLUDE_EXTENSION_H", "-isystem", "/t/include", "-isystem", "/a b/include",
                       "-fPIC", "-std=c++20", "-O3", "-x", "c++-header", "/t/include/torch/extension.h",
                       "-o", "/p/extension.h.gch/default.gch"]


def test_nvcc_phases_in_seconds(bt, tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text(
        "source file name , phase name , phase input files , phase output file , arch , tool, metric , unit\n"
        "cuda.cu , gcc (preprocessing 4) , cuda.cu  , a.ii ,  , nvcc , 3365.0029 , ms\n"
        "cuda.cu , cicc , b.ii  , c.ptx , compute_90a , nvcc , 45243.1719 , ms\n")
    assert bt.nvcc_phases(csv) == [{"phase": "gcc (preprocessing 4)", "seconds": pytest.approx(3.3650029)},
                                   {"phase": "cicc", "seconds": pytest.approx(45.2431719)}]
    assert bt.nvcc_phases(tmp_path / "missing.csv") == []


@pytest.mark.parametrize("first_line, used", [("! /p/torch/extension.h.gch/default.gch", True),
                                              ("x /p/torch/extension.h.gch/default.gch", False)])
def test_pch_used_asks_gcc_and_stops_it(bt, tmp_path, first_line, used):
    compiler = tmp_path / "fake-gcc"
    # what g++ -H prints: the .gch it took (!) or rejected (x), then the headers it reads (.); then it works on
    compiler.write_text(f"#!/bin/sh\necho '{first_line}' >&2\necho '. /t/include/torch/extension.h' >&2\nexec sleep 60\n")
    compiler.chmod(compiler.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "build.ninja").write_text(f"cxx = {compiler}\ncflags = -fPIC\n")
    (tmp_path / "main.cpp").write_text("#include <torch/extension.h>\n")
    assert bt.pch_used(tmp_path, dict(os.environ)) is used


def test_gpu_plan_rows_budget_and_saved_json(bt, tmp_path, monkeypatch, capsys):
    def fake_one(self, style, build_dir, env, cflags):
        build_dir.mkdir(parents=True, exist_ok=True)
        (build_dir / "build.ninja").write_text("cxx = c++\n")
        pch = "CPATH" in env
        compiled = {"main.o": 5.0 if pch else 15.0, "cuda.cuda.o": 50.0 if style != "split" else 1.0, "link": 0.5}
        return {"wall_s": 1.0, "import_s": 1.0, "load_inline_s": 0.2, "ok": True,
                "steps": compiled if "warm" not in build_dir.name else {}, "pch_used": pch if pch else None}

    def fake_pch(self):
        self.pch_tried = True
        self.pch_root = self.workdir / "pch"
        self.result["pch"] = {"ok": True, "seconds": 20.0, "bytes": 750 << 20, "command": ["c++"]}

    monkeypatch.setattr(bt.Bench, "one", fake_one)
    monkeypatch.setattr(bt.Bench, "build_pch", fake_pch)
    out = tmp_path / "out" / "build_time.json"
    result = bt.main(["--plan", "gpu", "--out", str(out), "--parallel", "3", "--workdir", str(tmp_path / "w")])
    saved = json.loads(out.read_text())
    assert [r["row"] for r in saved["rows"]] == [row[0].replace("x N", "x 3") for row in bt.GPU_PLAN]
    assert saved["rows"] == result["rows"] and saved["pch"]["ok"] and not saved["skipped"]
    split_pch = next(r for r in saved["rows"] if r["row"] == "split cold +pch x 3")
    assert split_pch["parallel"] == 3 and split_pch["main.o"] == 5.0 and split_pch["pch_used"] == [True] * 3
    assert next(r for r in saved["rows"] if r["row"] == "typical warm")["pch_used"] is None
    table = capsys.readouterr().out
    assert "typical cold +pch" in table and "pch build: 20.0 s, 750 MiB" in table

    over = bt.main(["--plan", "gpu", "--budget", "0", "--parallel", "0", "--workdir", str(tmp_path / "v")])
    assert over["rows"] == [] and "would pass the budget" in over["skipped"][0]["why"]
