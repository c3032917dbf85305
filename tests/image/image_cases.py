"""Cases of `jax.image` shared by tools/golden_image.py (run under real JAX) and
tests/image/test_image.py (run under xjax). `cases(jax, jnp, np, x64)` yields
``(case_id, thunk)``; inputs come from seeded NumPy generators, so both sides see the
same arrays."""

METHODS = ("nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area")

# (name, input shape, output shape): up, down, mixed, and untouched batch/channel axes
SHAPES = (
    ("1d_up", (7,), (12,)),
    ("1d_down", (11,), (4,)),
    ("2d_up", (5, 6), (9, 11)),
    ("2d_down", (9, 10), (4, 3)),
    ("3d_mixed", (4, 3, 5), (6, 2, 7)),
    ("4d_batch", (2, 5, 6, 3), (2, 8, 4, 3)),
)


def image(np, shape, dtype, seed=0):
  rng = np.random.RandomState(seed)
  if dtype == "uint8":
    return rng.randint(0, 256, size=shape).astype(np.uint8)
  return rng.standard_normal(shape).astype(dtype)


def cases(jax, jnp, np, x64):
  """Without x64: every method x antialias x shape in float32, uint8 on the 2-D shapes,
  and scale_and_translate. With x64: a float64 / int32 subset."""
  resize, sat = jax.image.resize, jax.image.scale_and_translate
  fdt, idt = ("float64", "int32") if x64 else ("float32", "uint8")
  shapes = SHAPES[3:5] if x64 else SHAPES
  for method in METHODS:
    for antialias in (True, False):
      if method == "nearest" and not antialias:
        continue  # nearest ignores antialias
      if x64 and not antialias and method != "cubic-pytorch":
        continue
      for name, in_shape, out_shape in shapes:
        for dtype in (fdt, idt):
          if dtype == idt and (not antialias or not name.startswith("2d")
                               or (x64 and name != "2d_down")):
            continue
          x = image(np, in_shape, dtype)
          yield (f"resize-{method}-aa{int(antialias)}-{name}-{dtype}",
                 lambda x=x, s=out_shape, m=method, a=antialias: resize(x, s, m, antialias=a))
  # scale_and_translate: (spatial_dims, scale, translation, in shape, out shape)
  sat_specs = (
      ((0,), (0.45,), (-0.8,), (9,), (5,)),
      ((1, 0), (2.2, 0.6), (1.0, -0.25), (5, 6), (4, 10)),
      ((-1, 1), (0.7, 1.3), (0.5, 0.0), (3, 4, 6), (3, 5, 5)),
      ((1, 2), (1.25, 0.8), (-2.0, 3.0), (2, 4, 5, 3), (2, 6, 4, 3)),
  )
  sat_methods = ("linear", "cubic", "lanczos3", "cubic-pytorch", "area")
  for k, (dims, scale, trans, in_shape, out_shape) in enumerate(sat_specs):
    if x64 and k not in (1, 2):
      continue
    for method in sat_methods:
      for antialias in (True, False):
        if x64 and (not antialias or method == "lanczos3"):
          continue
        x = image(np, in_shape, fdt, seed=k + 1)
        yield (f"sat{k}-{method}-aa{int(antialias)}-{fdt}",
               lambda x=x, d=dims, s=scale, t=trans, o=out_shape, m=method, a=antialias:
               sat(x, o, d, jnp.array(s), jnp.array(t), m, antialias=a))
  # integer images through scale_and_translate, and float32 scales on the image
  x_int = image(np, (6, 7), idt, seed=9)
  yield ("sat-int-linear", lambda: sat(x_int, (4, 9), (0, 1), jnp.array([0.6, 1.3]),
                                       jnp.array([0.2, -0.1]), "linear"))
  x = image(np, (6, 7), fdt, seed=10)
  yield ("sat-f32-scale", lambda: sat(x, (8, 5), (0, 1), np.array([1.4, 0.7], np.float32),
                                      np.array([0.1, 0.2], np.float32), "cubic"))
  # identity, size-1 input and output axes
  yield ("resize-identity", lambda: resize(image(np, (3, 4), fdt), (3, 4), "cubic"))
  yield ("resize-size1-up", lambda: resize(image(np, (1, 4), fdt), (5, 4), "linear"))
  yield ("resize-to-size1", lambda: resize(image(np, (6, 4), fdt), (1, 4), "lanczos3"))
