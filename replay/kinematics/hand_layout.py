"""The imported manosim hand's index layout: one FREE root joint (``mano_body_0``, xyzw) and a ball joint per finger
bone (``mano_joint_1..15``: 1-3 index, 4-6 middle, 7-9 pinky, 10-12 ring, 13-15 thumb, proximal first)."""

from __future__ import annotations

from dataclasses import dataclass

from replay.errors import SceneError

#: Newton FREE joint: position m + xyzw quaternion; linear m/s + angular rad/s
FREE_COORDS, FREE_DOFS = 7, 6
#: Newton BALL joint: xyzw quaternion; angular rad/s
BALL_COORDS, BALL_DOFS = 4, 3


@dataclass(frozen=True)
class HandLayout:
    """Counts and offsets of a free root and ``finger_joints`` ball joints; ``fingertip_bodies``: distal bones."""

    finger_joints: int = 15
    fingertip_bodies: tuple[int, ...] = (3, 6, 9, 12, 15)

    @property
    def bodies(self) -> int:
        """Root plus one per finger joint."""
        return 1 + self.finger_joints

    @property
    def body_names(self) -> tuple[str, ...]:
        """Newton body order."""
        return tuple(f"mano_body_{i}" for i in range(self.bodies))

    @property
    def coords(self) -> int:
        """``joint_q`` entries (manosim: 67)."""
        return FREE_COORDS + BALL_COORDS * self.finger_joints

    @property
    def finger_coord_start(self) -> int:
        """Relative to the hand's first (7)."""
        return FREE_COORDS

    @property
    def dofs(self) -> int:
        """``joint_qd`` entries (manosim: 51)."""
        return FREE_DOFS + BALL_DOFS * self.finger_joints

    @property
    def finger_dofs(self) -> int:
        """Three per ball joint (manosim: 45), after the free joint's six."""
        return BALL_DOFS * self.finger_joints

    @property
    def finger_dof_start(self) -> int:
        """Relative to the hand's first (6)."""
        return FREE_DOFS

    @classmethod
    def from_import(
        cls, source: str, joint_types: list[str], body_names: list[str], *, coord_count: int, dof_count: int
    ) -> HandLayout:
        """The checked layout of an imported hand; SceneError unless a FREE joint, then BALL joints, on bodies."""
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
    """``(..., 67)`` -> ``(..., 15, 4)`` finger quaternions, xyzw (a view where numpy can)."""
    lay = MANOSIM_HAND
    return coords[..., lay.finger_coord_start : lay.coords].reshape(*coords.shape[:-1], lay.finger_joints, BALL_COORDS)


#: the manosim hand every study simulates (checked against each import by :meth:`HandLayout.from_import`)
MANOSIM_HAND = HandLayout()
