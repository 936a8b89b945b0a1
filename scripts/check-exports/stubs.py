"""Stand-ins for what a consumer imports but Debian's torch (1.13) lacks.

The consumers' parsers are pure Python, but their packages import, at
module level, parts of torch that came after 1.13 (torch.distributed.
checkpoint, DeviceMesh, torch.compile, ...) and GPU-only packages (triton).
None of those run while arguments or configs are checked; the stand-ins
below only let the imports succeed. Every stand-in made is recorded in
STUBBED, which each checker prints, so a run says exactly what was not real.
"""
import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types

STUBBED = []

# A python whose own packages lack torch (e.g. one with pydantic 2, which
# DeepSpeed needs, beside Debian's python3-torch) finds torch in
# TORCH_SITE, appended to the path so that its own packages come first.
if os.environ.get('TORCH_SITE'):
    sys.path.append(os.environ['TORCH_SITE'])


class _Any(type):
    """Metaclass: any attribute or subscript of a stand-in class is one."""

    def __getattr__(cls, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return _Dummy

    def __getitem__(cls, key):
        return _Dummy

    def __or__(cls, other):
        return _Dummy

    __ror__ = __or__


class _Dummy(metaclass=_Any):
    """A stand-in: can be subclassed, called, subscripted, used as a type."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Dummy()

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return _Dummy()


class _StubModule(types.ModuleType):
    __path__ = []
    __version__ = '0.0.0'

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return _Dummy


def _under(name, prefixes):
    return any(name == p or name.startswith(p + '.') for p in prefixes)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, missing, force):
        self.missing, self.force = list(missing), list(force)

    def find_spec(self, name, path, target=None):
        if _under(name, self.force):
            return importlib.machinery.ModuleSpec(name, self)
        if _under(name, self.missing) and importlib.machinery.PathFinder.find_spec(name, path) is None:
            return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        STUBBED.append(spec.name)
        return _StubModule(spec.name)

    def exec_module(self, module):
        pass


def modules(missing=(), force=()):
    """Stand in for the modules under the prefixes in missing where they
    do not exist, and for those under force always (they exist but fail
    to import)."""
    sys.meta_path.insert(0, _Finder(missing, force))


def attrs(module, names, value=None):
    """Give a real module the named attributes it lacks (stand-ins, or
    value where given)."""
    m = importlib.import_module(module)
    for n in names:
        if not hasattr(m, n):
            setattr(m, n, _Dummy if value is None else value)
            STUBBED.append(module + '.' + n)


def identity(f=None, *args, **kwargs):
    """A decorator that leaves what it decorates as it is."""
    if f is None or not callable(f):
        return lambda g: g
    return f


def summary():
    """The stand-ins made, submodules folded under their first stubbed
    parent."""
    out = []
    for name in sorted(set(STUBBED)):
        if not any(name.startswith(o + '.') for o in out):
            out.append(name)
    return out
