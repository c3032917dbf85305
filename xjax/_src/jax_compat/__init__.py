"""Running JAX programs and libraries on xjax unchanged: `import jax` resolves to xjax.

`install_as_jax()` puts an import finder first on `sys.meta_path`:

* ``jax`` is a module of its own whose attributes are xjax's (a distinct module object,
  so that importing ``jax.<sub>`` never rebinds xjax's own attributes), reporting the JAX
  version xjax mirrors (`JAX_VERSION`) as ``jax.__version__``;
* ``jax.<sub>`` is the very module ``xjax.<sub>`` (``jax.numpy is xjax.numpy``);
* ``jax.version`` is `xjax._src.jax_compat.version` (JAX's version module);
* ``jax._src.<sub>`` (JAX's private code, which some libraries and JAX's own tests import) is
  a thin alias module under `xjax._src.jax_compat.private` where one exists (holding the
  names clients use, and falling back to xjax's ``xjax._src.<sub>`` for the rest), else
  xjax's ``xjax._src.<sub>`` itself;
* anything else fails with ModuleNotFoundError saying that xjax does not provide it.

`python -m xjax SCRIPT [ARGS]` (xjax/__main__.py) runs a script that way.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

from xjax._src.config import config

# The JAX release whose API xjax mirrors: what `jax.__version__` says once installed.
from xjax._src.version import JAX_VERSION as JAX_VERSION  # noqa: E402

_PRIVATE = "xjax._src.jax_compat.private"
_finder = None


def _missing(fullname: str, detail: str = "") -> ModuleNotFoundError:
  return ModuleNotFoundError(
      f"No module named '{fullname}': xjax (installed as `jax` by xjax.install_as_jax) does "
      f"not provide {fullname}{detail}. It mirrors JAX {JAX_VERSION}'s public API; please "
      "report the module your program needs.", name=fullname)


def _targets(fullname: str) -> list[str]:
  """The xjax modules that `jax...` name `fullname` may resolve to, the first found wins: for
  ``jax._src.<sub>``, the alias module under `_PRIVATE` if there is one, else xjax's own
  ``xjax._src.<sub>`` (whose layout mirrors JAX's: JAX's test files import from it)."""
  rest = fullname[len("jax"):]
  if rest == ".version":
    return ["xjax._src.jax_compat.version"]
  if rest == "._src":
    return [_PRIVATE]
  if rest.startswith("._src."):
    return [_PRIVATE + rest[len("._src"):], "xjax" + rest]
  return ["xjax" + rest]


def _fall_back_to(alias, own_name: str, jax_name: str) -> None:
  """Names an alias module lacks are read from xjax's module `own_name`, when it exists. For
  an alias package (`jax_name` the name it is imported as), a submodule comes first through
  the finder: ``from jax._src.lax import linalg`` gets the alias module ``linalg`` if there
  is one, else xjax's ``xjax._src.lax.linalg``, not whatever attribute xjax's package has."""
  try:
    if importlib.util.find_spec(own_name) is None:
      return
  except ModuleNotFoundError:
    return
  is_package = hasattr(alias, "__path__")

  def __getattr__(attr):
    if attr.startswith("__"):
      raise AttributeError(attr)
    if is_package:
      sub = f"{jax_name}.{attr}"
      try:
        return importlib.import_module(sub)
      except ModuleNotFoundError as e:
        if e.name is None or not (sub == e.name or sub.startswith(e.name + ".")):
          raise
    try:
      return getattr(importlib.import_module(own_name), attr)
    except AttributeError:
      raise AttributeError(f"module {alias.__name__!r} has no attribute {attr!r}") from None
  alias.__getattr__ = __getattr__


class _AliasLoader(importlib.abc.Loader):
  """Loads a `jax...` name as an already imported module object (it is not re-executed)."""

  def __init__(self, module):
    self.module = module

  def create_module(self, spec):
    return self.module

  def exec_module(self, module):
    pass


class _JaxFinder(importlib.abc.MetaPathFinder):
  """Resolves `jax` and `jax.<sub>` to xjax's modules (see the module docstring)."""

  def __init__(self, root):
    self.root = root

  def find_spec(self, fullname, path=None, target=None):
    if fullname == "jax":
      return importlib.machinery.ModuleSpec("jax", _AliasLoader(self.root), is_package=True)
    if not fullname.startswith("jax."):
      return None
    module = None
    for name in _targets(fullname):
      try:
        module = importlib.import_module(name)
        break
      except ModuleNotFoundError as e:
        if not (e.name is not None and (name == e.name or name.startswith(e.name + "."))):
          raise
    if module is None:
      raise _missing(fullname)
    if name.startswith(_PRIVATE + ".") and not hasattr(module, "__getattr__"):
      _fall_back_to(module, "xjax" + fullname[len("jax"):], fullname)
    is_package = hasattr(module, "__path__")
    return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), is_package=is_package)


def _make_root():
  """The `jax` module: xjax's attributes (looked up in xjax when not copied), JAX's version."""
  import xjax
  from xjax._src.jax_compat import version
  root = types.ModuleType("jax", xjax.__doc__)
  root.__dict__.update({k: v for k, v in vars(xjax).items()
                        if not k.startswith("__") and k != "_src"})
  root.__file__ = xjax.__file__
  root.__path__ = []  # a package: the finder above serves every submodule
  root.__version__ = version.__version__
  root.__version_info__ = version.__version_info__
  root.version = version
  root.__getattr__ = lambda name: _root_getattr(xjax, name)
  root.__dir__ = lambda: sorted(set(dir(xjax)) | set(root.__dict__))
  return root


def _root_getattr(xjax, name):
  if name == "_src":
    # As in JAX, where `import jax` imports its private package: the alias package.
    return importlib.import_module("jax._src")
  if name.startswith("__"):
    raise AttributeError(f"module 'jax' has no attribute {name!r}")
  try:
    return getattr(xjax, name)
  except AttributeError:
    raise AttributeError(
        f"module 'jax' (xjax, installed by xjax.install_as_jax) has no attribute {name!r}: "
        f"xjax does not provide jax.{name} (it mirrors JAX {JAX_VERSION}'s public API)"
    ) from None


def install_as_jax() -> types.ModuleType:
  """Makes `import jax` (and every `jax.<sub>`) resolve to xjax in this process.

  After it, programs and libraries written for JAX run on xjax unchanged: `jax.numpy` is
  `xjax.numpy`, `jax.jit` is `xjax.jit`, and so on; `jax.__version__` is the JAX version
  xjax mirrors (0.10.2). A `jax.<sub>` that xjax lacks fails with a ModuleNotFoundError
  that says so. Calling it again does nothing. `python -m xjax SCRIPT` runs a script after
  it. Random numbers then use JAX 0.10.2's default stream layout
  (`jax_threefry_partitionable=True`, unless the JAX_THREEFRY_PARTITIONABLE environment
  variable says otherwise), so they equal JAX's. Mirrors no JAX function (it is xjax's way
  to stand in for `jax`).

  Returns:
    The `jax` module now in `sys.modules`.

  Raises:
    RuntimeError: real `jax` (or another module named `jax`) is already imported: the two
      cannot share a process; call it before anything imports jax.
  """
  global _finder
  existing = sys.modules.get("jax")
  if _finder is not None and existing is _finder.root:
    return existing
  if existing is not None or any(n.startswith("jax.") for n in sys.modules):
    where = getattr(existing, "__file__", None) or "an unknown location"
    raise RuntimeError(
        f"xjax.install_as_jax(): a module named 'jax' is already imported (from {where}); "
        "xjax cannot stand in for it in this process. Call install_as_jax() before anything "
        "imports jax, or run the program with `python -m xjax SCRIPT`.")
  if _finder is None:
    _finder = _JaxFinder(_make_root())
  if _finder not in sys.meta_path:
    sys.meta_path.insert(0, _finder)
  sys.modules["jax"] = _finder.root
  if "JAX_THREEFRY_PARTITIONABLE" not in os.environ:
    # Programs written for JAX 0.10.2 expect its default stream layout (xjax's own default
    # is the original layout that the Sharp Bits document prints).
    config.update("jax_threefry_partitionable", True)
  return _finder.root
