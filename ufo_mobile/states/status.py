"""The status vocabulary shared by the state machine and the model's reply schema."""

from __future__ import annotations

from enum import StrEnum


class MobileAgentStatus(StrEnum):
    """What the model says about the task after a step. A top-level field of every reply."""

    CONTINUE = "CONTINUE"
    FINISH = "FINISH"
    FAIL = "FAIL"


#: The name of the initial state, in which no step has run yet.
NONE_STATE = "NONE"
