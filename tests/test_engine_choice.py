"""The engine as one typed choice (replay.results.engine_choice): the older three fields read as it, the command
line's --solver / --device over the config file, each choice's class in the factory. No data needed."""

from __future__ import annotations

import json

import pytest

from replay.config import ReplayConfig
from replay.errors import DataError
from replay.results.engine_choice import EngineChoice, engine_from_flags, from_legacy, to_legacy

#: every (solver_backend, engine, device) an older config could run, and the engine and Warp device it ran on
LEGACY = {
    ("mujoco", "direct", "cpu"): (EngineChoice.MUJOCO_C, "cpu"),
    ("mujoco", "direct", "cuda"): (EngineChoice.MUJOCO_WARP, "cuda"),
    ("mujoco", "direct", "warp-cpu"): (EngineChoice.MUJOCO_WARP, "cpu"),
    ("mujoco", "newton", "cpu"): (EngineChoice.NEWTON, "cpu"),
    ("mujoco", "newton", "cuda"): (EngineChoice.NEWTON, "cuda"),
    ("steel", "direct", "cpu"): (EngineChoice.STEEL, "cpu"),
    ("steel", "direct", "cuda"): (EngineChoice.STEEL, "cuda"),
}


def test_older_fields_map_to_one_engine_and_back():
    for old, new in LEGACY.items():
        assert from_legacy(*old) == new, old
        assert from_legacy(*to_legacy(*new)) == new
    with pytest.raises(DataError, match="config.device"):
        from_legacy("mujoco", "newton", "warp-cpu")
    with pytest.raises(DataError, match="config.engine"):
        from_legacy("bullet", "direct", "cpu")


def test_an_older_config_file_still_reads(tmp_path):
    doc = ReplayConfig().to_dict()
    assert doc["engine"] == "mujoco-c" and "solver_backend" not in doc
    for (backend, engine, device), (want, dev) in LEGACY.items():
        old = dict(doc, solver_backend=backend, engine=engine, device=device)
        if backend == "steel":
            old["finger_drive"] = "quat"
        path = tmp_path / "study.json"
        path.write_text(json.dumps({"config": old}))
        cfg = ReplayConfig.load(path)
        assert (cfg.engine, cfg.device) == (want, dev), (backend, engine, device)
        assert ReplayConfig.from_dict(cfg.to_dict()) == cfg  # and writes itself in the new form
    with pytest.raises(DataError, match="study.json"):
        path.write_text(json.dumps({"config": dict(doc, engine="newton", device="warp-cpu")}))
        ReplayConfig.load(path)


def test_only_mujoco_c_and_the_reference_on_cpu_compile_mujoco_c():
    """``use_mujoco_cpu`` of a SolverMuJoCo the engine builds: a caller that wants MuJoCo C for a probe (Steel's
    flutter records, the gripper fixture) names the engine mujoco-c, not the device alone."""
    got = {(e, d): e.mujoco_cpu(d) for e in EngineChoice for d in ("cpu", "cuda")}
    assert {k for k, v in got.items() if v} == {(EngineChoice.MUJOCO_C, "cpu"), (EngineChoice.NEWTON, "cpu")}


def test_an_engine_is_a_member_not_a_name():
    assert ReplayConfig(engine="newton").engine is EngineChoice.NEWTON
    with pytest.raises(DataError, match="config.engine"):
        ReplayConfig(engine="direct2")
    with pytest.raises(DataError, match="config.device"):  # MuJoCo C steps on the CPU only
        ReplayConfig(device="cuda").validate()
    ReplayConfig(engine="mujoco-warp", device="cuda").validate()


@pytest.mark.parametrize(
    "engine, device, solver, cli_device, want",
    [
        ("mujoco-c", "cpu", None, None, ("mujoco-c", "cpu")),
        ("mujoco-c", "cpu", None, "cuda", ("mujoco-warp", "cuda")),  # --device cuda: mujoco-warp on the GPU
        ("mujoco-warp", "cuda", None, "cpu", ("mujoco-c", "cpu")),
        ("mujoco-c", "cpu", "steel", None, ("steel", "cpu")),
        ("steel", "cpu", None, "cuda", ("steel", "cuda")),
        ("steel", "cuda", "mujoco", None, ("mujoco-warp", "cuda")),  # --solver mujoco on the config's device
        ("newton", "cpu", None, "cuda", ("newton", "cuda")),
        ("newton", "cuda", "steel", None, ("steel", "cuda")),
    ],
)
def test_the_command_line_goes_over_the_config_file(engine, device, solver, cli_device, want):
    got = engine_from_flags(EngineChoice(engine), device, solver=solver, cli_device=cli_device)
    assert (got[0].value, got[1]) == want


def test_run_study_flags_set_the_engine(tmp_path):
    from replay.commands.run_study import build_parser, config_from_args

    path = tmp_path / "config.json"
    ReplayConfig(engine="newton").save(path)
    a = build_parser().parse_args(["--dataset", "grab", "--config", str(path), "--solver", "steel"])
    cfg = config_from_args(a)
    assert cfg.engine is EngineChoice.STEEL and cfg.finger_drive == "quat"
    a = build_parser().parse_args(["--dataset", "grab", "--config", str(path)])
    assert config_from_args(a).engine is EngineChoice.NEWTON


def test_the_factory_knows_every_engine():
    from replay.sim.engine.contract import Engine
    from replay.sim.engine.factory import ENGINES, capabilities_of

    assert set(ENGINES) == set(EngineChoice)
    names = {}
    for e in EngineChoice:
        cls = ENGINES[e]()
        assert issubclass(cls, Engine)
        names[e] = capabilities_of(ReplayConfig(engine=e, finger_drive="quat")).name
    assert names == {EngineChoice.MUJOCO_C: "direct", EngineChoice.MUJOCO_WARP: "warp", EngineChoice.NEWTON: "newton",
                     EngineChoice.STEEL: "steel"}
