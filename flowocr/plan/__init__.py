"""Block planning: which frames each decoder lane decodes, and where it seeks to."""

from flowocr.plan.blocks import Block, End, Keyframe, check_tiling, plan_blocks

__all__ = ["Block", "End", "Keyframe", "check_tiling", "plan_blocks"]
