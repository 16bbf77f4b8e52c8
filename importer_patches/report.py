"""The import report returned by :func:`importer_patches.add_mjcf`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

JOINT_Q_LAYOUT = (
    "Newton coordinate order (SolverMuJoCo converts to MuJoCo's). FREE joint: joint_q = [x, y, z, qx, qy, qz, qw] "
    "(m; quaternion xyzw, body-origin pose in the parent frame = world for an imported root; MuJoCo qpos is "
    "[x, y, z, qw, qx, qy, qz]); joint_qd = [vx, vy, vz, wx, wy, wz]: COM linear velocity (m/s) and angular "
    "velocity (rad/s), both in the world frame (MuJoCo qvel: body-origin velocity in world, angular velocity "
    "in the body frame); joint_f = [fx, fy, fz, tx, ty, tz]: force at the COM and torque, world frame (N, N·m), "
    "applied through MuJoCo xfrc_applied. BALL joint: joint_q = [qx, qy, qz, qw] (xyzw; MuJoCo wxyz), 3 DOFs; "
    "Newton's joint_qd/joint_f are in the joint's parent frame, MuJoCo's in the child (local) frame; "
    "SolverMuJoCo rotates between them (identical at the identity pose). Per-DOF joint_target_ke/kd of a "
    "BALL joint become MuJoCo ball actuators with gear e_x, e_y, e_z (local axes)."
)


@dataclass
class ImportReport:
    """What :func:`~importer_patches.add_mjcf` imported and what each patch changed.

    Index fields (``*_start``, ``dofs``, ``dof_start``) are absolute builder indices.
    Per-DOF lists cover the imported DOFs ``dof_start .. dof_start + dof_count - 1``.
    Units: damping N·s/m or N·m·s/rad; armature kg or kg·m²; ke N/m or N·m/rad;
    kd N·s/m or N·m·s/rad.

    Attributes:
        path: the MJCF file.
        newton_version: installed Newton.
        patches: patch name -> enabled.
        changes: patch name -> human-readable lines of what it changed.
        warnings: messages of warnings issued during import.
        body_start, body_count, joint_start, joint_count, dof_start, dof_count,
        coord_start, coord_count, shape_start, shape_count: ranges added to the builder.
        body_names: imported bodies, builder order (MJCF names).
        joint_names: imported Newton joints (short labels), builder order.
        joint_types: ``FREE``, ``BALL``, ... per imported joint.
        joint_type_counts: type name -> count.
        joint_dof_starts / joint_coord_starts: joint name -> first DOF / coord index.
        finger_joint_names: imported joints other than free joints (the hand's fingers).
        finger_dof_starts: finger joint name -> first DOF index.
        dof_damping, dof_armature, dof_friction, dof_target_ke, dof_target_kd: per DOF.
        dof_target_mode: per DOF, ``JointTargetMode`` names.
        actuators: every authored actuator (``ActuatorSpec.as_dict``), MJCF order.
        actuator_dof_map: actuator name -> builder DOF indices it drives.
        mjcf_joint_dofs: authored MJCF joint name -> builder DOF indices.
        free_joint_actuators: the actuators aimed at free joints (not imported when the
            ``free_actuators`` patch is on).
        wrist_gains: for the first free joint: ``joint`` (name), ``joint_index``,
            ``dof_start``, ``coord_start``, ``kp`` and ``kd`` (6 floats each, order
            tx, ty, tz, rx, ry, rz; N/m, N·m/rad and N·s/m, N·m·s/rad), ``lin_axes_world``
            (3x3: rows = authored slide axes in the world frame at import), ``frames``
            (how the gains act). Empty dict when the import has no free joint.
        imported_actuator_count: actuators Newton received.
        joint_q_layout: Newton's coordinate/velocity order, see ``JOINT_Q_LAYOUT``.
    """

    path: str
    newton_version: str
    patches: dict[str, bool]
    changes: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    body_start: int = 0
    body_count: int = 0
    joint_start: int = 0
    joint_count: int = 0
    dof_start: int = 0
    dof_count: int = 0
    coord_start: int = 0
    coord_count: int = 0
    shape_start: int = 0
    shape_count: int = 0
    body_names: list[str] = field(default_factory=list)
    joint_names: list[str] = field(default_factory=list)
    joint_types: list[str] = field(default_factory=list)
    joint_type_counts: dict[str, int] = field(default_factory=dict)
    joint_dof_starts: dict[str, int] = field(default_factory=dict)
    joint_coord_starts: dict[str, int] = field(default_factory=dict)
    finger_joint_names: list[str] = field(default_factory=list)
    finger_dof_starts: dict[str, int] = field(default_factory=dict)
    dof_damping: list[float] = field(default_factory=list)
    dof_armature: list[float] = field(default_factory=list)
    dof_friction: list[float] = field(default_factory=list)
    dof_target_ke: list[float] = field(default_factory=list)
    dof_target_kd: list[float] = field(default_factory=list)
    dof_target_mode: list[str] = field(default_factory=list)
    actuators: list[dict] = field(default_factory=list)
    actuator_dof_map: dict[str, list[int]] = field(default_factory=dict)
    mjcf_joint_dofs: dict[str, list[int]] = field(default_factory=dict)
    free_joint_actuators: list[dict] = field(default_factory=list)
    wrist_gains: dict = field(default_factory=dict)
    imported_actuator_count: int = 0
    joint_q_layout: str = JOINT_Q_LAYOUT

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)
