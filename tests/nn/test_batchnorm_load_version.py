"""BatchNorm loading a state dict without version metadata: a missing num_batches_tracked is
kept from the module, as PyTorch's _NormBase (version 2) does, and not reported missing."""

import torch

import ember


def _both():
    t = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.BatchNorm1d(2))
    e = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.BatchNorm1d(2))
    return t, e


def test_plain_dict_without_num_batches_tracked_is_not_missing():
    t, e = _both()
    t_sd = {k: v for k, v in t.state_dict().items() if k != "1.num_batches_tracked"}
    e_sd = {k: v for k, v in e.state_dict().items() if k != "1.num_batches_tracked"}
    t_res = t.load_state_dict(t_sd, strict=False)
    e_res = e.load_state_dict(e_sd, strict=False)
    assert e_res.missing_keys == t_res.missing_keys == []
    e.load_state_dict(e_sd)  # strict: no error either
    assert "1.num_batches_tracked" not in e_sd  # the caller's dict is left alone


def test_other_missing_buffers_still_reported_and_metadata_version_is_two():
    t, e = _both()
    t_sd = {k: v for k, v in t.state_dict().items() if k.startswith("0.")}
    e_sd = {k: v for k, v in e.state_dict().items() if k.startswith("0.")}
    t_res = t.load_state_dict(t_sd, strict=False)
    e_res = e.load_state_dict(e_sd, strict=False)
    assert e_res.missing_keys == t_res.missing_keys
    assert len(e_res.missing_keys) == 4
    assert e.state_dict()._metadata["1"]["version"] == t.state_dict()._metadata["1"]["version"]


def test_versioned_state_dict_without_the_count_reports_it_missing():
    t, e = _both()
    t_sd, e_sd = t.state_dict(), e.state_dict()
    del t_sd["1.num_batches_tracked"], e_sd["1.num_batches_tracked"]
    t_res = t.load_state_dict(t_sd, strict=False)
    e_res = e.load_state_dict(e_sd, strict=False)
    assert e_res.missing_keys == t_res.missing_keys == ["1.num_batches_tracked"]
