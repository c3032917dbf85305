"""The main example, examples/mlp_digits.py: its bundled data and a short training run."""
import hashlib
import importlib.util
import pathlib
import sys

import numpy as np
import pytest

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mlp_digits.py"
DIGITS_SHA256 = "87ff0c9e40dc7e2c0e34e7257799c2e3f3aec1a016363bb11cad869ec428a826"


@pytest.fixture(scope="module")
def mlp_digits():
  spec = importlib.util.spec_from_file_location("mlp_digits", EXAMPLE)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_digits_file_has_expected_shapes_dtypes_and_contents(mlp_digits):
  images, labels = mlp_digits.load_digits()
  assert images.shape == (1797, 8, 8) and images.dtype == np.uint8
  assert labels.shape == (1797,) and labels.dtype == np.uint8
  assert images.min() == 0 and images.max() == 16
  assert np.bincount(labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
  assert hashlib.sha256(images.tobytes() + labels.tobytes()).hexdigest() == DIGITS_SHA256


def test_train_test_split_is_fixed_disjoint_and_scaled(mlp_digits):
  images, labels = mlp_digits.load_digits()
  (x_train, y_train), (x_test, y_test) = mlp_digits.train_test_split(images, labels)
  assert x_train.shape == (1438, 64) and x_test.shape == (359, 64)
  assert x_train.dtype == np.float32 and y_train.dtype == np.int32
  assert 0 <= x_train.min() and x_train.max() == 1
  rows = {row.tobytes() for row in x_train}
  assert not any(row.tobytes() in rows for row in x_test)
  (x_again, _), _ = mlp_digits.train_test_split(images, labels)
  np.testing.assert_array_equal(x_train, x_again)


def test_mlp_digits_learns_in_a_few_epochs(mlp_digits):
  result = mlp_digits.main(["--epochs", "5", "--seed", "0", "--quiet"])
  history = result["history"]
  assert history["epoch"] == [1, 2, 3, 4, 5]
  assert history["loss"][-1] < history["loss"][0]
  assert result["test_accuracy"] >= 0.9, history


def test_mlp_digits_prints_progress_per_epoch(mlp_digits, capsys):
  mlp_digits.main(["--epochs", "2", "--batch-size", "128", "--hidden", "32"])
  out = capsys.readouterr().out
  assert "epoch   1  loss" in out and "epoch   2  loss" in out
  assert "test accuracy" in out and out.splitlines()[-1].startswith("final test accuracy")


def test_plot_without_matplotlib_says_so_and_continues(mlp_digits, monkeypatch, capsys, tmp_path):
  monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
  history = {"epoch": [1], "loss": [1.0], "train_accuracy": [0.5], "test_accuracy": [0.5]}
  mlp_digits.plot_history(history, tmp_path / "curves.png", "title")
  assert "matplotlib is not installed" in capsys.readouterr().out
  assert not (tmp_path / "curves.png").exists()
