"""The terminal operator: what it asks, and how it reads the answer."""

from __future__ import annotations

import io

import pytest

from ufo_mobile.cli.operator import TerminalOperator
from ufo_mobile.core.agents.human import ConfirmAnswer, ConfirmRequest, TakeoverAnswer, TakeoverRequest

TAKE = TakeoverRequest("r", 3, "Solve the captcha\x1b[2J", "com.shop")
CONFIRM = ConfirmRequest("r", 4, "click(index=7, text='Pay')", "com.bank", "the model asked for approval")


@pytest.mark.parametrize(("typed", "answer"), [
    ("\n", TakeoverAnswer(True, "")),
    ("done, solved it\n", TakeoverAnswer(True, "done, solved it")),
    ("abort: no access\n", TakeoverAnswer(False, "abort: no access")),
    ("abort no access\n", TakeoverAnswer(False, "abort no access")),
    ("", TakeoverAnswer(False, "the terminal closed")),
])
async def test_takeover_answers(typed: str, answer: TakeoverAnswer) -> None:
    out = io.StringIO()
    assert await TerminalOperator(io.StringIO(typed), out).take_over(TAKE) == answer
    assert "Solve the captcha\\x1b[2J" in out.getvalue() and "\x1b" not in out.getvalue()


@pytest.mark.parametrize(("typed", "answer"), [
    ("y\n", ConfirmAnswer(True, "")),
    ("yes looks right\n", ConfirmAnswer(True, "looks right")),
    ("\n", ConfirmAnswer(False, "")),
    ("no wrong amount\n", ConfirmAnswer(False, "wrong amount")),
    ("", ConfirmAnswer(False, "the terminal closed")),
])
async def test_confirm_answers(typed: str, answer: ConfirmAnswer) -> None:
    out = io.StringIO()
    assert await TerminalOperator(io.StringIO(typed), out).confirm(CONFIRM) == answer
    assert "click(index=7, text='Pay') in com.bank (the model asked for approval)" in out.getvalue()
