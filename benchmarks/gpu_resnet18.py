"""ResNet-18 training throughput on the GPU: ember vs PyTorch eager, float32, bfloat16, amp, TF32.

``ember.models.resnet18(num_classes=10)`` (torchvision's layout: 7x7 stride-2 stem, max pool,
BasicBlock [2, 2, 2, 2]) against the same architecture written in PyTorch below (no
torchvision needed), on 3x32x32 images, batch 256: ``cross_entropy``, ``backward``, SGD
(lr 0.1, momentum 0.9, weight decay 5e-4), BatchNorm in training mode. Both start from the
same weights (PyTorch's, copied through ``state_dict``) and data; the first losses are checked
to agree before timing (and, with ``--compiled``, the compiled step's against ember eager's).
``--dtypes`` entries: ``float32`` (both libraries' defaults: TF32 for cuDNN, not for matmul);
``bfloat16`` casts the model and the images (both libraries train fully in bfloat16);
``amp_bfloat16`` keeps them float32 and runs forward + loss under ``ember.autocast`` /
``torch.autocast`` (device type from ``--device``, dtype bfloat16; no GradScaler), backward
and the SGD step outside it; ``tf32`` is float32 with TF32 allowed for matmul and cuDNN in both
libraries (restored afterwards), ember's own baseline for amp. ember runs eagerly and, with
``--compiled``, also as one ``ember.compile`` step (a CUDA graph; autocast inside the traced
step). Chunks of steps end with a synchronize; runs alternate; best of repeats.

Prints images/s of each and ember / PyTorch throughput (target >= 0.7x); with ``amp_bfloat16``
a summary line: ember amp / torch amp eager (>= 0.7x), ember amp compiled / torch amp eager
(>= 1.0x) and, with ``tf32`` too, ember amp / ember tf32, eager and compiled (>= 1.3x). Without
a GPU it exits with a message; ``--device cpu --steps 2`` is a (slow-ish) smoke run with batch
8 (autocast on the CPU uses bfloat16 too).

    python benchmarks/gpu_resnet18.py [--steps 20] [--repeats 3] [--batch 256]
        [--dtypes float32,bfloat16,amp_bfloat16,tf32] [--compiled] [--device cuda]
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _gpu import (  # noqa: E402
    amp_summary,
    autocast_for,
    compare_with_torch,
    gpu_args,
    precision_flags,
    require_device,
    storage_dtype,
)
from _timing import profile, train_step  # noqa: E402

CLASSES = 10


def torch_resnet18(torch):
    """torchvision's ResNet-18 (same parameter names and initialization as ember.models)."""
    nn = torch.nn

    class BasicBlock(nn.Module):
        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = downsample

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    class ResNet18(nn.Module):
        def __init__(self, num_classes):
            super().__init__()
            self.inplanes = 64
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            self.layer1 = self._layer(64, 1)
            self.layer2 = self._layer(128, 2)
            self.layer3 = self._layer(256, 2)
            self.layer4 = self._layer(512, 2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

        def _layer(self, planes, stride):
            down = None
            if stride != 1 or self.inplanes != planes:
                down = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                    nn.BatchNorm2d(planes),
                )
            blocks = [BasicBlock(self.inplanes, planes, stride, down), BasicBlock(planes, planes)]
            self.inplanes = planes
            return nn.Sequential(*blocks)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet18(CLASSES)


def build(lib, model, data, device: str, dtype_name: str):
    stored = storage_dtype(dtype_name)
    dtype = getattr(lib, stored)
    model.to(device)
    if stored != "float32":
        model.to(dtype)
    model.train()
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    x = lib.from_numpy(data[0].copy()).to(device).to(dtype)
    y = lib.from_numpy(data[1].copy()).to(device)
    ce = lib.nn.functional.cross_entropy

    return train_step(opt, ce, model, x, y, autocast=autocast_for(lib, device, dtype_name))


def main() -> None:
    args = gpu_args(
        __doc__.splitlines()[0],
        steps=20,
        repeats=3,
        **{
            "--batch": {"type": int, "default": None, "help": "256 on cuda, 8 on cpu"},
            "--dtypes": {"default": "float32,bfloat16"},
            "--compiled": {"action": "store_true", "help": "also time ember.compile"},
        },
    )
    ember, torch = require_device(args.device)
    dev = args.device
    batch = args.batch or (256 if dev.startswith("cuda") else 8)
    rng = np.random.default_rng(0)
    data = (
        rng.standard_normal((batch, 3, 32, 32)).astype(np.float32),
        rng.integers(0, CLASSES, batch).astype(np.int64),
    )
    name = torch.cuda.get_device_name() if dev.startswith("cuda") else "cpu"
    print(f"ResNet-18 training step, 3x32x32, batch {batch}, SGD momentum, device {dev} ({name})")
    results = {}
    for dtype_name in args.dtypes.split(","):
        torch.manual_seed(0)
        tmodel = torch_resnet18(torch)
        state = {k: v.detach().numpy().copy() for k, v in tmodel.state_dict().items()}

        def ember_model(state=state):
            from ember.models import resnet18

            m = resnet18(num_classes=CLASSES)
            m.load_state_dict({k: ember.tensor(v) for k, v in state.items()})
            return m

        # float32 and tf32 (10-bit mantissa in the products) agree closely; bfloat16, whole or
        # under autocast, keeps 8 bits
        tol = 2e-2 if dtype_name in ("float32", "tf32") else 1e-1
        with precision_flags(dtype_name, ember, torch):
            best, how, estep = compare_with_torch(
                ember, torch, build, (tmodel, ember_model), data, dev, dtype_name, tol, args
            )
            if args.profile:
                profile(estep, args.steps, 25)
        results[dtype_name] = best
        print(f"{dtype_name}:" + (f" (ember compiled: {how})" if how else ""))
        for key, t in best.items():
            print(f"  {key:>15}: {batch / t:9.1f} images/s ({t * 1e3:7.2f} ms/step)")
        for key in [k for k in best if k != "torch eager"]:
            ratio = best["torch eager"] / best[key]
            print(f"  {key} / torch eager throughput: {ratio:.2f}x (target >= 0.7x)")
    line = amp_summary("ResNet-18", results)
    if line:
        print(line)


if __name__ == "__main__":
    main()
