python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1
P="level1/relu level1/softmax level1/gelu level1/layer_norm level1/sum_dim level1/matmul_square level1/conv2d level1/maxpool2d level1/cross_entropy level1/swish"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u
PYTHONPATH=src:/tmp/site timeout 200 python3 benchmarks/null_candidates.py --mode batch --problems $P --out $OUT/null-new.jsonl > $OUT/null-new.log 2>&1; tail -3 $OUT/null-new.log
PYTHONPATH=old/src:/tmp/site timeout 170 python3 benchmarks/null_candidates.py --mode batch --problems $P --out $OUT/null-old.jsonl > $OUT/null-old.log 2>&1; tail -3 $OUT/null-old.log
PYTHONPATH=src:/tmp/site python3 benchmarks/null_candidates.py --report --out $OUT/null-new.jsonl 2>&1 | tail -25
PYTHONPATH=src:/tmp/site python3 benchmarks/null_candidates.py --report --out $OUT/null-old.jsonl 2>&1 | tail -25
PYTHONPATH=src:/tmp/site timeout 200 python3 -m pytest -p no:cacheprovider -m gpu -x -q tests/test_gpu.py > $OUT/gpu-tests.log 2>&1; tail -30 $OUT/gpu-tests.log
