"""A shape error inside a Module names the module's path, its type and the shapes."""

import pytest

import ember
from ember import nn
from ember._errors import ShapeError


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1)
        )
        self.features.append(nn.Conv2d(16, 4, 3))
        self.head = nn.Linear(10, 2)

    def forward(self, x):
        return self.features(x)


def test_nested_conv_error_names_path_type_and_shapes():
    with pytest.raises(
        ShapeError,
        match=r"^features\.3 \(Conv2d\): expected input with 16 channels, got 8 "
        r"\(input shape \(64, 8, 14, 14\)\)$",
    ):
        Net()(ember.randn(64, 1, 14, 14))


def test_op_error_inside_layer_gets_the_layer_path():
    model = nn.Sequential(nn.Flatten(), nn.Linear(10, 5))
    with pytest.raises(ShapeError, match=r"^1 \(Linear\): expected input with 10 features"):
        model(ember.randn(3, 7))


def test_outermost_module_alone_keeps_its_message():
    with pytest.raises(ShapeError, match=r"^Linear: expected input with 10 features"):
        nn.Linear(10, 5)(ember.randn(3, 7))


def test_module_called_from_outside_the_tree_stops_the_path():
    shared = nn.Linear(10, 5)

    class Wrapper(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Identity()

        def forward(self, x):
            return shared(self.inner(x))

    with pytest.raises(ShapeError, match=r"^Linear: expected input with 10 features"):
        nn.Sequential(Wrapper())(ember.randn(3, 7))


def test_error_keeps_its_type_and_hooks_still_see_it():
    seen = []
    model = nn.Sequential(nn.Linear(4, 4), nn.Linear(5, 1))
    model[1].register_forward_pre_hook(lambda m, args: seen.append(args[0].shape))
    with pytest.raises(ShapeError, match=r"^1 \(Linear\)"):
        model(ember.randn(2, 4))
    assert seen == [ember.Size([2, 4])]
    assert isinstance(ShapeError("x"), ValueError)


def test_path_goes_through_module_lists_and_dicts():
    class Net(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = ember.nn.ModuleList([ember.nn.Linear(4, 4), ember.nn.Linear(4, 4)])
            self.heads = ember.nn.ModuleDict({"out": ember.nn.Linear(5, 2)})

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return self.heads["out"](x)

    with pytest.raises(ember.ShapeError, match=r"^heads\.out \(Linear\): "):
        Net()(ember.ones(3, 4))
