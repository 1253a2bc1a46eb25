"""The model port: the OpenAI-compatible client, the scripted model, prompts, replies (see docs/architecture.md)."""
