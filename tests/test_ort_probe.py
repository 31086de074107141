"""The ONNX Runtime probe and doctor's report of it, without installing anything."""

from __future__ import annotations

import onnxruntime as ort

from models import ort_probe
from scim_edge import doctor


def test_doctor_names_a_double_install_and_its_fix(monkeypatch):
    monkeypatch.setattr(
        ort_probe,
        "onnxruntime_distributions",
        lambda: ["onnxruntime 1.32.0", "onnxruntime-gpu 1.31.1"],
    )
    by_name = {c.name: c for c in doctor.check_onnxruntime()}
    check = by_name["distributions"]
    assert check.status == "error"
    assert "onnxruntime 1.32.0, onnxruntime-gpu 1.31.1" in check.detail
    assert check.hint.startswith("pip uninstall -y onnxruntime onnxruntime-gpu && pip install ")


def test_doctor_names_the_single_distribution(monkeypatch):
    monkeypatch.setattr(ort_probe, "onnxruntime_distributions", lambda: ["onnxruntime-gpu 1.31.1"])
    by_name = {c.name: c for c in doctor.check_onnxruntime()}
    assert by_name["distributions"].status == "ok"
    assert by_name["distributions"].detail == "onnxruntime-gpu 1.31.1"


def test_probe_refuses_cuda_without_a_driver_and_says_why(monkeypatch):
    monkeypatch.setattr(
        ort, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"]
    )
    monkeypatch.setattr(ort_probe, "_device_count", lambda: (0, "no NVIDIA driver (test)"))
    ort_probe.cuda_probe.cache_clear()
    try:
        probe = ort_probe.cuda_probe()
    finally:
        ort_probe.cuda_probe.cache_clear()
    assert probe.usable is False
    assert probe.reason == "no NVIDIA driver (test)"


def test_probe_refuses_cuda_when_its_libraries_are_missing(monkeypatch):
    monkeypatch.setattr(
        ort, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"]
    )
    monkeypatch.setattr(ort_probe, "_device_count", lambda: (1, ""))
    monkeypatch.setattr(ort_probe, "_cuda_major", lambda: 13)
    monkeypatch.setattr(ort_probe, "_missing_libraries", lambda major: ["libcudnn.so.9"])
    ort_probe.cuda_probe.cache_clear()
    try:
        probe = ort_probe.cuda_probe()
    finally:
        ort_probe.cuda_probe.cache_clear()
    assert probe.usable is False
    assert "libcudnn.so.9" in probe.reason


def test_doctor_does_not_ask_for_cuda_when_the_probe_says_no(monkeypatch):
    """No session is opened with the CUDA provider (that is what prints ORT's load errors)."""
    asked: list[object] = []
    real = ort.InferenceSession

    def spy(*args, **kwargs):
        asked.append(kwargs.get("providers"))
        return real(*args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", spy)
    monkeypatch.setattr(
        ort_probe, "cuda_probe", lambda: ort_probe.CudaProbe(False, "no NVIDIA driver (test)")
    )
    by_name = {c.name: c for c in doctor.check_onnxruntime()}
    assert "no NVIDIA driver (test)" in by_name["CUDA"].detail
    assert all("CUDAExecutionProvider" not in (p or []) for p in asked)


def _recording_session(monkeypatch) -> list[dict]:
    """Replace ORT's session and logger setter with recorders: what each session was
    asked for, and the process-wide log level in force when it was made."""
    made: list[dict] = []
    level: list[int] = [2]  # ORT's own default: warnings print
    monkeypatch.setattr(ort, "set_default_logger_severity", level.append)
    monkeypatch.setattr(
        ort,
        "InferenceSession",
        lambda path, opts, providers: made.append({"providers": providers, "level": level[-1]}),
    )
    return made


def test_cuda_sessions_compute_in_full_fp32(monkeypatch, tmp_path):
    """TF32 (ORT's default on Ampere and later) parted a CUDA beam search from
    transformers on a near tie; the session asks for plain fp32 matrix products."""
    from models.seq2seq import open_session

    made = _recording_session(monkeypatch)
    open_session(tmp_path / "m.onnx", model_name="m", provider="cuda", threads=None)
    name, options = made[0]["providers"][0]
    assert (name, options.get("use_tf32")) == ("CUDAExecutionProvider", 0)


def test_sessions_are_made_with_ort_warnings_silenced(monkeypatch, tmp_path):
    """ORT's process-wide warnings (one per CUDA session on a GPU machine) would print
    into the terminal UI; every session is made with only errors printing."""
    from models.seq2seq import open_session

    made = _recording_session(monkeypatch)
    open_session(tmp_path / "m.onnx", model_name="m", provider="cpu", threads=1)
    assert made[0]["level"] == 3
