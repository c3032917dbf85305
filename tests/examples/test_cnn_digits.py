"""The CNN example, examples/cnn_digits.py: shapes, and a full default run to its accuracy."""
import importlib.util
import pathlib

import numpy as np
import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "cnn_digits.py"


@pytest.fixture(scope="module")
def cnn_digits():
  spec = importlib.util.spec_from_file_location("cnn_digits", EXAMPLE)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  module.use_backend("xjax")
  return module


def test_images_keep_the_mlp_split_as_nhwc(cnn_digits):
  (x_train, y_train), (x_test, y_test) = cnn_digits.load_images()
  assert x_train.shape == (1438, 8, 8, 1) and x_test.shape == (359, 8, 8, 1)
  assert x_train.dtype == np.float32 and y_train.dtype == np.int32


def test_predict_shapes(cnn_digits):
  import xjax
  params = cnn_digits.init_params(xjax.random.key(0))
  assert params["conv1"]["w"].shape == (3, 3, 1, 16) and params["dense"]["w"].shape == (512, 128)
  logits = cnn_digits.predict(params, np.zeros((5, 8, 8, 1), np.float32))
  assert logits.shape == (5, 10)


def test_cnn_digits_reaches_its_accuracy(cnn_digits, capsys):
  result = cnn_digits.main(["--seed", "0"])
  history = result["history"]
  assert history["epoch"] == list(range(1, 16))
  assert history["loss"][-1] < history["loss"][0] / 10
  assert result["test_accuracy"] >= 0.98, history
  assert capsys.readouterr().out.splitlines()[-1].startswith("final test accuracy")
