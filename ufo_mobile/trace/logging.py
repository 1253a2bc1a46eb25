"""Per-run structured logging: JSON lines in ``run.log``, secrets redacted, no global config."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

import structlog

from ufo_mobile.trace.writer import Redactor


def _redacting(redactor: Redactor) -> Any:
    def processor(logger: Any, method: str, event: dict[str, Any]) -> dict[str, Any]:
        return redactor.data(event)  # type: ignore[no-any-return]

    return processor


def make_run_logger(path: Path, redactor: Redactor, **context: Any) -> tuple[Any, TextIO]:
    """A structlog logger writing to ``path``; returns it and the file to close at the end."""
    stream = open(path, "a", encoding="utf-8")  # noqa: SIM115
    logger = structlog.wrap_logger(
        structlog.WriteLogger(stream),
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redacting(redactor),
            structlog.processors.JSONRenderer(ensure_ascii=False),
        ],
        context_class=dict,
        cache_logger_on_first_use=False,
    )
    return logger.bind(**context), stream
