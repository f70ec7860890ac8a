"""The vLLM harness's own tracing (conformance/vllm_loader.py Probe), on a tiny torch module with a load_weights of its
own: what it measures (filled, landed, dropped), and that a failure of the tracing itself is recorded as a harness
error (the verdict's error, exit 3 in verify), never read as "dropped", "not shared" or a pass."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.ml

from specbridge.conformance import vllm_loader as H  # noqa: E402


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(4, 2))
        self.b = torch.nn.Parameter(torch.zeros(3))

    def load_weights(self, weights):
        for name, t in weights:
            if hasattr(self, name):
                getattr(self, name).data.copy_(t)


class NoStorage(torch.Tensor):
    def untyped_storage(self):
        raise RuntimeError("this tensor has no storage to follow")


def _probed() -> tuple[Tiny, H.Probe]:
    m, p = Tiny(), H.Probe()
    p.wrap(m)
    return m, p


def test_the_probe_measures_filled_landed_and_dropped():
    m, p = _probed()
    m.load_weights([("w", torch.ones(4, 2)), ("extra", torch.ones(1))])
    assert p.params["w"]["filled"] == 1.0 and p.params["b"]["filled"] == 0.0 and p.params["b"]["unfilled"] == ["*"]
    assert p.landed == {"w"} and p.given == ["w", "extra"] and p.harness_errors == []
    assert torch.equal(m.b.data, torch.zeros(3))  # the unfilled parameter got its initial values back


def test_a_tensor_whose_storage_cannot_be_read_is_a_harness_error_not_a_drop():
    m, p = _probed()
    with pytest.raises(RuntimeError, match="no storage to follow"):
        m.load_weights([("w", torch.Tensor._make_subclass(NoStorage, torch.ones(4, 2)))])
    assert len(p.harness_errors) == 1 and "reading the storage of checkpoint tensor 'w'" in p.harness_errors[0]
    assert "w" not in p.landed


def test_a_failed_measurement_is_recorded_and_vllms_own_outcome_stands(monkeypatch):
    def broken(*a, **kw):
        raise ValueError("measuring broke")

    monkeypatch.setattr(H, "_unfilled_parts", broken)
    m, p = _probed()
    m.load_weights([("w", torch.ones(4, 2))])  # b stays unfilled: _unfilled_parts runs and fails
    assert len(p.harness_errors) == 1 and "measuring the parameters after load_weights" in p.harness_errors[0]
    assert "ValueError: measuring broke" in p.harness_errors[0]


def test_the_parameter_hash_is_the_whole_tensors_in_blocks():
    import hashlib

    t = torch.arange(3 * 5, dtype=torch.bfloat16).reshape(3, 5)
    assert H._sha256_f32(torch.nn.Parameter(t)) == hashlib.sha256(t.float().numpy().tobytes()).hexdigest()


def test_without_the_initial_copy_unfilled_elements_become_zeros():
    m, p = Tiny(), H.Probe(keep_init=False)
    p.wrap(m)
    with torch.no_grad():
        m.b.fill_(7.0)
    m.load_weights([("w", torch.ones(4, 2))])
    assert p.params["b"]["filled"] == 0.0 and torch.equal(m.b.data, torch.zeros(3)) and torch.equal(m.w.data, torch.ones(4, 2))
