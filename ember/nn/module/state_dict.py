"""Module state dicts: ``state_dict`` / ``load_state_dict``, the extra-state protocol, and
turning checkpoint values (ember, NumPy or PyTorch tensors) into ember tensors."""

from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ... import dtypes as _dt
from ..._config import no_grad
from ..._tensor import Size, Tensor
from ..parameter import Parameter

if TYPE_CHECKING:
    from .registration import Module

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(
    NamedTuple("IncompatibleKeys", [("missing_keys", list), ("unexpected_keys", list)])
):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _as_tensor(value):
    """A state-dict value as an ember Tensor: ember tensors as they are, NumPy arrays shared,
    PyTorch (or other array-library) tensors through ``.numpy()``; None if it is none of these."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
    elif hasattr(value, "numpy") and hasattr(value, "shape"):
        mod = type(value).__module__ or ""
        if mod.startswith("torch"):
            value = value.detach().cpu()
            if str(value.dtype) == "torch.bfloat16":
                value = value.float()
        arr = np.asarray(value.numpy())
    else:
        return None
    try:
        _dt.from_numpy_dtype(arr.dtype)
    except Exception:
        return None
    return Tensor._make(arr)


class ModuleStateDict:
    """The state-dict half of :class:`Module`: saving and loading parameters and buffers."""

    def get_extra_state(self) -> Any:
        """Override (with ``set_extra_state``) to keep non-tensor state in ``state_dict``."""
        raise RuntimeError("Module.get_extra_state() should be overridden before it is called")

    def set_extra_state(self, state: Any) -> None:
        """Override (with ``get_extra_state``) to restore non-tensor state."""
        raise RuntimeError("Module.set_extra_state() should be overridden before it is called")

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not ModuleStateDict.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(
        self, *args: Any, destination: dict | None = None, prefix: str = "", keep_vars: bool = False
    ) -> dict:
        """An ``OrderedDict`` of parameters and persistent buffers under dotted names.

        Per module: its parameters, then its persistent buffers (registration order), then its
        submodules'. Values are detached tensors sharing storage (the Parameters themselves
        with ``keep_vars=True``).

        >>> import ember
        >>> m = ember.nn.Module(); m.fc = ember.nn.Module()
        >>> m.fc.weight = ember.nn.Parameter(ember.ones(2))
        >>> m.fc.register_buffer("count", ember.tensor(0))
        >>> list(m.state_dict().items())
        [('fc.weight', tensor([1., 1.])), ('fc.count', tensor(0))]
        """
        if args:  # PyTorch's deprecated positional form
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    def _load_from_state_dict(
        self,
        state_dict: dict,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list,
        unexpected_keys: list,
        error_msgs: list,
    ) -> None:
        """Load this module's own parameters and persistent buffers (not its submodules')."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(
                self,
                state_dict,
                prefix,
                local_metadata,
                strict,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
        persistent = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local_state = {
            k: v
            for k, v in itertools.chain(self._parameters.items(), persistent.items())
            if v is not None
        }
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            raw = state_dict[key]
            value = _as_tensor(raw)
            if value is None:
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected ember.Tensor, '
                    f"NumPy array or Tensor-like object from checkpoint but received {type(raw)}"
                )
                continue
            if param.ndim == 0 and value.ndim == 1 and value.shape[0] == 1:
                value = Tensor._make(value._data.reshape(()))
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {Size(value.shape)} "
                    f"from checkpoint, the shape in current model is {Size(param.shape)}."
                )
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(value, Parameter):
                                value = Parameter(value, requires_grad=param.requires_grad)
                            else:
                                value.requires_grad_(param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {Size(param.shape)} and whose dimensions in the checkpoint are "
                    f"{Size(value.shape)}, an exception occurred : {ex.args}."
                )
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not ModuleStateDict.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    input_name = key[len(prefix) :].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from ``state_dict`` into this module (in place).

        Values may be ember tensors, NumPy arrays or PyTorch tensors; they are cast to each
        parameter's dtype. With ``strict`` (default) missing or unexpected keys are errors;
        size mismatches always are. ``assign=True`` puts the given tensors in place of the
        existing ones instead of copying. Returns ``(missing_keys, unexpected_keys)``.

        >>> import ember, numpy as np
        >>> m = ember.nn.Module(); m.w = ember.nn.Parameter(ember.zeros(2))
        >>> m.load_state_dict({"w": np.array([1.0, 2.0])})
        <All keys matched successfully>
        >>> m.w
        Parameter containing:
        tensor([1., 2.], requires_grad=True)
        >>> m.load_state_dict({"v": np.zeros(2)}, strict=False)
        _IncompatibleKeys(missing_keys=['w'], unexpected_keys=['v'])
        """
        if not isinstance(state_dict, dict) and not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list = []
        unexpected_keys: list = []
        error_msgs: list = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module: Module, local_state_dict: dict, prefix: str = "") -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                local_state_dict,
                prefix,
                local_metadata,
                True,
                missing_keys,
                unexpected_keys,
                error_msgs,
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {
                        k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)
                    }
                    load(child, child_state, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace."
                    )

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected_keys)
                    ),
                )
            if missing_keys:
                error_msgs.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing_keys)
                    ),
                )
        if error_msgs:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(error_msgs)
                )
            )
        return _IncompatibleKeys(missing_keys, unexpected_keys)
