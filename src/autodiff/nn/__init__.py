"""autodiff.nn: what PyTorch's autograd tutorials use of torch.nn, the functional losses and
activations (`autodiff.nn.functional`, usually imported as `F`)."""

from . import functional  # noqa: F401
