"""Tensors on a CUDA device through CuPy: the API, transfers, mixed-device errors, and what
happens without CuPy or a GPU. "cuda-sim" runs everything on tests/fake_cupy.py, a NumPy
stand-in that refuses implicit host conversions as CuPy does; "cuda" needs a real GPU."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import autodiff
import fake_cupy
from autodiff import backend
from autodiff.backend import DeviceUnavailable
from devices import DEVICES, running_on

GPU_DEVICES = [d for d in DEVICES if d.values[0] != "cpu"]


def test_a_failure_on_one_of_the_devices_in_turn_names_it():
    from devices import on_each_named

    with pytest.raises(AssertionError) as caught:
        with on_each_named("cuda-sim"):
            raise AssertionError("gradients differ")
    assert caught.value.__notes__ == ["(on the device 'cuda-sim')"]


def test_the_gpu_cases_are_collected_where_a_gpu_is():
    """Every device test runs on the CPU and the CuPy stand-in; on a real GPU where CuPy finds
    one. Without one, its cases are not collected at all, and this says why."""
    from devices import REAL_CUDA_PROBLEM

    if REAL_CUDA_PROBLEM:
        assert [d.values[0] for d in DEVICES] == ["cpu", "cuda-sim"]
        pytest.skip(f"no GPU: {REAL_CUDA_PROBLEM}: the device tests' cuda cases are not collected")
    assert [d.values[0] for d in DEVICES] == ["cpu", "cuda-sim", "cuda"]


@pytest.fixture(params=GPU_DEVICES)
def cuda(request):
    with running_on(request.param) as where:
        yield where


# -- the Python API -------------------------------------------------------------------------------------


def test_tensors_on_the_device_and_back(cuda):
    x = autodiff.tensor([1.0, 2.0], device=cuda, requires_grad=True)
    assert (x.device, x.is_cuda, str(x.device)) == (autodiff.device("cuda", 0), True, "cuda:0")
    assert repr(x) == "tensor([1., 2.], device='cuda:0', requires_grad=True)"
    host = x.detach().cpu()
    assert (host.device, host.is_cuda) == (autodiff.device("cpu"), False)
    np.testing.assert_array_equal(host.numpy(), [1.0, 2.0])
    assert x.tolist() == [1.0, 2.0] and x[1].item() == 2.0
    assert x.to("cpu").device.type == "cpu" and host.to("cuda").device.type == "cuda"
    assert host.cuda().is_cuda and host.cuda(0).device == autodiff.device("cuda:0")


def test_numpy_on_a_device_tensor_is_pytorchs_error_unless_forced(cuda):
    x = autodiff.tensor([1.0, 2.0], device=cuda)
    with pytest.raises(TypeError, match=r"can't convert cuda:0 device type tensor to numpy\. Use Tensor\.cpu\(\)"):
        x.numpy()
    np.testing.assert_array_equal(x.numpy(force=True), [1.0, 2.0])


def test_creation_functions_take_a_device(cuda):
    for made in (autodiff.zeros(2, 3, device=cuda), autodiff.ones(2, device=cuda), autodiff.full((2,), 1.5, device=cuda),
                 autodiff.eye(3, device=cuda), autodiff.arange(4, device=cuda), autodiff.rand(3, device=cuda),
                 autodiff.randn(3, device=cuda), autodiff.zeros_like(autodiff.ones(2, device=cuda))):
        assert made.device.type == "cuda"
    autodiff.manual_seed(7)
    on_device = autodiff.randn(4, device=cuda).cpu().numpy()
    autodiff.manual_seed(7)
    np.testing.assert_array_equal(on_device, autodiff.randn(4).numpy())  # drawn on the host: the same numbers


def test_gradients_flow_back_across_a_transfer(cuda):
    x = autodiff.tensor([1.0, 2.0, 3.0], requires_grad=True)  # a CPU leaf
    y = (x.to(cuda) ** 2).sum()
    assert y.device.type == "cuda" and y.grad_fn.next_functions[0][0].next_functions[0][0].name() == "ToCopyBackward0"
    y.backward()
    assert x.grad.device.type == "cpu"
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_mixing_devices_is_pytorchs_error(cuda):
    gpu = autodiff.tensor([1.0, 2.0], device=cuda, requires_grad=True)
    cpu = autodiff.tensor([3.0, 4.0])
    message = r"Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    for mixed in (lambda: gpu + cpu, lambda: gpu @ cpu, lambda: autodiff.stack([gpu, cpu]),
                  lambda: autodiff.where(gpu > 1.5, gpu, cpu), lambda: autodiff.maximum(gpu, cpu),
                  lambda: gpu == cpu):
        with pytest.raises(RuntimeError, match=message):
            mixed()
    with pytest.raises(RuntimeError, match="found at least two devices, cpu and cuda:0!"):
        cpu * gpu


def test_cpu_scalars_and_numbers_go_with_any_device(cuda):
    gpu = autodiff.tensor([1.0, 2.0], device=cuda)
    for result in (gpu * 2.0, gpu * autodiff.tensor(3.0), 10 - gpu, gpu ** 2, autodiff.tensor(2.0) * gpu):
        assert result.device.type == "cuda"


def test_indexing_with_repeats_adds_up_on_the_device(cuda):
    x = autodiff.tensor([1.0, 2.0, 3.0], device=cuda, requires_grad=True)
    x[[0, 0, 2]].sum().backward()  # backward scatters with repeated indices
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [2.0, 0.0, 1.0])


def test_views_on_the_device(cuda):
    x = autodiff.arange(6.0, device=cuda).reshape(2, 3)
    assert x.t().reshape(6).tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.t().view(6)


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled", "ignore:Error detected in SqrtBackward0")
def test_anomaly_mode_finds_nan_on_the_device(cuda):
    x = autodiff.tensor([-1.0, 4.0], device=cuda, requires_grad=True)
    with autodiff.autograd.detect_anomaly():
        y = autodiff.sqrt(x).sum()
        with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output"):
            y.backward()


def test_non_finite_values_are_found_by_the_language_on_the_device(cuda):
    from autodiff.language import Options, run

    evaluation = run("y = log(x) * 2", at={"x": [-1.0, 2.0]}, options=Options(device=cuda))
    assert evaluation.output.device.type == "cuda"
    [warning] = evaluation.warnings
    assert warning.message == "log(x) produced nan"


# -- without CuPy or without a GPU ----------------------------------------------------------------------


def test_without_cupy_a_cuda_device_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    monkeypatch.setattr(backend, "_cupy", None)
    with pytest.raises(DeviceUnavailable, match=r"CUDA device requested but CuPy is not installed "
                                                r"\(install it with: pip install 'autodiff\[cuda\]'\)"):
        autodiff.zeros(2, device="cuda")


def test_with_cupy_but_no_gpu_says_what_cupy_reported():
    with fake_cupy.installed(device_count=0):
        with pytest.raises(DeviceUnavailable, match="CUDA device requested but CuPy found no GPU"):
            autodiff.zeros(2, device="cuda")
    with fake_cupy.installed() as cupy:
        def no_driver():
            raise RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient")

        cupy.cuda.runtime.getDeviceCount = no_driver
        with pytest.raises(DeviceUnavailable, match="CUDA device requested but CuPy cannot use it: "
                                                    "cudaErrorInsufficientDriver"):
            autodiff.tensor([1.0], device="cuda")


@pytest.mark.parametrize("command", [["grad", "-e", "x * 2", "--at", "x=1"], ["eval", "-e", "x * 2", "--at", "x=1"],
                                     ["graph", "-e", "x * 2", "--at", "x=1"], ["test", "examples"]])
def test_every_command_says_in_one_line_why_cuda_cannot_be_used(command, capsys):
    from autodiff.cli.main import main

    with fake_cupy.installed(device_count=0):
        assert main(command + ["--device", "cuda"]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "autodiff: error: CUDA device requested but CuPy found no GPU\n")


def test_the_commands_run_on_the_device(capsys):
    from autodiff.cli.main import main

    with fake_cupy.installed():
        assert main(["grad", "examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10", "--device", "cuda"]) == 0
        assert capsys.readouterr().out == "e\t17.51292546497023\na\t3.0\nb\t2.0\nc\t2.302585092994046\nd\t0.5\n"
        assert main(["test", "examples", "--device", "cuda", "-j", "1"]) == 0
        assert capsys.readouterr().out.endswith("summary\tpassed 7\tfailed 0\terrored 0\tnew 0\n")


def test_cupy_is_never_imported_unless_asked_for():
    code = ("import sys\nfrom autodiff.cli.main import main\n"
            "main(['grad', 'examples/tutorial.expr', '--at', 'a=2,b=3,c=5,d=10', '--format', 'json'])\n"
            "main(['test', 'examples', '-j', '1'])\n"
            "assert not [m for m in sys.modules if m.split('.')[0] in ('cupy', 'cupyx')], 'CuPy was imported'\n")
    from console import ROOT

    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
