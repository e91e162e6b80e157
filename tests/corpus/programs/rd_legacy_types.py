# corpus: exact
"""Legacy typed constructors and type strings: torch.FloatTensor(2, 3).zero_(),
torch.LongTensor([...]), x.type(), x.type(torch.FloatTensor), is_tensor, numel."""

import torch

z = torch.FloatTensor(2, 3).zero_()
print(z, z.type())
ids = torch.LongTensor([1, 2])
print(ids, ids.dtype, ids.type())
print(torch.FloatTensor([1, 2]).dtype, torch.DoubleTensor([1.5]).type())
print(torch.ByteTensor([1, 2]).dtype, torch.IntTensor([3]).dtype, torch.BoolTensor([1, 0]))
x = torch.arange(4)
print(x.type(), x.type(torch.FloatTensor), x.type(torch.FloatTensor).type())
print(x.type("torch.DoubleTensor").dtype, x.float().type(torch.LongTensor))
print(isinstance(z, torch.FloatTensor), isinstance(ids, torch.FloatTensor))
print(isinstance(z, torch.Tensor), torch.is_tensor(z), torch.is_tensor([1]))
print(torch.is_floating_point(z), torch.is_floating_point(ids), torch.numel(z), z.numel())
print(z.nelement(), z.dim(), z.ndimension(), torch.tensor(1.0).dim())
print(torch.Tensor([1, 2]).dtype, torch.Tensor(2).shape)
print(torch.tensor([1.5, 2.5]).type(torch.int32), torch.bfloat16.is_floating_point)
print(torch.is_complex(z), torch.is_nonzero(torch.tensor([2])))
