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
    soft_input: nothing               # the keyboard covers the bottom of the screen (default resize:
                                      # the content ends above it, as windowSoftInputMode adjustResize)
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

Effect and Condition (``on_tap``, ``visible``, ...) are described in ``behaviour.py``.

Templates: ``{var}`` is a state variable, ``{item}`` / ``{item.field}`` the current list item,
``{@index}`` its position, ``{@time}`` / ``{@date}`` the phone clock, ``{var?yes:no}`` picks a
literal by truthiness and ``{{`` / ``}}`` are literal braces. Values are inserted verbatim and never
re-scanned. A template that is exactly one placeholder yields the raw value (list, bool, int).

Sizes are pixels of a 1080-wide design and are scaled to the phone's width.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ufo_mobile.sim.phone.behaviour import Condition, Effect, Spec, as_list

Style = Literal[
    "body", "title", "secondary", "header", "caption", "display", "bubble_out", "bubble_in",
    "app_icon", "avatar", "button", "fab", "toolbar_title",
]
Anchor = Literal["bottom_right", "bottom_left", "bottom_center", "top_right"]


class ForEach(Spec):
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
        return as_list(value)


class Node(Spec):
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
        return as_list(value)

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


class Screen(Spec):
    title: str = ""
    app_bar: bool = True
    background: str | None = Field(default=None, pattern=r"^#[0-9A-Fa-f]{6}$")
    up: bool | None = None
    activity: str | None = None
    focus: str | None = None
    animated: bool = False
    secure: bool = False
    # what the screen does while the soft keyboard is up, as an activity's windowSoftInputMode says:
    # resize (its content ends above the keyboard, its bottom bar with it: what most apps do) or
    # nothing (the keyboard covers the bottom of the screen)
    soft_input: Literal["resize", "nothing"] = "resize"
    actions: list[Node] = Field(default_factory=list)
    body: list[Node] = Field(default_factory=list)


class App(Spec):
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
