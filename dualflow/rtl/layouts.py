"""Data layouts shared by the core's blocks."""

from amaranth import unsigned
from amaranth.lib import data

__all__ = ["lane_data"]


def lane_data(lanes: int) -> data.ArrayLayout:
    """One warp-wide value: a 32-bit word per lane (a register-file entry, an operand, a result,
    the addresses or data of a memory access)."""
    return data.ArrayLayout(unsigned(32), lanes)
