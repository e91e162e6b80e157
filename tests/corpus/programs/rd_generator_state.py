# corpus: exact
"""manual_seed returns a Generator; get_state/set_state round trips replay the same draws
(compared for equality, not by value); Generator objects with their own seed."""

import torch

g = torch.manual_seed(42)
print(type(g).__name__, isinstance(g, torch.Generator), g.initial_seed())
state = torch.get_rng_state()
print(type(state).__name__, state.dtype)
a = torch.rand(3)
torch.set_rng_state(state)
b = torch.rand(3)
print(torch.equal(a, b))
gen = torch.Generator().manual_seed(7)
print(type(gen).__name__, gen.initial_seed(), gen.device)
s = gen.get_state()
c = torch.randn(4, generator=gen)
d = torch.randn(4, generator=gen)
gen.set_state(s)
c2 = torch.randn(4, generator=gen)
print(torch.equal(c, c2), torch.equal(c, d))
g1 = torch.Generator().manual_seed(3)
g2 = torch.Generator().manual_seed(3)
r1 = torch.randint(0, 10, (5,), generator=g1)
print(torch.equal(r1, torch.randint(0, 10, (5,), generator=g2)))
print(torch.initial_seed())
torch.manual_seed(1)
p1 = torch.randperm(6)
torch.manual_seed(1)
print(torch.equal(p1, torch.randperm(6)), sorted(p1.tolist()))
print(torch.default_generator.initial_seed(), torch.random.initial_seed())
st = torch.random.get_rng_state()
with torch.random.fork_rng():
    torch.manual_seed(99)
    torch.rand(2)
print(torch.equal(st, torch.get_rng_state()))
