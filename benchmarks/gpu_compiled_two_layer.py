"""Compiled two-layer-net Adam step on the GPU: ``ember.compile`` (CUDA graph) vs PyTorch eager.

``Sequential(Linear(1000, 100), ReLU(), Linear(100, 10))``, ``mse_loss``, ``Adam(lr=1e-3)``,
batch N=64, float32, on cuda (the model of benchmarks/compiled_two_layer.py). ember runs the
whole step (``zero_grad``, forward, ``backward``, ``step``) compiled: captured once as a CUDA
graph and replayed (``ember.static.cuda_graph``), and, for comparison, compiled without a graph
(``cuda_graph=False``) and eagerly. All start from PyTorch's weights; the compiled losses are
checked against PyTorch's before timing. Chunks of steps end with a synchronize; runs
alternate; best of repeats.

Prints us/step of each, and ember compiled (graph) / PyTorch eager CUDA (target <= 1.0x).
Without a GPU it exits with a message; ``--device cpu --steps 2`` is a smoke run of the script.

    python benchmarks/gpu_compiled_two_layer.py [--steps 200] [--repeats 7] [--device cuda]
"""

from __future__ import annotations

import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _gpu import best_per_step, gpu_args, require_device, synchronizers  # noqa: E402
from _timing import profile, train_step  # noqa: E402
from nn_two_layer_adam import D_IN, D_OUT, H, N, make_data  # noqa: E402


def build(lib, data, device: str, state=None):
    model = lib.nn.Sequential(lib.nn.Linear(D_IN, H), lib.nn.ReLU(), lib.nn.Linear(H, D_OUT))
    if state is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    model.to(device)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x, y = (lib.from_numpy(a.copy()).to(device) for a in data)
    mse = lib.nn.functional.mse_loss

    step = train_step(opt, mse, model, x, y)

    return model, step


def main() -> None:
    args = gpu_args(__doc__.splitlines()[0], steps=200, repeats=7)
    ember, torch = require_device(args.device)
    dev = args.device
    data = make_data()
    torch.manual_seed(0)
    tmodel, tstep = build(torch, data, dev)
    state = {k: v.detach().cpu().numpy().copy() for k, v in tmodel.state_dict().items()}
    _, estep = build(ember, data, dev, state)
    _, raw = build(ember, data, dev, state)
    _, raw_nograph = build(ember, data, dev, state)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        cstep = ember.compile(raw)
        losses = [float(cstep().item()) for _ in range(4)]  # warm-up, capture, two replays
        t_first = time.perf_counter() - t0
    for i, lc in enumerate(losses):
        lt = float(tstep().item())
        if abs(lc - lt) > 1e-3 * abs(lt):
            raise SystemExit(f"step {i}: compiled loss {lc}, torch loss {lt}: results differ")
    nograph = ember.compile(raw_nograph, cuda_graph=False)
    runner = cstep._latest.runner
    if runner is None:
        how = "no graph (cpu)" if not dev.startswith("cuda") else "no graph"
    elif runner.disabled:
        how = f"no graph: {runner.disabled}"
    else:
        how = f"CUDA graph (captured {runner.captures}x)"
    if args.profile:
        profile(cstep, args.steps, 20)
    esync, tsync = synchronizers(dev, ember, torch)
    runs = {
        "ember compiled": cstep,
        "torch eager": tstep,
        "ember no graph": nograph,
        "ember eager": estep,
    }
    syncs = {"torch eager": tsync, **{k: esync for k in runs if k != "torch eager"}}
    best = best_per_step(runs, syncs, args.steps, args.repeats)
    name = torch.cuda.get_device_name() if dev.startswith("cuda") else "cpu"
    print(
        f"compiled two-layer nn + mse + Adam, N={N}, {D_IN}-{H}-{D_OUT}, float32, "
        f"device {dev} ({name}); ember compiled step: {how}"
    )
    for warning in caught:
        print(f"  warning: {warning.message}")
    for key, t in best.items():
        print(f"{key:>15}: {t * 1e6:8.1f} us/step")
    ratio = best["ember compiled"] / best["torch eager"]
    print(f"ember compiled / torch eager: {ratio:.2f}x (target <= 1.0x)")
    print(f"first four compiled calls (trace, warm-up, capture, replays): {t_first:.3f} s")


if __name__ == "__main__":
    main()
