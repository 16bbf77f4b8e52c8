"""SolverSteel engine: :mod:`.steel` (SteelBatch), its drive, signals and scene builder (:mod:`.steel_scene`)."""
