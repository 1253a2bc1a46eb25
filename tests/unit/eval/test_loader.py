"""Loading suite files is strict: every mistake is one line naming the file, the line and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from ufo_mobile.errors import ConfigError
from ufo_mobile.eval import load_suite, load_task

TASK = """\
id: shop-buy
app: com.example.shop
text: Add $qty $item to my cart
params:
  item: {choice: [Oat milk, Bananas]}
  qty: {int: [2, 3]}
budget: 8
setup:
  install: [com.example.shop]
  state:
    com.example.shop: {query: ""}
check: {path: cart, contains: {name: $item, qty: $qty}}
"""

ORACLE = """\
replies:
  - status: CONTINUE
    action: {name: open_app, args: {text: Shop}}
  - {status: FINISH, result: Added $qty $item.}
"""


def write(folder: Path, text: str = TASK, oracle: str | None = ORACLE, name: str = "shop-buy") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    if oracle is not None:
        (folder / "scripts").mkdir(exist_ok=True)
        (folder / "scripts" / f"{name}.yaml").write_text(oracle, encoding="utf-8")
    return path


def error(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_task(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_good_task_loads_with_its_oracle(tmp_path: Path) -> None:
    task = load_task(write(tmp_path))
    assert (task.id, task.kind, task.spec.budget) == ("shop-buy", "feasible", 8)
    instance = task.instantiate(4)
    assert instance.text in {f"Add {n} {item} to my cart" for n in (2, 3) for item in ("Oat milk", "Bananas")}
    assert instance.oracle is not None and instance.oracle.replies[-1] == {
        "status": "FINISH", "result": f"Added {instance.params['qty']} {instance.params['item']}."}
    assert instance.name == "shop-buy-s4"


def test_a_task_without_an_oracle_loads(tmp_path: Path) -> None:
    assert load_task(write(tmp_path, oracle=None)).oracle_doc is None


@pytest.mark.parametrize(("change", "expected"), [
    (("budget: 8", "budgte: 8"), ":7: budgte: unknown key"),
    (("budget: 8", "budget: 0"), ":7: budget: "),  # a bare "key: ": pydantic's words follow
    (("id: shop-buy", "id: shop-sell"), ":1: id: the id must be the file's name without .yaml ('shop-buy')"),
    (("check: {path: cart, contains: {name: $item, qty: $qty}}\n", ""),
     ":1: check: a task that can be done needs a check"),
    (("install: [com.example.shop]", "install: [com.example.shopp]"),
     ":9: setup.install.0: no shipped app 'com.example.shopp'"),
    (("install: [com.example.shop]", "install: []"),
     ":2: app: app 'com.example.shop' is not on the phone"),
    (("{query: \"\"}", "{qeury: \"\"}"), ":11: setup.state.com.example.shop.qeury: com.example.shop has no state "
                                         "variable 'qeury'"),
    (("text: Add $qty $item", "text: Add $qty $items"), ":3: text: unknown parameter $items"),
    (("qty: {int: [2, 3]}", "qty: {int: [3, 2]}"), ":6: params.qty: int: [low, high] needs low <= high"),
    (("qty: {int: [2, 3]}", "qty: {int: [2, 3], time: [\"01:00\", \"02:00\"]}"), ":6: params.qty: a parameter "
                                                                               "needs exactly one of"),
    (("path: cart, contains:", "path: cart, contain:"), ":12: check.contain: unknown key"),
    (("path: cart,", "path: basket,"), ":12: check: com.example.shop has no state variable 'basket'"),
    (("check: {path: cart,", "check: {app: com.example.clock, path: cart,"),
     ":12: check: app 'com.example.clock' is not on the phone"),
    (("qty: $qty}}", "qty: $qtty}}"), ":12: check.contains.qty: unknown parameter $qtty"),
    (("params:\n  item: {choice: [Oat milk, Bananas]}\n  qty: {int: [2, 3]}", "params: [item, qty]"),
     ":4: params: "),
    (("budget: 8", "budget: 8\nbudget: 9"), ":8: budget: duplicate key"),
    (("budget: 8", "budget: [8"), ":8: invalid YAML"),
])
def test_mistakes_in_a_task_file(tmp_path: Path, change: tuple[str, str], expected: str) -> None:
    path = write(tmp_path, TASK.replace(*change))
    message = error(path)
    assert message.startswith(str(path)), message
    assert expected in message, message
    assert message.split(expected, 1)[1].strip() or not expected.endswith(": "), message


@pytest.mark.parametrize(("oracle", "expected"), [
    (ORACLE.replace("Added $qty", "Added $qtty"), ":4: replies.1.result: unknown parameter $qtty"),
    ("replies: []\n", ":1: replies: "),  # pydantic's words follow
    ("replys: [x]\n", ":1: replys: unknown key"),
])
def test_mistakes_in_an_oracle_name_its_file(tmp_path: Path, oracle: str, expected: str) -> None:
    write(tmp_path, oracle=oracle)
    message = error(tmp_path / "shop-buy.yaml")
    assert message.startswith(str(tmp_path / "scripts" / "shop-buy.yaml")), message
    assert expected in message, message
    assert message.split(expected, 1)[1].strip() or not expected.endswith(": "), message


def test_an_id_must_be_a_plain_name_even_when_the_file_has_that_name(tmp_path: Path) -> None:
    path = write(tmp_path, TASK.replace("id: shop-buy", "id: Shop Buy"), name="Shop Buy")
    message = error(path)
    assert message.startswith(f"{path}:1: id: ") and message != f"{path}:1: id: "  # then pydantic's words


def test_a_named_oracle_must_exist(tmp_path: Path) -> None:
    path = write(tmp_path, TASK + "oracle: elsewhere/buy.yaml\n")
    assert error(path) == f"{path}:13: oracle: no oracle script at {tmp_path / 'elsewhere' / 'buy.yaml'}"


def test_an_impossible_task_needs_no_check_and_a_retrieval_task_is_told_apart(tmp_path: Path) -> None:
    impossible = TASK.replace("check: {path: cart, contains: {name: $item, qty: $qty}}\n", "expect: fail\n")
    assert load_task(write(tmp_path, impossible)).kind == "impossible"
    retrieval = TASK.replace("{path: cart, contains: {name: $item, qty: $qty}}", "{all: [{answer: $item}]}")
    assert load_task(write(tmp_path, retrieval)).kind == "retrieval"


def test_files_that_are_not_tasks(tmp_path: Path) -> None:
    empty = write(tmp_path, "", name="empty")
    assert error(empty) == f"{empty}:1: a task file must be a mapping with id, app, text, budget and check"
    listing = write(tmp_path, "- a\n- b\n", name="listing")
    assert "must be a mapping" in error(listing)
    bomb = write(tmp_path, "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdef", "bcdefg", strict=True)), name="bomb")
    assert "too many nodes" in error(bomb)


def test_a_suite_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no task files"):
        load_suite(tmp_path)
    with pytest.raises(ConfigError, match="not a folder of task files"):
        load_suite(tmp_path / "missing")
    write(tmp_path)
    write(tmp_path, TASK.replace("id: shop-buy", "id: shop-buy-2"), name="shop-buy-2")
    assert [task.id for task in load_suite(tmp_path)] == ["shop-buy", "shop-buy-2"]
    write(tmp_path, "id: broken\n", name="broken")
    with pytest.raises(ConfigError, match=r"broken\.yaml:1: app: \S"):  # the missing key named
        load_suite(tmp_path)
