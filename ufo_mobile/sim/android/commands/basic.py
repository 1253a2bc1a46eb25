"""Toybox-like commands of the emulated device: echo, cat, ls, rm, mkdir, md5sum, sleep, date,
getprop, grep, head, tail, wc, exit... They read and write the in-memory file system only."""

from __future__ import annotations

import asyncio
import hashlib
import re
import stat
from datetime import datetime

from ufo_mobile.sim.android.commands.tools import COMMANDS as _TOOLS
from ufo_mobile.sim.android.devfs import FsError, Node
from ufo_mobile.sim.android.shio import Command, Ctx, ExitShell, split_flags

_STDIN_LIMIT = 64 * 1024 * 1024


async def echo(ctx: Ctx, args: list[str]) -> int:
    newline, escapes = True, False
    while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
        flag = args.pop(0)
        newline = newline and "n" not in flag
        escapes = "e" in flag or (escapes and flag != "-E")
    text = " ".join(args)
    if escapes:
        text = text.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")
    await ctx.out(text + ("\n" if newline else ""))
    return 0


async def true(ctx: Ctx, args: list[str]) -> int:
    return 0


async def false(ctx: Ctx, args: list[str]) -> int:
    return 1


async def exit_(ctx: Ctx, args: list[str]) -> int:
    if not args:
        raise ExitShell(ctx.shell.status if ctx.shell is not None else 0)
    if not re.fullmatch(r"-?\d+", args[0]):
        return await ctx.fail(f"{args[0]}: bad number", 2)
    raise ExitShell(int(args[0]))


async def cat(ctx: Ctx, args: list[str]) -> int:
    _, paths = split_flags(args, "uvetA")
    if not paths or paths == ["-"]:
        await ctx.out(await ctx.read_all(_STDIN_LIMIT))
        return 0
    status = 0
    for path in paths:
        try:
            await ctx.out(ctx.device.fs.read(path))
        except FsError as exc:
            status = await ctx.fail(f"{path}: {exc.reason}")
    return status


async def rm(ctx: Ctx, args: list[str]) -> int:
    flags, paths = split_flags(args, "frRiv")
    if not paths and "f" not in flags:
        return await ctx.fail("Needs 1 argument")
    status = 0
    for path in paths:
        try:
            ctx.device.fs.remove(path, recursive=bool(flags & {"r", "R"}))
        except FsError as exc:
            if not ("f" in flags and exc.reason == "No such file or directory"):
                status = await ctx.fail(f"{path}: {exc.reason}")
    return status


async def mkdir(ctx: Ctx, args: list[str]) -> int:
    flags, paths = split_flags(args, "pv")
    if not paths:
        return await ctx.fail("Needs 1 argument")
    status = 0
    for path in paths:
        try:
            ctx.device.fs.mkdir(path, parents="p" in flags)
        except FsError as exc:
            status = await ctx.fail(f"{path}: {exc.reason}")
    return status


async def touch(ctx: Ctx, args: list[str]) -> int:
    _, paths = split_flags(args, "acm")
    for path in paths:
        fs = ctx.device.fs
        fs.write(path, fs.read(path) if fs.exists(path) else b"")
    return 0


def _long_line(name: str, node: Node, when: datetime) -> str:
    kind = "d" if node.is_dir else "-"
    return f"{kind}{stat.filemode(node.mode)[1:]} 1 shell shell {node.size:>8} {when:%Y-%m-%d %H:%M} {name}"


async def ls(ctx: Ctx, args: list[str]) -> int:
    flags, paths = split_flags(args, "laA1dRhn")
    status = 0
    for path in paths or ["/"]:
        node = ctx.device.fs.stat(path)
        if node is None:
            status = await ctx.fail(f"{path}: No such file or directory")
            continue
        entries = [(path, node)] if not node.is_dir or "d" in flags else ctx.device.fs.listdir(path)
        if "a" in flags and node.is_dir and "d" not in flags:
            await ctx.out("".join(f"{name}\n" for name in (".", "..")) if "l" not in flags else "")
        for name, entry in entries:
            line = _long_line(name, entry, datetime.fromtimestamp(entry.mtime)) if "l" in flags else name
            await ctx.out(line + "\n")
    return status


async def md5sum(ctx: Ctx, args: list[str]) -> int:
    _, paths = split_flags(args, "bc")
    if not paths:
        digest = hashlib.md5(await ctx.read_all(_STDIN_LIMIT)).hexdigest()  # noqa: S324 - a checksum
        await ctx.out(f"{digest}  -\n")
        return 0
    status = 0
    for path in paths:
        try:
            digest = hashlib.md5(ctx.device.fs.read(path)).hexdigest()  # noqa: S324
        except FsError as exc:
            status = await ctx.fail(f"{path}: {exc.reason}")
            continue
        await ctx.out(f"{digest}  {path}\n")
    return status


async def sleep(ctx: Ctx, args: list[str]) -> int:
    try:
        seconds = float(args[0].rstrip("s")) if args else -1.0
    except ValueError:
        seconds = -1.0
    if seconds < 0:
        return await ctx.fail(f"invalid number '{args[0] if args else ''}'")
    await asyncio.sleep(min(seconds, ctx.device.limits.sleep_max))
    return 0


_DATE_CODES = set("YmdHMSybBaAjpZzTDFRIuwUVGCgkl")


def format_date(now: datetime, fmt: str) -> str:
    """``date +FORMAT`` with the common directives; unknown ones are printed as they are."""
    out: list[str] = []
    index = 0
    while index < len(fmt):
        char = fmt[index]
        code = fmt[index + 1:index + 2]
        if char != "%" or not code:
            out.append(char)
            index += 1
            continue
        index += 2
        if code in _DATE_CODES:
            out.append(now.strftime("%" + code))
        else:
            out.append({"s": str(int(now.timestamp())), "e": f"{now.day:2d}", "n": "\n", "t": "\t",
                        "%": "%", "N": f"{now.microsecond * 1000:09d}"}.get(code, "%" + code))
    return "".join(out)


async def date(ctx: Ctx, args: list[str]) -> int:
    phone = ctx.device.phone
    formats = [arg for arg in args if arg.startswith("+")]
    if formats:
        await ctx.out(format_date(phone.now(), formats[0][1:]) + "\n")
    else:
        await ctx.out(phone.date() + "\n")
    return 0


async def getprop(ctx: Ctx, args: list[str]) -> int:
    props = ctx.device.props
    if not args:
        await ctx.out("".join(f"[{key}]: [{value}]\n" for key, value in sorted(props.items())))
        return 0
    default = args[1] if len(args) > 1 else ""
    await ctx.out(props.get(args[0], default) + "\n")
    return 0


async def setprop(ctx: Ctx, args: list[str]) -> int:
    if len(args) != 2:
        return await ctx.fail("usage: setprop NAME VALUE")
    if args[0].startswith("ro.") and args[0] in ctx.device.props:
        return await ctx.fail(f"failed to set property '{args[0]}' to '{args[1]}'")
    ctx.device.props[args[0]] = args[1]
    return 0


def _bre_to_python(pattern: str) -> str:
    """A POSIX basic regular expression as a Python one (``\\(`` groups, literal ``(+?{|``)."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            nxt = pattern[index + 1]
            out.append(nxt if nxt in "(){}|+?" else "\\" + nxt)
            index += 2
            continue
        out.append("\\" + char if char in "(){}|+?" else char)
        index += 1
    return "".join(out)


async def grep(ctx: Ctx, args: list[str]) -> int:
    flags, rest = split_flags(args, "ivEFcqnwox")
    if not rest:
        return await ctx.fail("usage: grep [-ivEFcqnwx] PATTERN [FILE...]", 2)
    pattern = re.escape(rest[0]) if "F" in flags else rest[0] if "E" in flags else _bre_to_python(rest[0])
    if "w" in flags:
        pattern = rf"\b(?:{pattern})\b"
    if "x" in flags:
        pattern = rf"(?:{pattern})\Z"
    try:
        regex = re.compile(pattern, re.IGNORECASE if "i" in flags else 0)
    except re.error as exc:
        return await ctx.fail(f"bad regex '{rest[0]}': {exc}", 2)
    data = b"".join([ctx.device.fs.read(path) for path in rest[1:]]) if rest[1:] else await ctx.read_all(_STDIN_LIMIT)
    lines = data.decode("utf-8", "replace").splitlines()
    hits = [(n, line) for n, line in enumerate(lines, 1) if (regex.search(line) is not None) != ("v" in flags)]
    if "c" in flags:
        await ctx.out(f"{len(hits)}\n")
    elif "q" not in flags:
        await ctx.out("".join(f"{n}:{line}\n" if "n" in flags else f"{line}\n" for n, line in hits))
    return 0 if hits else 1


def _count_arg(args: list[str], default: int) -> tuple[int, list[str]]:
    rest = list(args)
    count = default
    if rest and rest[0] == "-n" and len(rest) > 1:
        count = int(rest[1])
        rest = rest[2:]
    elif rest and re.fullmatch(r"-n?\d+", rest[0]):
        count = int(rest[0].lstrip("-n"))
        rest = rest[1:]
    return count, rest


async def _lines_of(ctx: Ctx, paths: list[str]) -> list[str]:
    data = b"".join([ctx.device.fs.read(path) for path in paths]) if paths else await ctx.read_all(_STDIN_LIMIT)
    return data.decode("utf-8", "replace").splitlines(keepends=True)


async def head(ctx: Ctx, args: list[str]) -> int:
    if args[:1] == ["-c"] and len(args) > 1 and args[1].isdigit():
        data = b"".join(line.encode() for line in await _lines_of(ctx, args[2:]))
        await ctx.out(data[:int(args[1])])
        return 0
    count, paths = _count_arg(args, 10)
    await ctx.out("".join((await _lines_of(ctx, paths))[:count]))
    return 0


async def tail(ctx: Ctx, args: list[str]) -> int:
    count, paths = _count_arg(args, 10)
    lines = await _lines_of(ctx, paths)
    await ctx.out("".join(lines[-count:] if count else []))
    return 0


async def wc(ctx: Ctx, args: list[str]) -> int:
    flags, paths = split_flags(args, "lcw")
    data = b"".join([ctx.device.fs.read(path) for path in paths]) if paths else await ctx.read_all(_STDIN_LIMIT)
    counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}  # bytes, binary-safe
    chosen = [key for key in "lwc" if key in flags] or ["l", "w", "c"]
    await ctx.out(" ".join(str(counts[key]) for key in chosen) + "\n")
    return 0


async def whoami(ctx: Ctx, args: list[str]) -> int:
    await ctx.out("shell\n")
    return 0


async def id_(ctx: Ctx, args: list[str]) -> int:
    await ctx.out("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),3003(inet) "
                  "context=u:r:shell:s0\n")
    return 0


async def pwd(ctx: Ctx, args: list[str]) -> int:
    await ctx.out("/\n")
    return 0


async def toybox(ctx: Ctx, args: list[str]) -> int:
    if not args:
        await ctx.out(" ".join(sorted(_TOYBOX)) + "\n")
        return 0
    command = _TOYBOX.get(args[0])
    if command is None:
        return await ctx.fail(f"Unknown command {args[0]}")
    return await command(Ctx(ctx.device, ctx.io, args[0], ctx.env, ctx.shell), args[1:])


_TOYBOX: dict[str, Command] = {
    "echo": echo, "true": true, "false": false, "cat": cat, "rm": rm, "mkdir": mkdir, "touch": touch,
    "ls": ls, "md5sum": md5sum, "sleep": sleep, "date": date, "getprop": getprop, "setprop": setprop,
    "grep": grep, "head": head, "tail": tail, "wc": wc, "whoami": whoami, "id": id_, "pwd": pwd, **_TOOLS,
}


async def egrep(ctx: Ctx, args: list[str]) -> int:
    return await grep(ctx, ["-E", *args])


COMMANDS: dict[str, Command] = {**_TOYBOX, "exit": exit_, "toybox": toybox, "egrep": egrep}
