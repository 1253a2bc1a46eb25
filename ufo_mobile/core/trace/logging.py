"""Per-run structured logging: JSON lines in ``run.log``, secrets redacted, no global config.

Lines go through the run's ``RunWriter``: each is appended whole, and a log line that cannot be
written (a full disk) is dropped rather than raised into the code that logged it.
"""

from __future__ import annotations

from typing import Any

import structlog

from ufo_mobile.core.trace.writer import Redactor, RunWriter


def _redacting(redactor: Redactor) -> Any:
    def processor(logger: Any, method: str, event: dict[str, Any]) -> dict[str, Any]:
        return redactor.data(event)  # type: ignore[no-any-return]

    return processor


class _LineStream:
    """The file-like object structlog's ``WriteLogger`` writes whole lines to."""

    def __init__(self, writer: RunWriter) -> None:
        self._writer = writer

    def write(self, text: str) -> None:
        self._writer.log_line(text)

    def flush(self) -> None:
        return None


def make_run_logger(writer: RunWriter, **context: Any) -> Any:
    """A structlog logger writing to the run's ``run.log``."""
    logger = structlog.wrap_logger(
        structlog.WriteLogger(_LineStream(writer)),  # type: ignore[arg-type]
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redacting(writer.redactor),
            structlog.processors.JSONRenderer(ensure_ascii=False),
        ],
        context_class=dict,
        cache_logger_on_first_use=False,
    )
    return logger.bind(**context)
