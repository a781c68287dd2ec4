"""Aux stage: every frame, small, forwarded in block order over TCP to a change-detector process."""
