"""Small test modules written once and built for either library (ember or torch), so the
Module machinery can be compared with torch.nn on the same structure."""

from collections import OrderedDict


def make(lib):
    """Classes ``Affine``, ``Tanh`` and ``Net`` built on ``lib`` (``ember`` or ``torch``)."""
    nn = lib.nn

    class Affine(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.n_in, self.n_out = n_in, n_out
            self.weight = nn.Parameter(lib.ones(n_in, n_out) * 0.5)
            self.bias = nn.Parameter(lib.zeros(n_out))
            self.register_buffer("calls", lib.tensor(0))
            self.register_buffer("scratch", lib.zeros(1), persistent=False)

        def forward(self, x):
            return lib.mm(x, self.weight) + self.bias

        def extra_repr(self):
            return f"in_features={self.n_in}, out_features={self.n_out}"

    class Tanh(nn.Module):
        def forward(self, x):
            return lib.tanh(x)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(lib.ones(1))
            self.register_buffer("steps", lib.zeros(1))
            self.fc1 = Affine(3, 4)
            self.act = Tanh()
            self.blocks = nn.ModuleList([Affine(4, 4), Affine(4, 4)])
            self.head = nn.Sequential(OrderedDict([("fc", Affine(4, 2)), ("act", Tanh())]))
            self.shared = self.fc1  # the same module under two names

        def forward(self, x):
            x = self.act(self.fc1(x))
            for block in self.blocks:
                x = self.act(block(x))
            return self.head(x) * self.scale

    return Affine, Tanh, Net
