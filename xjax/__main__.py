"""`python -m xjax SCRIPT [ARGS]`, `python -m xjax -m MODULE [ARGS]`, `python -m xjax -c CODE`:
runs a JAX program on xjax unchanged (`import jax` resolves to xjax: `xjax.install_as_jax`)."""
import runpy
import sys

from xjax._src.jax_compat import install_as_jax

_USAGE = ("usage: python -m xjax SCRIPT [ARGS...] | -m MODULE [ARGS...] | -c CODE [ARGS...]\n"
          "Runs a program written for JAX with `import jax` resolved to xjax.")


def main(argv: list[str]) -> int:
  if not argv or argv[0] in ("-h", "--help"):
    print(_USAGE, file=sys.stderr if not argv else sys.stdout)
    return 2 if not argv else 0
  install_as_jax()
  if argv[0] == "-m" and len(argv) > 1:
    sys.argv = [argv[1], *argv[2:]]
    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
  elif argv[0] == "-c" and len(argv) > 1:
    sys.argv = ["-c", *argv[2:]]
    exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
  elif argv[0].startswith("-"):
    print(_USAGE, file=sys.stderr)
    return 2
  else:
    sys.argv = list(argv)
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
