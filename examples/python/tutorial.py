"""The PyTorch autograd tutorial, run on autodiff: `import autodiff as torch` is the only change."""

import autodiff as torch

# e = a*b + log(d)*c, the graph of the autograd tutorials
a = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
c = torch.tensor(5.0, requires_grad=True)
d = torch.tensor(10.0, requires_grad=True)
u = a * b
t = torch.log(d)
t.retain_grad()
e = u + t * c
print(e)
print(e.grad_fn.name(), "->", [(node.name(), nr) for node, nr in e.grad_fn.next_functions])
e.backward()
print("grads:", a.grad, b.grad, c.grad, d.grad, "retained t.grad:", t.grad)

# backward on a non-scalar needs a gradient: the error, then its two fixes
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], requires_grad=True)
L = 10 - x * 2
try:
    L.backward()
except RuntimeError as error:
    print("RuntimeError:", error)
L.sum().backward(retain_graph=True)
print(x.grad)
x.grad = None
L.backward(torch.ones(L.shape))
print(x.grad)

# second derivatives: the backward pass is itself recorded with create_graph=True
y = torch.tensor(0.5, requires_grad=True)
(dy,) = torch.autograd.grad(torch.tanh(y), y, create_graph=True)
(d2y,) = torch.autograd.grad(dy, y)
print("tanh'(0.5) =", dy.item(), " tanh''(0.5) =", d2y.item())
print(torch.autograd.functional.hessian(lambda v: (v**3).sum(), torch.tensor([1.0, 2.0])))
