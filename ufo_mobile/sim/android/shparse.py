"""A parser for the small POSIX-like language of the emulated device shell.

Supported: words with '…', "…" and backslash quoting, ``$?``, ``$NAME`` and ``${NAME}`` (expanded
later, at run time), ``;`` and newlines, ``&&``, ``||``, ``|``, ``VAR=x cmd`` prefixes, comments,
and the redirections ``<``, ``>``, ``>>``, ``N>``, ``N>&M``. Nothing is ever executed here:
command substitution (``$(…)`` and backticks) is kept as literal text, and ``&``, ``(``, ``)``,
here-documents are syntax errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_SPECIAL_VARS = "?$#!0123456789"
_DQ_ESCAPABLE = '$`"\\\n'


class ShellSyntaxError(Exception):
    """The script does not parse; the message reads like mksh's."""


@dataclass(frozen=True, slots=True)
class Lit:
    text: str
    quoted: bool


@dataclass(frozen=True, slots=True)
class Var:
    name: str
    quoted: bool


Part = Lit | Var


@dataclass(slots=True)
class Word:
    parts: list[Part] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Op:
    text: str
    fd: int | None = None


Token = Word | Op


@dataclass(slots=True)
class Redirect:
    fd: int
    op: str  # ">", ">>", "<", ">&", "<&"
    target: Word


@dataclass(slots=True)
class Command:
    assigns: list[tuple[str, Word]] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass(slots=True)
class AndOr:
    first: list[Command]                                   # a pipeline
    rest: list[tuple[str, list[Command]]] = field(default_factory=list)


# -- lexer -------------------------------------------------------------------------------------


class _Lexer:
    def __init__(self, src: str) -> None:
        self.src = src
        self.i = 0
        self.tokens: list[Token] = []
        self.word: Word | None = None
        self.pending: list[str] = []
        self.pending_quoted: bool | None = None

    def add(self, part: Part) -> None:
        """Append to the current word; runs of literal text with one quoting become one ``Lit``."""
        if self.word is None:
            self.word = Word()
        if isinstance(part, Lit) and (self.pending_quoted is None or self.pending_quoted == part.quoted):
            self.pending.append(part.text)
            self.pending_quoted = part.quoted
            return
        self._flush_pending()
        if isinstance(part, Lit):
            self.pending, self.pending_quoted = [part.text], part.quoted
        else:
            self.word.parts.append(part)

    def _flush_pending(self) -> None:
        if self.word is not None and self.pending_quoted is not None:
            self.word.parts.append(Lit("".join(self.pending), self.pending_quoted))
        self.pending, self.pending_quoted = [], None

    def flush(self) -> None:
        self._flush_pending()
        if self.word is not None:
            self.tokens.append(self.word)
            self.word = None

    def run(self) -> list[Token]:
        src = self.src
        while self.i < len(src):
            c = src[self.i]
            if c in " \t\r":
                self.flush()
                self.i += 1
            elif c == "\n":
                self.flush()
                self.tokens.append(Op("\n"))
                self.i += 1
            elif c == "#" and self.word is None:
                end = src.find("\n", self.i)
                self.i = len(src) if end < 0 else end
            elif c in ";&|()<>":
                self.operator(c)
            elif c == "'":
                end = src.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("no closing quote")
                self.add(Lit(src[self.i + 1:end], True))
                self.i = end + 1
            elif c == '"':
                self.double_quoted()
            elif c == "\\":
                self.backslash()
            elif c in "$`":
                self.dollar_or_backtick(quoted=False)
            else:
                self.add(Lit(c, False))
                self.i += 1
        self.flush()
        return self.tokens

    def backslash(self) -> None:
        nxt = self.src[self.i + 1:self.i + 2]
        if nxt == "\n":
            self.i += 2
        elif nxt:
            self.add(Lit(nxt, True))
            self.i += 2
        else:
            self.add(Lit("\\", False))
            self.i += 1

    def operator(self, c: str) -> None:
        src, i = self.src, self.i
        fd: int | None = None
        self._flush_pending()
        if c in "<>" and self.word is not None and _is_io_number(self.word):
            fd = int(_word_text(self.word))
            self.word = None
        self.flush()
        two = src[i:i + 2]
        if two in ("&&", "||", ">>", ">&", "<&"):
            self.tokens.append(Op(two, fd))
            self.i += 2
        elif two == "<<":
            raise ShellSyntaxError("here documents are not supported")
        elif c in "&()":
            raise ShellSyntaxError(f"'{c}' unexpected")
        else:
            self.tokens.append(Op(c, fd))
            self.i += 1

    def double_quoted(self) -> None:
        src = self.src
        self.i += 1
        self.add(Lit("", True))  # "" is an (empty) word of its own
        while True:
            if self.i >= len(src):
                raise ShellSyntaxError("no closing quote")
            c = src[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and src[self.i + 1:self.i + 2] in tuple(_DQ_ESCAPABLE):
                if src[self.i + 1] != "\n":
                    self.add(Lit(src[self.i + 1], True))
                self.i += 2
            elif c in "$`":
                self.dollar_or_backtick(quoted=True)
            else:
                self.add(Lit(c, True))
                self.i += 1

    def dollar_or_backtick(self, quoted: bool) -> None:
        src, i = self.src, self.i
        if src[i] == "`":
            end = src.find("`", i + 1)
            end = len(src) - 1 if end < 0 else end
            self.add(Lit(src[i:end + 1], quoted))  # never executed: kept literally
            self.i = end + 1
            return
        nxt = src[i + 1:i + 2]
        if nxt == "(":
            end = _matching_paren(src, i + 1)
            self.add(Lit(src[i:end], quoted))  # "$(…)" is kept literally
            self.i = end
        elif nxt == "{":
            close = src.find("}", i + 2)
            name = src[i + 2:close] if close >= 0 else ""
            if close >= 0 and (_NAME.fullmatch(name) or (len(name) == 1 and name in _SPECIAL_VARS)):
                self.add(Var(name, quoted))
                self.i = close + 1
            else:
                self.add(Lit("$", quoted))
                self.i += 1
        elif nxt and nxt in _SPECIAL_VARS:
            self.add(Var(nxt, quoted))
            self.i += 2
        elif (match := _NAME.match(src, i + 1)) is not None:
            self.add(Var(match.group(), quoted))
            self.i = match.end()
        else:
            self.add(Lit("$", quoted))
            self.i += 1


def _matching_paren(src: str, start: int) -> int:
    """Index just past the ``)`` matching the ``(`` at ``start`` (or the end of ``src``)."""
    depth = 0
    for index in range(start, len(src)):
        if src[index] == "(":
            depth += 1
        elif src[index] == ")":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(src)


def _word_text(word: Word) -> str:
    return "".join(part.text if isinstance(part, Lit) else "$" + part.name for part in word.parts)


def _is_io_number(word: Word) -> bool:
    return all(isinstance(p, Lit) and not p.quoted for p in word.parts) and _word_text(word) in ("0", "1", "2")


def tokenize(src: str) -> list[Token]:
    return _Lexer(src).run()


# -- parser ------------------------------------------------------------------------------------


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.i = 0

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def program(self) -> list[AndOr]:
        items: list[AndOr] = []
        while (token := self.peek()) is not None:
            if isinstance(token, Op) and token.text in (";", "\n"):
                self.i += 1
                continue
            items.append(self.and_or())
            after = self.peek()
            if after is not None and not (isinstance(after, Op) and after.text in (";", "\n")):
                raise ShellSyntaxError(f"'{_show(after)}' unexpected")
        return items

    def and_or(self) -> AndOr:
        item = AndOr(self.pipeline())
        while isinstance(token := self.peek(), Op) and token.text in ("&&", "||"):
            self.i += 1
            self.skip_newlines()
            item.rest.append((token.text, self.pipeline()))
        return item

    def skip_newlines(self) -> None:
        while isinstance(token := self.peek(), Op) and token.text == "\n":
            self.i += 1

    def pipeline(self) -> list[Command]:
        commands = [self.command()]
        while isinstance(token := self.peek(), Op) and token.text == "|":
            self.i += 1
            self.skip_newlines()
            commands.append(self.command())
        return commands

    def command(self) -> Command:
        command = Command()
        while (token := self.peek()) is not None:
            if isinstance(token, Op):
                if token.text not in (">", ">>", "<", ">&", "<&"):
                    break
                self.i += 1
                target = self.peek()
                if not isinstance(target, Word):
                    raise ShellSyntaxError(f"'{token.text}' unexpected" if target is None
                                           else f"'{_show(target)}' unexpected")
                self.i += 1
                default_fd = 0 if token.text.startswith("<") else 1
                command.redirects.append(Redirect(default_fd if token.fd is None else token.fd,
                                                  token.text, target))
                continue
            self.i += 1
            assign = _assignment(token) if not command.words else None
            if assign is not None:
                command.assigns.append(assign)
            else:
                command.words.append(token)
        if not (command.words or command.assigns or command.redirects):
            token = self.peek()
            raise ShellSyntaxError("unexpected end of input" if token is None else f"'{_show(token)}' unexpected")
        return command


def _show(token: Token) -> str:
    if isinstance(token, Op):
        return "newline" if token.text == "\n" else token.text
    return _word_text(token)


def _assignment(word: Word) -> tuple[str, Word] | None:
    first = word.parts[0] if word.parts else None
    if not isinstance(first, Lit) or first.quoted:
        return None
    # unquoted literal characters were lexed one by one; gather the leading run of them
    head = ""
    count = 0
    for part in word.parts:
        if not isinstance(part, Lit) or part.quoted:
            break
        head += part.text
        count += 1
        if "=" in head:
            break
    match = _ASSIGN.match(head)
    if match is None:
        return None
    rest = head[match.end():]
    head_parts: list[Part] = [Lit(rest, False)] if rest else []
    value = Word(head_parts + word.parts[count:])
    return match.group(1), value


def parse(src: str) -> list[AndOr]:
    """The script as a list of and-or lists; raises ``ShellSyntaxError``."""
    return _Parser(tokenize(src)).program()
