"""`python -m xjax.tools.launch`, running tiny child scripts (no xjax in the children)."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from xjax.tools import launch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT_S = 60


def _pids_running(pids):
  """Those of `pids` still alive (not zombies)."""
  alive = []
  for pid in pids:
    try:
      with open(f"/proc/{pid}/stat") as f:
        if f.read().rsplit(")", 1)[1].split()[0] != "Z":
          alive.append(pid)
    except (FileNotFoundError, ProcessLookupError, IndexError):
      pass
  return alive


def _kill_ours(pid_dir):
  """SIGKILL the children recorded in `pid_dir` whose command line is still our script."""
  if not os.path.isdir(pid_dir):
    return
  for name in os.listdir(pid_dir):
    pid = int(name)
    try:
      with open(f"/proc/{pid}/cmdline", "rb") as f:
        if str(pid_dir.parent).encode() in f.read():
          os.kill(pid, signal.SIGKILL)
    except (FileNotFoundError, ProcessLookupError):
      pass


@pytest.fixture
def run_launcher(tmp_path):
  """Runs the launcher in a subprocess with a hard timeout; kills everything left by PID."""
  pid_dir = tmp_path / "pids"
  pid_dir.mkdir()
  launchers = []

  def run(*argv, env=None, script=None, timeout=TIMEOUT_S):
    args = [sys.executable, "-m", "xjax.tools.launch", *argv]
    full_env = dict(os.environ, PID_DIR=str(pid_dir))
    for k in ("JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS", "XLA_FLAGS"):
      full_env.pop(k, None)
    full_env.update(env or {})
    p = subprocess.Popen(args, cwd=ROOT, env=full_env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    launchers.append(p)
    start = time.monotonic()
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err, time.monotonic() - start

  yield run
  for p in launchers:
    if p.poll() is None:
      p.kill()
      p.wait()
  _kill_ours(pid_dir)


def write(tmp_path, name, body):
  path = tmp_path / name
  path.write_text("import os, sys, time, signal\n"
                  "open(os.path.join(os.environ['PID_DIR'], str(os.getpid())), 'w').close()\n"
                  + textwrap.dedent(body))
  return str(path)


def child_pids(tmp_path):
  return [int(n) for n in os.listdir(tmp_path / "pids")]


@pytest.mark.slow
def test_children_see_their_environment(tmp_path, run_launcher):
  script = write(tmp_path, "show.py", """
      print(os.environ['JAX_PROCESS_ID'], os.environ['JAX_NUM_PROCESSES'],
            os.environ['JAX_COORDINATOR_ADDRESS'], os.environ.get('XLA_FLAGS'), sys.argv[1:])
      """)
  code, out, err, _ = run_launcher("-n", "3", "--port", "23456", script, "a", "--b")
  assert code == 0, err
  lines = sorted(out.splitlines())
  assert lines == [f"[{i}] {i} 3 127.0.0.1:23456 None ['a', '--b']" for i in range(3)]


@pytest.mark.slow
def test_devices_per_process_replaces_device_count_flag(tmp_path, run_launcher):
  script = write(tmp_path, "flags.py", "print(os.environ['XLA_FLAGS'])\n")
  code, out, err, _ = run_launcher(
      "-n", "2", "--devices-per-process", "3", script,
      env={"XLA_FLAGS": "--xla_foo=1 --xla_force_host_platform_device_count=8"})
  assert code == 0, err
  assert sorted(out.splitlines()) == [
      f"[{i}] --xla_foo=1 --xla_force_host_platform_device_count=3" for i in range(2)]


@pytest.mark.slow
def test_free_port_is_chosen(tmp_path, run_launcher):
  script = write(tmp_path, "addr.py", "print(os.environ['JAX_COORDINATOR_ADDRESS'])\n")
  code, out, err, _ = run_launcher("-n", "2", script)
  assert code == 0, err
  addresses = {line.split(" ", 1)[1] for line in out.splitlines()}
  assert len(addresses) == 1
  host, port = addresses.pop().split(":")
  assert host == "127.0.0.1" and 0 < int(port) < 65536


@pytest.mark.slow
def test_output_prefixes_stdout_and_stderr(tmp_path, run_launcher):
  script = write(tmp_path, "talk.py", """
      i = os.environ['JAX_PROCESS_ID']
      print('out one'); print('out two', i)
      print('err', i, file=sys.stderr)
      sys.stdout.write('no newline')
      """)
  code, out, err, _ = run_launcher("-n", "2", script)
  assert code == 0, err
  for i in range(2):
    mine = [l for l in out.splitlines() if l.startswith(f"[{i}] ")]
    assert mine == [f"[{i}] out one", f"[{i}] out two {i}", f"[{i}] no newline"]
    assert f"[{i}] err {i}" in err.splitlines()


@pytest.mark.slow
def test_module_form(tmp_path, run_launcher):
  (tmp_path / "mymod.py").write_text(
      "import os, sys\nprint('mod', os.environ['JAX_PROCESS_ID'], sys.argv[1:])\n")
  code, out, err, _ = run_launcher("-n", "2", "-m", "mymod", "x",
                                   env={"PYTHONPATH": str(tmp_path)})
  assert code == 0, err
  assert sorted(out.splitlines()) == ["[0] mod 0 ['x']", "[1] mod 1 ['x']"]


@pytest.mark.slow
def test_failing_child_stops_the_others(tmp_path, run_launcher):
  script = write(tmp_path, "fail.py", """
      if os.environ['JAX_PROCESS_ID'] == '0':
        time.sleep(0.5)
        sys.exit(3)
      print('sleeping', flush=True)
      time.sleep(1000)
      """)
  code, out, err, elapsed = run_launcher("-n", "2", script)
  assert code == 3
  assert elapsed < 20
  assert "[1] sleeping" in out
  assert "process 0 exited with code 3" in err
  assert len(child_pids(tmp_path)) == 2
  assert _pids_running(child_pids(tmp_path)) == []


@pytest.mark.slow
def test_child_ignoring_sigterm_is_killed_after_grace(tmp_path, run_launcher):
  script = write(tmp_path, "stubborn.py", """
      if os.environ['JAX_PROCESS_ID'] == '1':
        sys.exit(5)
      signal.signal(signal.SIGTERM, signal.SIG_IGN)
      time.sleep(1000)
      """)
  code, _, _, elapsed = run_launcher("-n", "2", "--grace", "0.5", script)
  assert code == 5
  assert elapsed < 20
  assert _pids_running(child_pids(tmp_path)) == []


@pytest.mark.slow
def test_child_killed_by_signal(tmp_path, run_launcher):
  script = write(tmp_path, "killed.py", "os.kill(os.getpid(), signal.SIGKILL)\n")
  code, _, _, _ = run_launcher("-n", "1", script)
  assert code == 128 + signal.SIGKILL


@pytest.mark.slow
def test_timeout_exits_124(tmp_path, run_launcher):
  script = write(tmp_path, "forever.py", "time.sleep(1000)\n")
  code, _, err, elapsed = run_launcher("-n", "2", "--timeout", "1", script)
  assert code == 124
  assert 1 <= elapsed < 20
  assert "timed out after 1 s" in err
  assert len(child_pids(tmp_path)) == 2
  assert _pids_running(child_pids(tmp_path)) == []


@pytest.mark.slow
@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_to_launcher_stops_children(tmp_path, signum, code):
  pid_dir = tmp_path / "pids"
  pid_dir.mkdir()
  script = write(tmp_path, "forever.py", "print('up', flush=True)\ntime.sleep(1000)\n")
  # SIGINT is ignored in processes started in the background by a shell; undo that.
  p = subprocess.Popen([sys.executable, "-m", "xjax.tools.launch", "-n", "2", script], cwd=ROOT,
                       env=dict(os.environ, PID_DIR=str(pid_dir)), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
  try:
    deadline = time.monotonic() + TIMEOUT_S
    while len(os.listdir(pid_dir)) < 2 and time.monotonic() < deadline:
      time.sleep(0.05)
    assert len(os.listdir(pid_dir)) == 2
    time.sleep(0.2)  # let the launcher reach its wait loop
    p.send_signal(signum)
    _, err = p.communicate(timeout=TIMEOUT_S)
    assert p.returncode == code, err
    assert "stopping all processes" in err
    assert _pids_running(child_pids(tmp_path)) == []
  finally:
    if p.poll() is None:
      p.kill()
      p.wait()
    _kill_ours(pid_dir)


def test_all_succeed_returns_zero_in_process(tmp_path, capfdbinary, monkeypatch):
  pid_dir = tmp_path / "pids"
  pid_dir.mkdir()
  monkeypatch.setenv("PID_DIR", str(pid_dir))
  script = write(tmp_path, "ok.py", "print('ok')\n")
  try:
    assert launch.main(["-n", "2", script]) == 0
  finally:
    _kill_ours(pid_dir)
  out = capfdbinary.readouterr().out.decode()
  assert sorted(out.splitlines()) == ["[0] ok", "[1] ok"]


def test_child_environment():
  env = launch.child_environment({"A": "1", "XLA_FLAGS": "--xla_force_host_platform_device_count=8"},
                                 coordinator_address="127.0.0.1:5", num_processes=4, process_id=2,
                                 devices_per_process=None)
  assert env["A"] == "1" and env["JAX_PROCESS_ID"] == "2" and env["JAX_NUM_PROCESSES"] == "4"
  assert env["JAX_COORDINATOR_ADDRESS"] == "127.0.0.1:5"
  assert env["XLA_FLAGS"] == "--xla_force_host_platform_device_count=8"
  env = launch.child_environment({}, coordinator_address="h:1", num_processes=1, process_id=0,
                                 devices_per_process=2)
  assert env["XLA_FLAGS"] == "--xla_force_host_platform_device_count=2"


@pytest.mark.parametrize("argv", [[], ["-n", "2"], ["-n", "0", "x.py"], ["x.py"],
                                  ["-n", "2", "--devices-per-process", "0", "x.py"],
                                  ["-n", "2", "-m"]])
def test_bad_arguments(argv):
  with pytest.raises(SystemExit) as e:
    launch.main(argv)
  assert e.value.code == 2


def test_split_argv():
  assert launch._split_argv(["-n", "2", "--port=5", "s.py", "-n", "9"]) == (
      ["-n", "2", "--port=5"], ["s.py", "-n", "9"])
  assert launch._split_argv(["-n", "2", "-m", "pkg.mod", "--x"]) == (
      ["-n", "2"], ["-m", "pkg.mod", "--x"])
  assert launch._split_argv(["-n", "2", "--", "-weird.py"]) == (["-n", "2"], ["-weird.py"])
