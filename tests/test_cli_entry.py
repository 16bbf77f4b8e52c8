"""The ``grasp-replay`` console command dispatches to the scripts."""

from __future__ import annotations

import pytest

from replay import cli


def test_subcommands_run_their_scripts(capsys):
    for cmd in (["study"], ["sweep"], ["render"], ["report"], ["fetch"], ["validate", "pose-mapping"],
                ["validate", "object-frame"]):
        with pytest.raises(SystemExit) as e:
            cli.main([*cmd, "--help"])
        assert e.value.code == 0
        assert f"usage: grasp-replay {' '.join(cmd)}" in capsys.readouterr().out


def test_bad_subcommand_is_a_usage_error(capsys):
    assert cli.main(["bogus"]) == cli.EXIT_USAGE
    assert cli.main(["validate", "nothing"]) == cli.EXIT_USAGE
    assert "pose-mapping" in capsys.readouterr().err
