"""A CPU stand-in for a GPU array library that fails on host/device mixing.

Most machines that run the tests (CI included) have no GPU, so code meant for ``--gpu-id 0``
is checked there by running it on arrays that behave like cupy arrays where mixing is concerned:

- :class:`DeviceArray` wraps a numpy array the way a cupy array wraps device memory. Numpy
  never sees the data implicitly: ``numpy.asarray(x)`` raises (cupy's own error), any numpy
  function or ufunc called on it raises (the house rule is ``ops.xp``, never ``numpy``, on
  model arrays; cupy would dispatch some of these and fail on others), and so does an
  operator, index or assignment that mixes it with a host ``numpy.ndarray``. Python scalars
  and numpy scalars mix freely, as with cupy. Reductions give 0-d device arrays, not
  scalars; ``float()``, ``int()``, ``bool()``, ``.item()``, ``.tolist()`` and ``.get()`` are
  the explicit (synchronising) ways back to the host.
- :data:`device_xp` is the array module (cupy's role): numpy's functions on device arrays;
  ``asarray``/``array`` are the explicit host-to-device transfers.
- :class:`DeviceOps` is the thinc ``Ops`` over them (``CupyOps``' role), and
  :func:`emulate_device` makes thinc take its cupy code paths for these arrays
  (``is_cupy_array``, ``get_array_ops``, ``get_array_module``, ``to_numpy``).

Stricter than cupy on purpose: cupy accepts host arrays as fancy indices and as assigned
values (with a silent transfer each time), and numpy calls that NEP-18 dispatches; here
they are errors, because on a GPU they are a transfer per call or a crash.
"""
import contextlib
import operator
import types
from typing import Any

import numpy
import thinc.backends
import thinc.util
from thinc.api import Ops, get_current_ops, set_current_ops


class HostDeviceMixing(TypeError):
    """A host (numpy) array met a device array, or numpy was called on a device array."""


def _unwrap(value: Any, where: str) -> Any:
    if isinstance(value, DeviceArray):
        return value._data
    if isinstance(value, numpy.ndarray):
        raise HostDeviceMixing(
            f"{where}: a host numpy array {value.dtype}{list(value.shape)} mixed with device arrays "
            "(move it with ops.asarray / xp.asarray first, or keep the computation on the host)"
        )
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, where) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v, where) for k, v in value.items()}
    return value


def _wrap(value: Any) -> Any:
    if isinstance(value, numpy.ndarray):
        return DeviceArray(value)
    if isinstance(value, numpy.generic):  # cupy reductions give 0-d arrays
        return DeviceArray(numpy.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _binary(op, name):
    def method(self, other):
        return _wrap(op(self._data, _unwrap(other, f"device array {name}")))

    method.__name__ = name
    return method


def _reflected(op, name):
    def method(self, other):
        return _wrap(op(_unwrap(other, f"device array {name}"), self._data))

    method.__name__ = name
    return method


def _inplace(op, name):
    def method(self, other):
        op(self._data, _unwrap(other, f"device array {name}"))
        return self

    method.__name__ = name
    return method


class DeviceArray:
    """A numpy array posing as device memory (see the module docstring)."""

    __slots__ = ("_data",)
    __hash__ = None  # type: ignore

    def __init__(self, data: numpy.ndarray):
        self._data = data

    # ---- explicit transfers and host scalars ---------------------------------------
    def get(self) -> numpy.ndarray:
        return self._data.copy()

    def __float__(self) -> float:
        return float(self._data)

    def __int__(self) -> int:
        return int(self._data)

    def __bool__(self) -> bool:
        return bool(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self):
        return (_wrap(row) for row in self._data)

    def __repr__(self) -> str:
        return f"DeviceArray({self._data!r})"

    # ---- what numpy would do implicitly: refused -------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise HostDeviceMixing(
            "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy array explicitly."
        )

    def __array_function__(self, func, types_, args, kwargs):
        raise HostDeviceMixing(f"numpy.{func.__name__} called on a device array: use ops.xp (or ops.to_numpy first)")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        hosts = [x for x in inputs if isinstance(x, numpy.ndarray)]
        if hosts:
            _unwrap(hosts[0], f"numpy.{ufunc.__name__}")
        raise HostDeviceMixing(f"numpy.{ufunc.__name__} called on a device array: use ops.xp (or ops.to_numpy first)")

    # ---- indexing --------------------------------------------------------------------
    def __getitem__(self, key):
        return _wrap(self._data[_unwrap(key, "device array index")])

    def __setitem__(self, key, value):
        self._data[_unwrap(key, "device array index")] = _unwrap(value, "device array assignment")

    # ---- everything else the array does: on the device --------------------------------
    def __getattr__(self, name: str):
        if name.startswith("__"):  # __array_interface__ & co. would hand numpy the data
            raise AttributeError(name)
        attr = getattr(self._data, name)
        if callable(attr):

            def method(*args, **kwargs):
                where = f"device array .{name}()"
                return _wrap(attr(*_unwrap(args, where), **_unwrap(kwargs, where)))

            return method
        return _wrap(attr)

    def __copy__(self):
        return DeviceArray(self._data.copy())

    def __deepcopy__(self, memo):
        return DeviceArray(self._data.copy())


for _name, _op in [
    ("add", operator.add), ("sub", operator.sub), ("mul", operator.mul), ("truediv", operator.truediv),
    ("floordiv", operator.floordiv), ("mod", operator.mod), ("pow", operator.pow), ("matmul", operator.matmul),
    ("and", operator.and_), ("or", operator.or_), ("xor", operator.xor),
]:
    setattr(DeviceArray, f"__{_name}__", _binary(_op, f"__{_name}__"))
    setattr(DeviceArray, f"__r{_name}__", _reflected(_op, f"__r{_name}__"))
    setattr(DeviceArray, f"__i{_name}__", _inplace(getattr(operator, f"i{_name}"), f"__i{_name}__"))
for _name, _op in [("lt", operator.lt), ("le", operator.le), ("eq", operator.eq), ("ne", operator.ne), ("gt", operator.gt), ("ge", operator.ge)]:
    setattr(DeviceArray, f"__{_name}__", _binary(_op, f"__{_name}__"))
for _name, _op in [("neg", operator.neg), ("pos", operator.pos), ("abs", operator.abs), ("invert", operator.invert)]:
    setattr(DeviceArray, f"__{_name}__", (lambda op: lambda self: _wrap(op(self._data)))(_op))

# Functions whose listed positional arguments are host data by design (cupy.split takes its
# indices on the host).
_HOST_ARGUMENTS = {"split": (1,), "array_split": (1,)}
_TRANSFERS = ("asarray", "array", "ascontiguousarray", "asanyarray")


class _DeviceFunction:
    """A numpy function (or ufunc, with its methods) applied to device arrays."""

    def __init__(self, func, name: str):
        self._func = func
        self._name = name

    def __call__(self, *args, **kwargs):
        where = f"xp.{self._name}"
        host = _HOST_ARGUMENTS.get(self._name.rsplit(".", 1)[-1], ())
        args = tuple(a if i in host else _unwrap(a, where) for i, a in enumerate(args))
        return _wrap(self._func(*args, **_unwrap(kwargs, where)))

    def __getattr__(self, name: str):
        return _DeviceFunction(getattr(self._func, name), f"{self._name}.{name}")


def _transfer(func):
    def to_device(data, *args, **kwargs):
        """Host data (numpy arrays, lists, scalars) or device arrays -> a device array."""
        if isinstance(data, DeviceArray):
            data = data._data
        elif isinstance(data, (list, tuple)):
            data = [d._data if isinstance(d, DeviceArray) else d for d in data]
        return DeviceArray(numpy.array(func(data, *args, **kwargs), copy=True))

    return to_device


class DeviceModule:
    """numpy's namespace, acting on device arrays (cupy's role)."""

    ndarray = DeviceArray

    def __init__(self, module=numpy, prefix: str = ""):
        self._module = module
        self._prefix = prefix

    def __getattr__(self, name: str):
        attr = getattr(self._module, name)
        if name in _TRANSFERS and not self._prefix:
            return _transfer(attr)
        if isinstance(attr, type) or not callable(attr):
            if isinstance(attr, types.ModuleType):
                return DeviceModule(attr, f"{self._prefix}{name}.")
            return attr  # dtypes, constants, errstate
        return _DeviceFunction(attr, f"{self._prefix}{name}")


device_xp = DeviceModule()


class DeviceOps(Ops):
    """thinc Ops over :class:`DeviceArray` (CupyOps' role)."""

    name = "device"
    xp = device_xp

    def __init__(self, device_type="gpu", device_id: int = 0, **kwargs):
        super().__init__(device_type, device_id, **kwargs)

    def to_numpy(self, data, *, byte_order=None):
        if isinstance(data, DeviceArray):
            data = data.get()
        elif not isinstance(data, numpy.ndarray):
            data = numpy.asarray(data)
        return data.astype(data.dtype.newbyteorder(byte_order)) if byte_order else data


@contextlib.contextmanager
def emulate_device(monkeypatch):
    """Within the block, thinc treats DeviceArray as a cupy array (its cupy branches run)
    and the current ops are DeviceOps, so newly built models allocate on the 'device'."""
    monkeypatch.setattr(thinc.util, "has_cupy", True)
    monkeypatch.setattr(thinc.util, "cupy", device_xp)
    monkeypatch.setattr(thinc.backends, "CupyOps", DeviceOps)
    previous = get_current_ops()
    set_current_ops(DeviceOps())
    try:
        yield DeviceOps()
    finally:
        set_current_ops(previous)
