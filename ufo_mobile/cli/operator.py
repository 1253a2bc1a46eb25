"""The person at the terminal, as the run's ``Operator``: questions, takeovers and confirmations are asked on
the terminal and answered with a line. Only used when standard input is a terminal.

A question is printed to ``out`` (standard error: the progress lines stay clean on standard output);
the model's words in it are made printable first. The answer is read on a daemon thread, so the
run's timeout and Ctrl-C stop the wait, and a terminal that closes (end of input) means no.
"""

from __future__ import annotations

import re
from typing import TextIO

from ufo_mobile.cli.live import status_hidden
from ufo_mobile.core.agents.human import (
    AskAnswer,
    AskRequest,
    ConfirmAnswer,
    ConfirmRequest,
    TakeoverAnswer,
    TakeoverRequest,
)
from ufo_mobile.core.device.blocking import run_in_daemon_thread
from ufo_mobile.safe_text import printable

ABORT_WORDS = ("abort", "no", "n", "stop", "cancel")


class TerminalOperator:
    def __init__(self, stdin: TextIO, out: TextIO) -> None:
        self.stdin = stdin
        self.out = out

    async def _ask(self, lines: list[str], prompt: str) -> str | None:
        """Print the question, then one answer line (None at end of input); no status line shows
        on the terminal meanwhile."""
        with status_hidden():
            for line in lines:
                print(line, file=self.out)
            print(prompt, end="", file=self.out, flush=True)
            answer = await run_in_daemon_thread(self.stdin.readline, name="ufo-operator")
        return None if answer == "" else answer.strip()

    async def take_over(self, request: TakeoverRequest) -> TakeoverAnswer:
        answer = await self._ask(
            [f"The agent asks you to take over the phone (step {request.step}, app {printable(request.app)}):",
             f"  {printable(request.message, 500)}"],
            "Do it on the phone, then press Enter (or type a note; 'abort' ends the run): ")
        if answer is None:
            return TakeoverAnswer(False, "the terminal closed")
        word = re.split(r"[\s,.:;!]+", answer, maxsplit=1)[0].lower()
        if word in ABORT_WORDS:
            return TakeoverAnswer(False, answer)
        return TakeoverAnswer(True, answer)

    async def confirm(self, request: ConfirmRequest) -> ConfirmAnswer:
        answer = await self._ask(
            [f"The agent wants to run {printable(request.action, 300)} in {printable(request.app)} "
             f"({printable(request.why)})."],
            "Allow it? [y/N, optionally followed by a note]: ")
        if answer is None:
            return ConfirmAnswer(False, "the terminal closed")
        word, _, note = answer.partition(" ")
        return ConfirmAnswer(word.lower() in ("y", "yes"), note.strip())

    async def ask(self, request: AskRequest) -> AskAnswer:
        answer = await self._ask(
            [f"The agent asks you (step {request.step}, app {printable(request.app)}):",
             f"  {printable(request.question, 500)}"],
            "Your answer (an empty line: no answer, the run ends): ")
        if not answer:
            return AskAnswer(False, "the terminal closed" if answer is None else "no answer")
        return AskAnswer(True, answer)
