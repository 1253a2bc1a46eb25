"""The UFO agent-state interface and the state registry.

A state class registers itself on a manager class with ``@SomeStateManager.register``; that only
records the class (a declaration, like a class attribute). Each manager *instance* builds its own
name -> class map from those declarations (or from an explicit list, for tests) and caches one
instance per state, so two agents, or two tests, never share state objects through a singleton.
An agent accepts only the states its own manager made (``AgentStateManager.owns``): states never
need to know agent classes, so this layer imports nothing from ``agents``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from ufo_mobile.core.status import NONE_STATE
from ufo_mobile.errors import UnknownStateError

if TYPE_CHECKING:
    from ufo_mobile.core.context import RunContext
    from ufo_mobile.core.states.rulebook import AgentMachine

S = TypeVar("S", bound="type[AgentState]")


class AgentLike(Protocol):
    """What states and the round loop need of an agent (``ufo_mobile.core.agents.base.BasicAgent`` is
    one): they depend on this interface, never on the agents' classes."""

    name: str
    state_manager: AgentStateManager
    machine: AgentMachine
    status: str
    reason: str
    answer: str
    failed: bool

    @property
    def state(self) -> AgentState:
        """The agent's current state."""
        ...

    def set_state(self, state: AgentState) -> None:
        """Move to ``state`` (one of this agent's own)."""
        ...

    async def handle(self, context: RunContext) -> None:
        """Do the current state's work."""
        ...

    def fail_with(self, reason: str) -> None:
        """Decide that the next state is FAIL, for ``reason``."""
        ...

    async def process(self, context: RunContext) -> None:
        """Run one step (the CONTINUE state's work)."""
        ...

    async def take_over(self, context: RunContext) -> None:
        """Have a person do what the model asked (the TAKEOVER state's work)."""
        ...

    async def confirm(self, context: RunContext) -> None:
        """Have a person approve the pending action, then run it (the CONFIRM state's work)."""
        ...

    async def ask_user(self, context: RunContext) -> None:
        """Put the model's question to the user (the PENDING state's work)."""
        ...

    async def on_fail(self, context: RunContext) -> None:
        """Record the failure (the FAIL state's work)."""
        ...


class AgentState(ABC):
    """One state of an agent. States are stateless: everything they read lives on the agent."""

    @abstractmethod
    async def handle(self, agent: AgentLike, context: RunContext | None = None) -> None:
        """Do this state's work for one turn of the round loop."""

    @abstractmethod
    def next_state(self, agent: AgentLike) -> AgentState:
        """The state the agent should move to after ``handle``."""

    def next_agent(self, agent: AgentLike) -> AgentLike:
        """The agent that runs the next turn; the same one unless this state hands over."""
        return agent

    def is_round_end(self) -> bool:
        """Whether this state ends the round (FINISH, FAIL); its work then runs once, last."""
        return False

    def is_subtask_end(self) -> bool:
        """Whether this state ends a subtask (``Round`` counts them): FINISH, FAIL, a sub-agent's hand-back."""
        return False

    @classmethod
    @abstractmethod
    def name(cls) -> str:
        """The registry key, equal to the state name in the transitions rulebook."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name()}>"


class AgentStateManager(ABC):
    """A registry of the states of one kind of agent."""

    _declared: ClassVar[dict[str, type[AgentState]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Every manager class gets its own declaration table (UFO's subclasses shared one by accident).
        cls._declared = {}

    def __init__(self, states: Iterable[type[AgentState]] | None = None) -> None:
        chosen = type(self)._declared.values() if states is None else states
        self._classes: dict[str, type[AgentState]] = {c.name(): c for c in chosen}
        self._instances: dict[str, AgentState] = {}

    @classmethod
    def register(cls, state_class: S) -> S:
        """Class decorator: declare ``state_class`` as a state of this manager's agents."""
        cls._declared[state_class.name()] = state_class
        return state_class

    def add_state(self, state_class: type[AgentState]) -> None:
        """Add a state to this registry instance only."""
        self._classes[state_class.name()] = state_class
        self._instances.pop(state_class.name(), None)

    def get_state(self, name: str) -> AgentState:
        """The cached instance of the state registered as ``name``.

        Raises:
            UnknownStateError: nothing is registered under ``name``.
        """
        instance = self._instances.get(name)
        if instance is not None:
            return instance
        state_class = self._classes.get(name)
        if state_class is None:
            raise UnknownStateError(name, self.names())
        instance = state_class()
        self._instances[name] = instance
        return instance

    def names(self) -> list[str]:
        """The names of the states in this registry, sorted."""
        return sorted(self._classes)

    def owns(self, state: AgentState) -> bool:
        """Whether ``state`` is the instance this registry hands out under its name."""
        return self._instances.get(state.name()) is state

    @property
    def none_state(self) -> AgentState:
        """The initial state, before any step (registered under ``NONE``)."""
        return self.get_state(NONE_STATE)
