import json
import os
import subprocess
import sys

import pytest

from scim_edge import paths
from scim_edge.atomic import atomic_dir
from scim_edge.cli import main
from scim_edge.errors import ConfigError, UserError
from scim_edge.settings import load_settings, save_config


def test_home_follows_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SCIM_EDGE_HOME", str(tmp_path / "h"))
    assert paths.indexes_dir() == (tmp_path / "h" / "indexes").resolve()
    assert paths.models_dir().parent == paths.home()


@pytest.mark.parametrize("kind", ["a file", "blank"])
def test_a_home_that_is_no_folder_is_one_line_saying_so(kind, tmp_path, monkeypatch, capsys):
    """Read as a folder, a file gave "no index installed in FILE/indexes" and spaces a
    folder named by them."""
    where = tmp_path / "notes.txt"
    where.write_text("x")
    monkeypatch.setenv("SCIM_EDGE_HOME", str(where) if kind == "a file" else "   ")
    assert main(["search", "x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert ("names a file, not a folder" if kind == "a file" else "is blank") in err[0]


def test_doctor_reports_a_home_that_is_a_file_as_a_failed_check(tmp_path, monkeypatch, capsys):
    """The diagnostic still diagnoses: the home is one failed check, not an abort."""
    import json

    where = tmp_path / "notes.txt"
    where.write_text("x")
    monkeypatch.setenv("SCIM_EDGE_HOME", str(where))
    main(["doctor", "--json", "--no-network-check"])
    checks = json.loads(capsys.readouterr().out)["checks"]
    home = [c for c in checks if c["name"] == "home dir"]
    assert [c["status"] for c in home] == ["error"]


def test_locate_json(capsys):
    assert main(["locate", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["home"] == os.environ["SCIM_EDGE_HOME"]
    assert out["indexes"].endswith("indexes")


def test_bad_flag_is_one_line_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["locate", "--no-such-flag"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unrecognized arguments" in err


def test_settings_precedence(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[settings]\ntheta = 0.6\nk1 = 4\n")
    s = load_settings({"k1": 5}, config_file=cfg, environ={"SCIM_EDGE_T_MAX": "4"})
    assert (s.theta, s.k1, s.t_max) == (0.6, 5, 4)
    hs = load_settings({"profile": "high-stakes"}, config_file=cfg, environ={})
    assert hs.theta == 0.6  # config's explicit theta wins over the profile's 0.80
    assert hs.weights == (0.15, 0.35, 0.10, 0.30, 0.10)
    assert load_settings({"profile": "efficiency"}, use_config=False, environ={}).t_max == 2


@pytest.mark.parametrize(
    "text, key",
    [("theta = 1.5", "theta"), ("bogus = 1", "bogus"), ("t_max = 0", "t_max"), ("x = [", None)],
)
def test_config_errors_name_the_key(tmp_path, text, key):
    cfg = tmp_path / "c.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_settings(config_file=cfg, environ={})
    if key:
        assert key in str(e.value)
    else:
        assert "TOML" in str(e.value)


@pytest.mark.parametrize(
    "environ, why",
    [
        ({"SCIM_EDGE_K1": "100000000000"}, "setting 'k1' must be at most"),
        ({"SCIM_EDGE_CANDIDATES": "99999999999"}, "setting 'candidates' must be at most"),
        ({"SCIM_EDGE_T_MAX": "1" + "0" * 20}, "setting 't_max' must be at most"),
        ({"SCIM_EDGE_THREADS": "100000"}, "setting 'threads' must be at most"),
    ],
)
def test_a_typo_s_huge_number_is_refused_before_any_search(environ, why):
    """A search asked for 10**11 passages allocates for them all and aborts the process."""
    with pytest.raises(ConfigError) as e:
        load_settings(use_config=False, environ=environ)
    assert why in str(e.value)


@pytest.mark.parametrize(
    "environ, why",
    [
        ({"SCIM_EDGE_WEIGHTS": "nan,0,0,0,1"}, "setting 'weights' must be five non-negative"),
        ({"SCIM_EDGE_HALLUCINATION_WARNING": "abc"}, "'hallucination_warning' has an invalid"),
        ({"SCIM_EDGE_HALLUCINATION_WARNING": "2"}, "'hallucination_warning' must be between"),
        ({"SCIM_EDGE_CRITIC_MIN_FACTUALITY": "5"}, "'critic_min_factuality' must be between"),
    ],
)
def test_values_a_loop_would_choke_on_are_refused(environ, why):
    """NaN weights made Q NaN (and --json print NaN, which is no JSON); a warning level
    kept as text stopped `ask` with a TypeError; a Critic's minimum above 1 rejects all."""
    with pytest.raises(ConfigError) as e:
        load_settings(use_config=False, environ=environ)
    assert why in str(e.value)


def test_a_hallucination_warning_level_is_a_number(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[settings]\nhallucination_warning = 0.5\n")
    assert load_settings(config_file=cfg, environ={}).hallucination_warning == 0.5


def test_threads_a_larger_machine_s_config_asks_for_still_load():
    """The bound of a setting is no machine's: 64 threads load on 2 cores."""
    assert load_settings(use_config=False, environ={"SCIM_EDGE_THREADS": "64"}).threads == 64


def test_threads_from_the_environment_are_a_number():
    assert load_settings(use_config=False, environ={"SCIM_EDGE_THREADS": "2"}).threads == 2


def test_huge_numbers_in_the_config_file_are_refused(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[settings]\nk1 = 1e30\n")
    with pytest.raises(ConfigError, match="setting 'k1' must be at most"):
        load_settings(config_file=cfg, environ={})


def test_save_config_round_trip(tmp_path):
    path = save_config({"theta": 0.75, "loop": "simrag"}, tmp_path / "c.toml")
    s = load_settings(config_file=path, environ={})
    assert s.theta == 0.75 and s.loop == "simrag"


def test_atomic_dir_keeps_old_on_failure(tmp_path):
    target = tmp_path / "idx"
    with atomic_dir(target) as tmp:
        (tmp / "a").write_text("old")
    with pytest.raises(RuntimeError), atomic_dir(target, force=True) as tmp:
        (tmp / "a").write_text("new")
        raise RuntimeError("boom")
    assert (target / "a").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]
    with pytest.raises(UserError):
        with atomic_dir(target):
            pass


def test_console_script_runs():
    r = subprocess.run(
        [sys.executable, "-m", "scim_edge", "locate"], capture_output=True, text=True, check=False
    )
    assert r.returncode == 0 and "indexes" in r.stdout


@pytest.mark.parametrize(
    "change",
    [{"max_iterations": "3"}, {"critic_max_tokens": 2.0}, {"t_max": True}, {"theta": "0.5"}],
)
def test_settings_replace_rejects_wrong_types_with_value_error(change):
    from scim_edge.settings import Settings

    with pytest.raises(ValueError) as e:
        Settings().replace(**change)
    assert next(iter(change)) in str(e.value)


@pytest.mark.parametrize(
    "argv",
    [
        ["models", "bench", "m", "--input-tokens", "100000"],
        ["models", "bench", "m", "--threads", "9999"],
        ["ask", "q", "--threads", "9999"],
        ["ask", "q", "--theta", "1.5"],
        ["eval", "qa.jsonl", "--limit", "0"],
        ["build-index", "dump.xml", "--workers", "100000"],
        ["practice", "--workers", "100000"],
    ],
)
def test_out_of_range_flags_are_one_line_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "must be" in err


@pytest.mark.parametrize("command", ["critic", "models"])
def test_a_command_group_without_its_command_is_one_line_naming_them(command, capsys):
    with pytest.raises(SystemExit) as e:
        main([command])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "choose a command: " in err[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["build-index", "dump.xml", "--out", ""],
        ["eval", "qa.jsonl", "--out", ""],
        ["unbundle", ""],
        ["unbundle", "b.tar", "--home", ""],
        ["score", "--question", "q", "--answer", "a", "--passages", ""],
    ],
    ids=["build-index --out", "eval --out", "unbundle FILE", "unbundle --home", "score"],
)
def test_an_empty_path_is_refused_not_read_as_the_current_folder(argv, capsys):
    """Path("") is ".": --out "" wrote into the current folder and --home "" installed there."""
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert "must not be empty" in capsys.readouterr().err


def test_main_restores_the_sigterm_handler_it_installs():
    import signal

    before = signal.getsignal(signal.SIGTERM)
    assert main(["locate"]) == 0
    assert signal.getsignal(signal.SIGTERM) is before
