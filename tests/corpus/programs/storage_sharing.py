# corpus: exact
"""Views share storage: reshape/view/transpose/slices, strides, contiguity, clone."""

import torch

x = torch.arange(12.0)
v = x.view(3, 4)
print(v.shape, v.stride(), v.is_contiguous())
t = v.t()
print(t.shape, t.stride(), t.is_contiguous())
print(t.contiguous().stride())
v[0, 0] = 100.0
print(x[0])
s = v[:, 1]
print(s.stride(), s.storage_offset())
c = v.clone()
c[1, 1] = -5.0
print(v[1, 1], c[1, 1])
print(x.data_ptr() == v.data_ptr(), x.data_ptr() == c.data_ptr())
print(x.untyped_storage().nbytes(), len(x.storage()))
print(v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr())
print(x.element_size(), x.nelement() * x.element_size())
y = torch.zeros(2, 3)
z = y.T.reshape(6)
z[0] = 1.0
print(y)
e = torch.ones(3).expand(2, 3)
print(e.stride(), e.is_contiguous())
print(torch.arange(8).reshape(2, 2, 2).permute(2, 0, 1).stride())
