"""The simulated hand's index layout: how many bodies, joints, coordinates and DOFs the
imported manosim hand has, and where each part sits in Newton's arrays.

manosim's MJCF (github.com/KevinyWu/manosim, ``assets/*/mano_*hand/*.xml``) has one root
body ``mano_body_0`` with three wrist slides and a ball joint (imported as one FREE joint
by :mod:`importer_patches`) and one ball joint per MANO finger bone: bodies
``mano_body_1..15``, joints ``mano_joint_1..15``, in MANO's bone order (1-3 index, 4-6
middle, 7-9 pinky, 10-12 ring, 13-15 thumb; each chain proximal to distal).

Newton ``joint_q`` of the hand (``coords``): ``[0:3]`` free-joint position (m, world),
``[3:7]`` free-joint rotation (quaternion **xyzw**), then four coordinates (xyzw) per
ball joint. ``joint_qd`` (``dofs``): six for the free joint (linear m/s, angular rad/s),
then three per ball joint (rad/s).

Hand coordinates between recorded frames: :func:`replay.kinematics.coords_interp.interp_coords`.

:meth:`HandLayout.from_import` derives the layout from what was imported and refuses a
hand that is not a free joint plus ball joints; every count in the package comes from
:data:`MANOSIM_HAND` (the layout the importer is checked against) rather than a literal.
"""

from __future__ import annotations

from dataclasses import dataclass

from replay.errors import SceneError

#: coordinates and DOFs of Newton's FREE joint (position + xyzw quaternion; linear + angular).
FREE_COORDS, FREE_DOFS = 7, 6
#: coordinates and DOFs of a BALL joint (xyzw quaternion; angular velocity).
BALL_COORDS, BALL_DOFS = 4, 3


@dataclass(frozen=True)
class HandLayout:
    """Counts and offsets of a hand with one free root joint and ``finger_joints`` ball joints.

    Attributes:
        finger_joints: ball joints (manosim: 15, one per MANO finger bone).
        fingertip_bodies: indices into :attr:`body_names` of each finger's distal bone
            (manosim: index, middle, pinky, ring, thumb tips: bodies 3, 6, 9, 12, 15).
    """

    finger_joints: int = 15
    fingertip_bodies: tuple[int, ...] = (3, 6, 9, 12, 15)

    @property
    def bodies(self) -> int:
        """Bodies: the root (palm) and one per finger joint."""
        return 1 + self.finger_joints

    @property
    def body_names(self) -> tuple[str, ...]:
        """manosim body names, Newton body order (``mano_body_0`` is the root)."""
        return tuple(f"mano_body_{i}" for i in range(self.bodies))

    @property
    def coords(self) -> int:
        """Newton ``joint_q`` entries of the hand (manosim: 67)."""
        return FREE_COORDS + BALL_COORDS * self.finger_joints

    @property
    def finger_coord_start(self) -> int:
        """First finger coordinate, relative to the hand's first (7)."""
        return FREE_COORDS

    @property
    def dofs(self) -> int:
        """Newton ``joint_qd`` entries of the hand (manosim: 51)."""
        return FREE_DOFS + BALL_DOFS * self.finger_joints

    @property
    def finger_dofs(self) -> int:
        """Finger DOFs, three per ball joint (manosim: 45), after the free joint's six."""
        return BALL_DOFS * self.finger_joints

    @property
    def finger_dof_start(self) -> int:
        """First finger DOF, relative to the hand's first (6)."""
        return FREE_DOFS

    @classmethod
    def from_import(
        cls, source: str, joint_types: list[str], body_names: list[str], coord_count: int, dof_count: int
    ) -> HandLayout:
        """The layout of an imported hand, checked.

        Args:
            source: the MJCF, for messages.
            joint_types: Newton joint type names of the imported joints, builder order
                (``"FREE"``, ``"BALL"``, ...; as in ``ImportReport.joint_types``).
            body_names: imported body names (MJCF names, builder order).
            coord_count, dof_count: Newton coordinates and DOFs the import added.

        Raises:
            SceneError: not one FREE joint followed by BALL joints, body names not
                ``mano_body_0..n``, or counts that do not add up.
        """
        kinds = [str(t).rsplit(".", 1)[-1].upper() for t in joint_types]
        if not kinds or kinds[0] != "FREE" or any(k != "BALL" for k in kinds[1:]):
            raise SceneError(f"{source}: expected 1 free joint then ball joints, got {kinds}")
        lay = cls(finger_joints=len(kinds) - 1)
        if tuple(body_names) != lay.body_names:
            raise SceneError(f"{source}: hand bodies {list(body_names)} are not {list(lay.body_names)}")
        if (coord_count, dof_count) != (lay.coords, lay.dofs):
            raise SceneError(
                f"{source}: hand has {coord_count} coords and {dof_count} DOFs, "
                f"expected {lay.coords} and {lay.dofs} for {lay.finger_joints} ball joints"
            )
        if max(lay.fingertip_bodies) >= lay.bodies:
            raise SceneError(f"{source}: {lay.bodies} bodies, too few for the fingertips {lay.fingertip_bodies}")
        return lay


def finger_quats(coords):
    """The finger joints' quaternions of hand coordinates: ``(..., coords)`` -> ``(..., finger_joints, 4)``
    xyzw (a view where numpy can), for the :data:`MANOSIM_HAND` layout."""
    lay = MANOSIM_HAND
    return coords[..., lay.finger_coord_start : lay.coords].reshape(*coords.shape[:-1], lay.finger_joints, BALL_COORDS)


#: the manosim hand every study simulates (checked against each import by
#: :meth:`HandLayout.from_import` in :func:`replay.sim.world_builder.add_replay_world`).
MANOSIM_HAND = HandLayout()
