"""Schema of a simulated app: a YAML screen graph validated by these pydantic models.

An app file describes one Android package. Every mapping rejects unknown keys, so a typo is an
error that names the file and the field (see ``ufo_mobile.sim.phone.loader``).

App (top level)::

    package: com.example.notes        # Android package name (required)
    label: Notes                      # the name a user sees (launcher, get_apps)
    activity: .MainActivity           # default activity of every screen (".X" is relative)
    launcher_icon: true               # show on the launcher grid
    preinstalled: true                # false: shipped, but installed only on request (a device
                                      # profile's extra apps, ``loader.packaged_app``)
    color: "#F4B400"                  # launcher icon colour (optional; derived from the package)
    start: list                       # the screen an app launch opens
    state: {notes: [], title: ""}     # state variables and their initial values
    screens: {list: <Screen>, ...}

Screen::

    title: "Notes"                    # app bar title (a template); app_bar: false hides the bar
    background: "#DCE7F7"             # screen colour (default: the theme's)
    up: true                          # show the "Navigate up" button (default: not on ``start``)
    activity: .EditActivity           # reported by current_app()
    focus: title                      # state variable of the field focused when the screen opens
    animated: true                    # never idle (video, animation): ``uiautomator dump`` cannot
                                      # get an idle state on realistic device profiles
    secure: true                      # FLAG_SECURE (banking, passwords): screenshots come back black
                                      # on realistic device profiles; the UI dump still works
    actions: [<Node>, ...]            # extra app-bar widgets at the right (e.g. a Save button)
    body: [<Node>, ...]               # stacked top to bottom under the app bar

Node (a view)::

    class: android.widget.TextView    # full Android class name (default TextView)
    id: title                         # resource-id; "title" becomes "<package>:id/title"
    text / desc / hint: "..."         # templates (see below); desc is the content-desc
    style: title                      # body, title, secondary, header, caption, display,
                                      # bubble_out, bubble_in, app_icon, avatar, button, fab
    size: 40, align: center, lines: 2  # drawing hints
    icon: "+"                         # a glyph drawn in the view (a template; not in the XML):
                                      # < back, > send, + add, x close, search, list, . (a dot),
                                      # else text; avatar initials
    layout: column                    # how children are placed: column, row, grid, stack
    columns: 4                        # grid only
    padding: 48 | [48, 24]            # all sides | [horizontal, vertical]
    width / height: 180               # fixed size; otherwise measured from the content
    grow: true                        # take a share of the space left in the parent
    bounds: [l, t, r, b]              # explicit position (out of the flow)
    anchor: bottom_right              # floating position inside the parent (FABs), with margin
    visible: {var: wifi}              # conditions, all must hold (a list or a single one)
    for_each: contacts                # repeat this node per item of a state list ("@apps" = apps);
                                      # or {source: events, where: [<Condition>], sort: [day, hour],
                                      # reverse: true}: only the items for which ``where`` holds (the
                                      # item is ``item``, the enclosing row's ``@parent``), ordered by
                                      # those fields (numbers by value, then text)
    let: {day_events: {source: events, where: {var: item.day, equals: "{@parent.n}"}}}
                                      # names for this node and its children: the list a for_each
                                      # spec selects (count and join it with {day_events#} and
                                      # {day_events#title}; test it in visible)
    bind: wifi                        # the widget's value: EditText text, SeekBar progress,
                                      # checked of any other class (Switch, CheckBox...)
    min / max: 0 / 100                # SeekBar range
    multiline: true                   # EditText: Enter inserts a newline
    submit: [<Effect>]                # EditText: what Enter does
    on_tap / on_long_press: [<Effect>]
    clickable, long_clickable, checkable, checked, scrollable, focusable, focused, enabled,
    password, selected: bool          # flags; unset flags get Android-like defaults from class,
                                      # bind and handlers. scrollable: true makes a scroll container
                                      # (rows cut at its end show that more lies below). selected
                                      # may also be conditions: {var: day, equals: "{item.n}"}
    from_end: true                    # a scroll container that starts at its end (chat threads)
    children: [<Node>, ...]

Effect (exactly one action key, plus an optional ``when`` list of conditions)::

    goto: wifi | {screen: thread, replace: true}
    back: true          home: true
    launch: com.android.settings | {package: ..., screen: ..., extras: {var: template}}
    set: {var: to, value: "{item.name}"}
    toggle: wifi                      # or item.enabled: a field of the tapped row's list item
    increment: {var: qty, by: 1, min: 1, max: 99}   # add to a number (by may be negative); the
                                      # var may be item.qty; text that is not a number counts as 0
    append: {list: sent, item: {to: "{to}", text: "{draft}"}}
    upsert: {list: threads, key: name, item: {name: "{to}", snippet: "{draft}"}}  # moves to front
    remove: {list: cart, key: name, value: "{item.name}"}   # drop the items whose field equals
                                      # value; without key, the items equal to value ("{item}")
    clear: [title, body]

Condition::

    {var: wifi}                       # truthy
    {var: item.name, contains: "{query}"}   # case-insensitive substring
    {var: to, equals: "{item.with}"}  # string comparison after rendering; bool/int compare as is
    {var: draft, not_empty: true}
    negate: true                      # inverts any of the above

Templates: ``{var}`` is a state variable, ``{item}`` / ``{item.field}`` the current list item,
``{@index}`` its position, ``{@time}`` / ``{@date}`` the phone clock, ``{var?yes:no}`` picks a
literal by truthiness and ``{{`` / ``}}`` are literal braces. Values are inserted verbatim and never
re-scanned. A template that is exactly one placeholder yields the raw value (list, bool, int).

Sizes are pixels of a 1080-wide design and are scaled to the phone's width.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Scalar = str | int | float | bool
Style = Literal[
    "body", "title", "secondary", "header", "caption", "display", "bubble_out", "bubble_in",
    "app_icon", "avatar", "button", "fab", "toolbar_title",
]
Anchor = Literal["bottom_right", "bottom_left", "bottom_center", "top_right"]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _as_list(value: Any) -> Any:
    """Accept a single mapping where a list is expected (``on_tap: {goto: x}``)."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [value]
    return value


class Condition(_Spec):
    """A test on a variable; see the module docstring."""

    var: str
    equals: Scalar | None = None
    contains: str | None = None
    not_empty: bool | None = None
    negate: bool = False

    @model_validator(mode="after")
    def _one_test(self) -> Condition:
        tests = [self.equals is not None, self.contains is not None, self.not_empty is not None]
        if sum(tests) > 1:
            raise ValueError("use at most one of equals, contains, not_empty")
        return self


class GotoSpec(_Spec):
    screen: str
    replace: bool = False


class LaunchSpec(_Spec):
    package: str
    screen: str | None = None
    extras: dict[str, Any] = Field(default_factory=dict)


class SetSpec(_Spec):
    var: str
    value: Any


class AppendSpec(_Spec):
    list: str
    item: Any


class UpsertSpec(_Spec):
    list: str
    key: str
    item: dict[str, Any]


class IncrementSpec(_Spec):
    var: str
    by: int = 1
    min: int | None = None
    max: int | None = None

    @model_validator(mode="after")
    def _range(self) -> IncrementSpec:
        if self.min is not None and self.max is not None and self.max < self.min:
            raise ValueError("max must not be less than min")
        return self


class RemoveSpec(_Spec):
    list: str
    key: str | None = None
    value: Any


_ACTIONS = ("goto", "back", "home", "launch", "set_var", "toggle", "increment", "append", "upsert", "remove",
            "clear")


class Effect(_Spec):
    """One step of a behaviour: exactly one action, guarded by ``when``."""

    when: list[Condition] = Field(default_factory=list)
    goto: GotoSpec | None = None
    back: bool = False
    home: bool = False
    launch: LaunchSpec | None = None
    set_var: SetSpec | None = Field(default=None, alias="set")
    toggle: str | None = None
    increment: IncrementSpec | None = None
    append: AppendSpec | None = None
    upsert: UpsertSpec | None = None
    remove: RemoveSpec | None = None
    clear: list[str] | None = None

    @field_validator("when", mode="before")
    @classmethod
    def _when_list(cls, value: Any) -> Any:
        return _as_list(value)

    @field_validator("goto", mode="before")
    @classmethod
    def _goto_short(cls, value: Any) -> Any:
        return {"screen": value} if isinstance(value, str) else value

    @field_validator("launch", mode="before")
    @classmethod
    def _launch_short(cls, value: Any) -> Any:
        return {"package": value} if isinstance(value, str) else value

    @field_validator("increment", mode="before")
    @classmethod
    def _increment_short(cls, value: Any) -> Any:
        return {"var": value} if isinstance(value, str) else value

    @field_validator("clear", mode="before")
    @classmethod
    def _clear_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _exactly_one(self) -> Effect:
        chosen = [name for name in _ACTIONS if getattr(self, name) not in (None, False)]
        if len(chosen) != 1:
            raise ValueError(
                "an effect needs exactly one of goto, back, home, launch, set, toggle, increment, append, "
                f"upsert, remove, clear (got {', '.join(chosen) or 'none'})"
            )
        return self

    @property
    def action(self) -> str:
        """The name of the action this effect performs."""
        return next(name for name in _ACTIONS if getattr(self, name) not in (None, False))


class ForEach(_Spec):
    source: str
    where: list[Condition] = Field(default_factory=list)
    sort: list[str] = Field(default_factory=list)
    reverse: bool = False

    @field_validator("sort", mode="before")
    @classmethod
    def _sort_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("where", mode="before")
    @classmethod
    def _where_list(cls, value: Any) -> Any:
        return _as_list(value)


class Node(_Spec):
    """A view in a screen tree; see the module docstring for every key."""

    cls: str = Field(default="android.widget.TextView", alias="class")
    id: str = ""
    text: str = ""
    desc: str = ""
    hint: str = ""
    icon: str = ""
    style: Style | None = None
    size: int | None = Field(default=None, gt=0)
    align: Literal["left", "center", "right"] | None = None
    lines: int | None = Field(default=None, gt=0)
    layout: Literal["column", "row", "grid", "stack"] = "column"
    columns: int = Field(default=4, gt=0)
    padding: tuple[int, int] = (0, 0)
    width: int | None = Field(default=None, ge=0)
    height: int | None = Field(default=None, ge=0)
    grow: bool = False
    bounds: tuple[int, int, int, int] | None = None
    anchor: Anchor | None = None
    margin: int = 48
    visible: list[Condition] = Field(default_factory=list)
    for_each: ForEach | None = None
    let: dict[str, ForEach] = Field(default_factory=dict)
    bind: str | None = None
    min: int = 0
    max: int = 100
    multiline: bool = False
    submit: list[Effect] = Field(default_factory=list)
    on_tap: list[Effect] = Field(default_factory=list)
    on_long_press: list[Effect] = Field(default_factory=list)
    clickable: bool | None = None
    long_clickable: bool | None = None
    checkable: bool | None = None
    checked: bool | None = None
    scrollable: bool = False
    from_end: bool = False
    focusable: bool | None = None
    focused: bool | None = None
    enabled: bool = True
    password: bool = False
    selected: bool | list[Condition] = False
    children: list[Node] = Field(default_factory=list)

    @field_validator("visible", "submit", "on_tap", "on_long_press", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return _as_list(value)

    @field_validator("selected", mode="before")
    @classmethod
    def _selected(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    @field_validator("for_each", mode="before")
    @classmethod
    def _for_each_short(cls, value: Any) -> Any:
        return {"source": value} if isinstance(value, str) else value

    @field_validator("let", mode="before")
    @classmethod
    def _let_short(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {name: {"source": spec} if isinstance(spec, str) else spec for name, spec in value.items()}
        return value

    @field_validator("padding", mode="before")
    @classmethod
    def _padding_pair(cls, value: Any) -> Any:
        return (value, value) if isinstance(value, int) else value

    @field_validator("bounds")
    @classmethod
    def _bounds_order(cls, value: tuple[int, int, int, int] | None) -> tuple[int, int, int, int] | None:
        if value is not None and (value[2] <= value[0] or value[3] <= value[1]):
            raise ValueError("bounds must be [left, top, right, bottom] with right > left, bottom > top")
        return value

    @model_validator(mode="after")
    def _range(self) -> Node:
        if self.max <= self.min:
            raise ValueError("max must be greater than min")
        return self

    @property
    def kind(self) -> Literal["field", "seekbar", "toggle", "plain"]:
        """What ``bind`` means for this node, decided by its class."""
        if self.bind is None:
            return "plain"
        if self.cls.endswith("EditText"):
            return "field"
        if self.cls.endswith("SeekBar"):
            return "seekbar"
        return "toggle"


class Screen(_Spec):
    title: str = ""
    app_bar: bool = True
    background: str | None = Field(default=None, pattern=r"^#[0-9A-Fa-f]{6}$")
    up: bool | None = None
    activity: str | None = None
    focus: str | None = None
    animated: bool = False
    secure: bool = False
    actions: list[Node] = Field(default_factory=list)
    body: list[Node] = Field(default_factory=list)


class App(_Spec):
    package: str = Field(pattern=r"^[A-Za-z][\w]*(\.[A-Za-z][\w]*)+$")
    label: str = Field(min_length=1)
    activity: str = ".MainActivity"
    launcher_icon: bool = True
    preinstalled: bool = True
    color: str | None = Field(default=None, pattern=r"^#[0-9A-Fa-f]{6}$")
    start: str
    state: dict[str, Any] = Field(default_factory=dict)
    screens: dict[str, Screen] = Field(min_length=1)

    @model_validator(mode="after")
    def _start_exists(self) -> App:
        if self.start not in self.screens:
            raise ValueError(f"start screen {self.start!r} is not in screens ({', '.join(self.screens)})")
        return self

    def activity_of(self, screen: str) -> str:
        """The full activity class name reported while ``screen`` is shown."""
        name = self.screens[screen].activity or self.activity
        return self.package + name if name.startswith(".") else name

    def screen_for_activity(self, activity: str) -> str | None:
        """The screen whose activity (full, relative, or the screen name) matches ``activity``."""
        for name in [self.start, *self.screens]:
            full = self.activity_of(name)
            if activity in (name, full, full.removeprefix(self.package)):
                return name
        return None
