"""Toybox process and file tools of the emulated device: ``ps``, ``pkill``, ``dd`` and ``stat -c``.

``ps`` lists a fixed set of system processes, the apps that have tasks, the input method and the
shell's own processes (the uiautomator2 server started by ``app_process`` among them). ``pkill``
can stop what the shell user owns (the uiautomator2 server, as ``pkill -f com.wetest.uia2.Main``
does on a phone); other users' processes are out of its reach, as they are for ``adb shell``.
``dd`` copies ``if=`` (or stdin) to ``of=`` (or stdout) in blocks, binary-safe, and reports on
stderr like toybox's dd.c status(); the elapsed time is modelled from the byte count (100 MB/s) so
the report is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ufo_mobile.sim.android.commands.dumpsys_wm import pid_of
from ufo_mobile.sim.android.devfs import FsError, Node
from ufo_mobile.sim.android.shio import Command, Ctx

SHELL_PID = 4242
PS_PID = 4343
_SYSTEM = (("root", 1, 0, "init", "/system/bin/init second_stage"),
           ("root", 2, 0, "kthreadd", "[kthreadd]"),
           ("logd", 311, 1, "logd", "/system/bin/logd"),
           ("system", 402, 1, "surfaceflinger", "/system/bin/surfaceflinger"),
           ("root", 699, 1, "zygote64", "zygote64"),
           ("shell", 1017, 1, "adbd", "/apex/com.android.adbd/bin/adbd --root_seclabel=u:r:su:s0"),
           ("system", 1203, 699, "system_server", "system_server"))


@dataclass(frozen=True, slots=True)
class Proc:
    user: str
    pid: int
    ppid: int
    name: str
    cmdline: str


def processes(ctx: Ctx) -> list[Proc]:
    """Every process ``ps -A`` shows, by pid."""
    device = ctx.device
    found = [Proc(*row) for row in _SYSTEM]
    packages = ["com.android.systemui", device.profile.ime.partition("/")[0]]
    packages += [top.package for top in device.phone.task_tops()]
    for index, package in enumerate(dict.fromkeys(packages)):
        found.append(Proc(f"u0_a{150 + index}", pid_of(package), 699, package, package))
    found.append(Proc("shell", SHELL_PID, 1017, "sh", "/system/bin/sh -"))
    for server in device.u2_servers():
        found.append(Proc("shell", server.pid, SHELL_PID, "app_process", server.command))
    found.append(Proc("shell", PS_PID, SHELL_PID, "ps", "ps"))
    return sorted(found, key=lambda proc: proc.pid)


async def ps(ctx: Ctx, args: list[str]) -> int:
    """``ps -A`` / ``ps -e`` (USER PID PPID VSZ RSS WCHAN ADDR S NAME) and ``ps -ef`` (UID PID PPID
    C STIME TTY TIME CMD); plain ``ps`` shows the shell's own processes."""
    letters = "".join(arg[1:] for arg in args if arg.startswith("-"))
    everyone = "A" in letters or "e" in letters
    shown = [proc for proc in processes(ctx) if everyone or proc.user == "shell" and proc.pid >= SHELL_PID]
    if "f" in letters:
        lines = ["UID            PID  PPID C STIME TTY          TIME CMD"]
        lines += [f"{p.user:<10}{p.pid:>9}{p.ppid:>6} 0 09:30:00 ?     00:00:00 {p.cmdline}" for p in shown]
    else:
        lines = ["USER            PID   PPID        VSZ    RSS WCHAN            ADDR S NAME"]
        lines += [f"{p.user:<10}{p.pid:>9}{p.ppid:>7}{_vsz(p):>11}{_rss(p):>7} {'do_epoll_wait':<15}"
                  f"{0:>6} S {p.name}" for p in shown]
    await ctx.out("".join(line + "\n" for line in lines))
    return 0


def _vsz(proc: Proc) -> int:
    return 10_000_000 + proc.pid * 37 % 5_000_000


def _rss(proc: Proc) -> int:
    return 4_000 + proc.pid * 53 % 200_000


async def pkill(ctx: Ctx, args: list[str]) -> int:
    """``pkill [-f] [-SIGNAL] PATTERN``: exit 0 if it stopped something, 1 if nothing matched."""
    full = "-f" in args
    patterns = [arg for arg in args if not arg.startswith("-")]
    if len(patterns) != 1:
        return await ctx.fail("Needs 1 argument", 2)
    try:
        regex = re.compile(patterns[0])
    except re.error:
        return await ctx.fail(f"bad regex '{patterns[0]}'", 2)
    killed = 0
    for proc in processes(ctx):
        if proc.pid in (PS_PID, SHELL_PID) or not regex.search(proc.cmdline if full else proc.name):
            continue
        if proc.user == "shell" and ctx.device.u2_kill(proc.pid):
            killed += 1
    return 0 if killed else 1


# -- dd ----------------------------------------------------------------------------------------------

_SUFFIXES = {"c": 1, "w": 2, "b": 512, "k": 1024, "m": 1024**2, "g": 1024**3}
_DD_LIMIT = 256 * 1024 * 1024


def _dd_number(text: str) -> int:
    match = re.fullmatch(r"(\d+)([cwbkmgKMG]?)", text)
    if match is None:
        raise ValueError(text)
    return int(match.group(1)) * _SUFFIXES.get(match.group(2).lower(), 1)


def human_readable(number: int) -> str:
    """toybox human_readable(HR_SPACE|HR_B): ``512 B``, ``4.0 K``, ``1.5 M``."""
    unit, snap = 0, 0
    while number > 999:
        snap, number, unit = number, (number + 512) // 1024, unit + 1
    text = str(number)
    if unit and len(text) == 1:
        whole = snap // 1024
        tenths = ((snap - whole * 1024) * 100 + 50) // 1024 // 10
        text = f"{whole}.{tenths}"
    return f"{text} {' KMGTPEZY'[unit]}" if unit else f"{text} B"


def _dd_status(records_in: tuple[int, int], records_out: tuple[int, int], total: int) -> str:
    millis = max(1, total // 100_000)  # modelled, not measured
    rate = total * 1000 // millis
    return (f"{records_in[0]}+{records_in[1]} records in\n{records_out[0]}+{records_out[1]} records out\n"
            f"{total} bytes ({human_readable(total)}) copied, {millis // 1000}.{millis % 1000:03d} s, "
            f"{human_readable(rate)}/s\n")


async def dd(ctx: Ctx, args: list[str]) -> int:
    options: dict[str, str] = {}
    for arg in args:
        key, sep, value = arg.partition("=")
        if not sep or key not in ("if", "of", "bs", "ibs", "obs", "count", "skip", "seek", "status", "conv", "iflag"):
            return await ctx.fail(f"bad argument {arg}")
        options[key] = value
    try:
        block = _dd_number(options.get("bs", options.get("ibs", "512")))
        skip = _dd_number(options.get("skip", "0"))
        count = _dd_number(options["count"]) if "count" in options else None
    except ValueError as exc:
        return await ctx.fail(f"invalid number '{exc}'")
    if block <= 0:
        return await ctx.fail("invalid number '0'")
    try:
        data = ctx.device.fs.read(options["if"]) if "if" in options else await ctx.read_all(_DD_LIMIT)
    except FsError as exc:
        return await ctx.fail(f"{options['if']}: {exc.reason}")
    iflag = options.get("iflag", "")
    start = skip if "skip_bytes" in iflag else skip * block
    end = len(data) if count is None else start + (count if "count_bytes" in iflag else count * block)
    chunk = data[start:end]
    if "of" in options:
        ctx.device.fs.write(options["of"], chunk)
    else:
        await ctx.out(chunk)
    records = (len(chunk) // block, 1 if len(chunk) % block else 0)
    if options.get("status") not in ("none", "noxfer"):
        await ctx.err(_dd_status(records, records, len(chunk)))
    elif options.get("status") == "noxfer":
        await ctx.err(f"{records[0]}+{records[1]} records in\n{records[0]}+{records[1]} records out\n")
    return 0


_STAT_CODES: dict[str, Callable[[Node], str]] = {
    "s": lambda n: str(n.size), "Y": lambda n: str(n.mtime), "a": lambda n: f"{n.mode & 0o7777:o}",
    "F": lambda n: "directory" if n.is_dir else "regular file", "U": lambda n: "shell", "G": lambda n: "shell",
    "u": lambda n: "2000", "g": lambda n: "2000",
}


def _stat_format(fmt: str, path: str, node: Node) -> str:
    def field(match: re.Match[str]) -> str:
        code = match.group(1)
        return path if code == "n" else _STAT_CODES[code](node) if code in _STAT_CODES else match.group(0)

    return re.sub(r"%(.)", field, fmt)


async def stat_(ctx: Ctx, args: list[str]) -> int:
    """``stat -c FORMAT FILE...`` (%s size, %n name, %Y mtime, %a mode, %F type, %U/%G owner)."""
    rest = [arg for arg in args if arg not in ("-L", "-t")]
    if len(rest) < 3 or rest[0] != "-c":
        return await ctx.fail("only 'stat -c FORMAT FILE...' is supported here")
    status = 0
    for path in rest[2:]:
        node = ctx.device.fs.stat(path)
        if node is None:
            status = await ctx.fail(f"'{path}': No such file or directory")
            continue
        await ctx.out(_stat_format(rest[1], path, node) + "\n")
    return status


COMMANDS: dict[str, Command] = {"ps": ps, "pkill": pkill, "dd": dd, "stat": stat_}
