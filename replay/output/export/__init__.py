"""Exports of one rollout for tools outside this project: plain MuJoCo (:mod:`.mjcf`, with a
standalone replay script, :mod:`.standalone`), a USD stage (:mod:`.usd`) and a Rerun
recording (:mod:`.rrd`); :func:`replay.output.export.run.export_rollout` picks the rollout (:mod:`.source`) and writes
one."""
