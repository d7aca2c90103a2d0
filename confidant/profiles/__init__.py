"""The unified user profile (seed 002): one document per user, typed sections, atomic writes."""

from confidant.profiles.draft import ProfileDraft
from confidant.profiles.model import PROFILE_SECTIONS, Profile, ProfilePatch
from confidant.profiles.ops import AppendOp, MergeOp, ProfileOp, SetOp, apply_ops
from confidant.profiles.rules import ProfileRuleError

__all__ = [
    "PROFILE_SECTIONS",
    "AppendOp",
    "MergeOp",
    "Profile",
    "ProfileDraft",
    "ProfileOp",
    "ProfilePatch",
    "ProfileRuleError",
    "SetOp",
    "apply_ops",
]
