"""Guided protocols as data (YAML per skill), run by a routing layer around a generic agent."""

from agents.protocols.engine import ProtocolRunner, Status
from agents.protocols.model import ProtocolSpec, StepSpec, load_protocol
from agents.protocols.progress import PROGRESS_STATE_KEY, protocol_progress

__all__ = [
    "PROGRESS_STATE_KEY",
    "ProtocolRunner",
    "ProtocolSpec",
    "Status",
    "StepSpec",
    "load_protocol",
    "protocol_progress",
]
