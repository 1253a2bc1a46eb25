"""The status vocabulary shared by the state machine and the model's reply schema."""

from __future__ import annotations

from enum import StrEnum


class MobileAgentStatus(StrEnum):
    """What the model says about the task after a step (a top-level field of every reply), and the
    states the agent moves through.

    TAKEOVER: the model asks a person to do something on the phone (log in, solve a captcha, unlock a
    secure screen); the run waits for the person. PENDING (UFO's name for it): the model asks the
    user a question (an ambiguous request, a missing detail) and waits for the answer. With nobody
    to ask, either ends the run as one that needs a person. CONFIRM is never sent by the model: the
    runtime moves there when the chosen action needs a person's approval before it runs.
    """

    CONTINUE = "CONTINUE"
    FINISH = "FINISH"
    FAIL = "FAIL"
    TAKEOVER = "TAKEOVER"
    PENDING = "PENDING"
    CONFIRM = "CONFIRM"
    # the manager's own states (reasoning mode): a subgoal handed to a sub-agent, a forced replan
    ASSIGN = "ASSIGN"
    REPLAN = "REPLAN"
    # the replay agent's own state: the rest of the task handed to the agent (a guarded replay's fallback)
    HANDOVER = "HANDOVER"


#: The statuses a model may answer with.
MODEL_STATUSES: tuple[MobileAgentStatus, ...] = (MobileAgentStatus.CONTINUE, MobileAgentStatus.FINISH,
                                                 MobileAgentStatus.FAIL, MobileAgentStatus.PENDING,
                                                 MobileAgentStatus.TAKEOVER)

#: The outcome of a run that stopped because it needed a person and nobody could answer (a question,
#: a takeover, an approval under ``human.unattended: stop``): counted apart from failures.
NEEDS_PERSON = "needs_person"

#: The name of the initial state, in which no step has run yet.
NONE_STATE = "NONE"
