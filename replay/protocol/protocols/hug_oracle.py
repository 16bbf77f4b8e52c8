"""The hug-oracle protocol (``--protocol hug-oracle``): the HUG authors' grasp oracle on our recordings
(:mod:`replay.protocol.oracle_plan`, its settings :class:`replay.results.oracle_fields.OracleFields`), judged by
its off-the-table test (:mod:`replay.protocol.oracle_success`); no shake, no release."""

from __future__ import annotations

from replay.protocol import oracle_success
from replay.protocol.oracle_plan import oracle_config, plan_oracle
from replay.protocol.protocols.base import Protocol, register
from replay.protocol.protocols.counting import lift_counts
from replay.results.protocol_results import OracleResult


@register
class HugOracle(Protocol):
    """Results ``<sequence>.hug-oracle.json``, rows ``oracle_rollouts``."""

    name = "hug-oracle"
    rows_field = "oracle_rollouts"
    csv_suffix = ""
    ablation = True
    sampled = True
    judged_on_lift = True
    result_type = OracleResult
    config_part = "oracle"
    counts = staticmethod(lift_counts)

    def config(self, cfg):
        return oracle_config(cfg)

    def plan(self, rec, coords, mjcf, *, cfg):
        return plan_oracle(rec, coords, cfg)

    def judge(self, rec, plan, scene, *, extent, cfg, trace, poses, metrics):
        """The off-the-table test (``oracle``, and ``lifted`` / ``outcome`` / ``diagnosis`` by it); the object-support
        pair's margin, m: the object's compiled geom margin where the physics keeps the asset's, else 0."""
        got = ((scene.readback or {}).get("object_contact") or {}).get("object_margin") or [0.0]
        return oracle_success.judge(
            plan,
            trace,
            scene.object_vertices,
            support_height=rec.support_height,
            extent=extent,
            metrics=metrics,
            cfg=cfg,
            margin=float(max(got)),
        )
