"""The four phases of a step over one ``StepContext``, and the processor that runs them (see docs/architecture.md)."""
