#!/usr/bin/env bash
# The GPU check (issue 11, item 5), prepared to run once on a lent NVIDIA machine, from the
# project root: the whole cuda suite, `ember train --device cuda` with and without --compile on
# cnn (digits; also with --amp: float16 + GradScaler eager, bfloat16 compiled) and resnet18
# (CIFAR-shaped data from tools/make_cifar_like.py), and the GPU benchmarks. Logs land in
# ${OUT:-gpu-logs}/logs.tgz, one per step, with summary.log beside it.
# Every step has its own time limit (one device call is 600 s at most: with ONLY, pick steps).
# ONLY='tests|train-cnn' (a regex of step names) runs just those steps.
# A baseline in the same call: with an earlier tree's ember/ and benchmarks/ in .base/ (here, once:
# `mkdir .base && git archive REV ember benchmarks | tar -x -C .base`, `.base/` in
# .git/info/exclude, and `.base` in the call's carry), the eager A/B steps and each benchmark step
# also run on it, alternating (step names ending in -base).
set -u
base=${OUT:-gpu-logs}
out=$base/logs  # bundled into $base/logs.tgz at the end: the device tool returns at most 8 files
# wheels the device image lacks (cuDNN frontend, tensorboardX), carried in .whl/ when present
if ls .whl/*.whl > /dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
if ! command -v python > /dev/null; then
    mkdir -p /tmp/bin && ln -sf "$(command -v python3)" /tmp/bin/python && export PATH=/tmp/bin:$PATH
fi
mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
summary="$out/summary.log"

step() {  # step NAME SECONDS COMMAND...: run with a limit, log it, summarise it
    local name=$1 limit=$2 start rc
    shift 2
    if [[ -n "${ONLY:-}" && ! "${name%-base}" =~ ^($ONLY)$ ]]; then return; fi
    echo "== $name (limit ${limit}s): $*" >> "$summary"
    start=$(date +%s)
    timeout "$limit" "$@" > "$out/$name.log" 2>&1
    rc=$?
    echo "   rc=$rc in $(($(date +%s) - start))s" >> "$summary"
    tail -n 4 "$out/$name.log" | sed 's/^/   | /' >> "$summary"
}

nvidia-smi -L > "$summary" 2>&1
python -c "import cupy, numpy, torch, ember; print('cupy', cupy.__version__, 'numpy',
numpy.__version__, 'torch', torch.__version__, 'ember cuda', ember.cuda.is_available())" \
    >> "$summary" 2>&1
if [[ -z "${ONLY:-}" || "train-resnet18" =~ ^($ONLY)$ || "train-resnet18-compiled" =~ ^($ONLY)$ ]]; then
    python tools/make_cifar_like.py "$out/cifar" 5000 1000
fi

step tests 150 python -m pytest -q -m gpu -n 12 -rfE -p no:cacheprovider
step tests-quick 60 python -m pytest -q -m gpu -n 12 -rfE -p no:cacheprovider tests/ops/test_attention.py \
    tests/backend/test_gpu.py tests/optim
step train-cnn 40 python -m ember train --device cuda --epochs 15 -q --out "$out/run-cnn"
step train-cnn-compiled 40 python -m ember train --device cuda --epochs 15 --compile -q \
    --out "$out/run-cnn-compiled"
step train-cnn-amp 40 python -m ember train --device cuda --epochs 15 --amp float16 -q \
    --out "$out/run-cnn-amp"
step train-cnn-amp-compiled 40 python -m ember train --device cuda --epochs 15 --amp bfloat16 \
    --compile -q --out "$out/run-cnn-amp-compiled"
step train-resnet18 50 python -m ember train --device cuda --model resnet18 \
    --data "$out/cifar" --epochs 1 --batch-size 128 -q --out "$out/run-resnet18"
step train-resnet18-compiled 50 python -m ember train --device cuda --model resnet18 \
    --data "$out/cifar" --epochs 1 --batch-size 128 --compile -q \
    --out "$out/run-resnet18-compiled"
both() {  # both NAME SECONDS SCRIPT ARGS...: this tree's benchmark, then .base's where it exists
    local name=$1 limit=$2 script=$3
    shift 3
    step "$name" "$limit" python "benchmarks/$script" "$@"
    if [[ -d .base/ember ]]; then
        PYTHONPATH=$PWD/.base${PYTHONPATH#"$PWD"} step "$name-base" "$limit" \
            python ".base/benchmarks/$script" "$@"
    fi
}
both eager-ab 120 gpu_transformer.py --steps 10 --repeats 2 --dtypes bfloat16,amp_bfloat16
both eager-resnet18 90 gpu_resnet18.py --steps 10 --repeats 2 --dtypes float32,amp_bfloat16
both bench-resnet18 80 gpu_resnet18.py --steps 10 --repeats 2 --compiled \
    --dtypes float32,amp_bfloat16,tf32
both bench-transformer 80 gpu_transformer.py --steps 5 --repeats 2 --compiled \
    --dtypes bfloat16,amp_bfloat16,tf32
step dispatch 40 python benchmarks/dispatch_overhead.py --device cuda --number 1000 --repeats 3
step profile-transformer 60 python tools/gpu_profile.py transformer --rows 30
step profile-resnet18 90 python tools/gpu_profile.py resnet18 --rows 30 --cprofile
[[ -f tools/gpu_nccl_check.py ]] && step nccl 90 python tools/gpu_nccl_check.py
step bench-two-layer 30 python benchmarks/gpu_compiled_two_layer.py
step bench-matmul 20 python benchmarks/gpu_matmul.py --steps 10 --repeats 3
rm -rf "$out/cifar" "$out"/run-*/tensorboard "$out"/run-*/*.safetensors "$out"/run-*/*/*.safetensors
cp "$summary" "$base/summary.log"
tar -C "$base" -czf "$base/logs.tgz" logs && rm -rf "$out"
cat "$base/summary.log"
