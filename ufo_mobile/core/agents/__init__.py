"""The agents of each mode, what every agent's step needs, a person in the loop (see docs/architecture.md)."""
