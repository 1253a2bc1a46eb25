"""The status vocabulary: what a model may answer, what the runtime adds, and each agent's states.

A model answers a step with one of ``ModelStatus`` (a top-level field of every reply). The runtime
has statuses of its own that no model sends (``RuntimeStatus``): CONFIRM (an action waits for a
person's approval), ASSIGN and REPLAN (the manager's), HANDOVER (the replay's). Each kind of agent
moves through its own set of states, one enum each, named by the same strings: the flat agent's
``MobileAgentStatus``, the manager's ``ManagerStatus``, the executor's and other sub-agents'
``SubAgentStatus``, the replay's ``ReplayStatus``. The rulebooks (``ufo_mobile/core/states``)
are built from these sets. Every value is its own name, as written in ``run.json`` and replies.
"""

from __future__ import annotations

from enum import StrEnum


class ModelStatus(StrEnum):
    """What a model may say about the task after a step.

    TAKEOVER: the model asks a person to do something on the phone (log in, solve a captcha, unlock a
    secure screen); the run waits for the person. PENDING (UFO's name for it): the model asks the
    user a question (an ambiguous request, a missing detail) and waits for the answer. With nobody
    to ask, either ends the run as one that needs a person.
    """

    CONTINUE = "CONTINUE"
    FINISH = "FINISH"
    FAIL = "FAIL"
    PENDING = "PENDING"
    TAKEOVER = "TAKEOVER"


class RuntimeStatus(StrEnum):
    """The runtime's own statuses, never sent by a model."""

    CONFIRM = "CONFIRM"  # the chosen action needs a person's approval before it runs
    ASSIGN = "ASSIGN"  # the manager hands a subgoal to a sub-agent
    REPLAN = "REPLAN"  # the manager must plan again: the executor failed too often in a row
    HANDOVER = "HANDOVER"  # the replay hands the rest of the task to the agent (a guarded replay's fallback)


class MobileAgentStatus(StrEnum):
    """The flat agent's states after a step: the model's statuses, and CONFIRM, where the runtime
    moves when the chosen action needs a person's approval before it runs."""

    CONTINUE = "CONTINUE"
    FINISH = "FINISH"
    FAIL = "FAIL"
    TAKEOVER = "TAKEOVER"
    PENDING = "PENDING"
    CONFIRM = "CONFIRM"


class ManagerStatus(StrEnum):
    """The manager's states (reasoning mode): it plans, asks the user, assigns, replans, ends."""

    CONTINUE = "CONTINUE"
    ASSIGN = "ASSIGN"
    REPLAN = "REPLAN"
    PENDING = "PENDING"
    FINISH = "FINISH"
    FAIL = "FAIL"


class SubAgentStatus(StrEnum):
    """The states of the manager's sub-agents (executor, scripter, text manipulator)."""

    CONTINUE = "CONTINUE"
    TAKEOVER = "TAKEOVER"
    PENDING = "PENDING"
    CONFIRM = "CONFIRM"
    FINISH = "FINISH"
    FAIL = "FAIL"


class ReplayStatus(StrEnum):
    """The replay agent's states: a recorded step, the end, or HANDOVER to the agent."""

    CONTINUE = "CONTINUE"
    HANDOVER = "HANDOVER"
    FINISH = "FINISH"
    FAIL = "FAIL"


#: The statuses a model may answer with.
MODEL_STATUSES: tuple[ModelStatus, ...] = tuple(ModelStatus)

#: The outcome of a run that stopped because it needed a person and nobody could answer (a question,
#: a takeover, an approval under ``human.unattended: stop``): counted apart from failures.
NEEDS_PERSON = "needs_person"

#: The name of the initial state, in which no step has run yet.
NONE_STATE = "NONE"
