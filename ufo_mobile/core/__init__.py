"""The agent core: one step's path from the phone to the model and back (see docs/architecture.md).

Layers, lowest first: ``device`` (drivers), ``ui`` (controls, screen text, the control cache), ``llm``
(models, prompts, reply parsers), ``tools`` (the actions), ``processors`` (the four phases of a step),
``states`` (the state machines), ``agents``, and ``session`` (the round loop). ``memory``, ``trace``,
``sandbox`` and ``prompts`` serve them."""
