"""The pool: one task per phone, lost phones out for good, a retry kept off the phone that failed it."""

from __future__ import annotations

import pytest

from ufo_mobile.fleet.devices import Phone, sim_phones
from ufo_mobile.fleet.pool import Pool


def names(phones: list[Phone]) -> list[str]:
    return [p.name for p in phones]


def test_take_and_give_back_one_task_per_phone() -> None:
    pool = Pool(sim_phones(2))
    a, b = pool.take(), pool.take()
    assert a is not None and b is not None and a.name != b.name
    assert pool.take() is None  # both busy
    assert pool.busy == {"sim-1", "sim-2"}
    pool.give_back(a)
    assert pool.take() == a
    with pytest.raises(ValueError):
        pool.give_back(Phone("sim", "sim-9"))


def test_a_removed_phone_is_never_handed_out_again() -> None:
    pool = Pool(sim_phones(3))
    a = pool.take()
    assert a is not None
    pool.remove(a, "gone")
    assert names(pool.alive) == ["sim-2", "sim-3"] and pool.removed == {"sim-1": "gone"}
    taken = [pool.take(), pool.take(), pool.take()]
    assert names([p for p in taken if p is not None]) == ["sim-2", "sim-3"]
    pool.remove(Phone("sim", "sim-2"), "also gone")  # busy when removed: not given back
    pool.give_back(Phone("sim", "sim-3"))
    assert names(pool.free) == ["sim-3"] and names(pool.alive) == ["sim-3"]


def test_a_retry_avoids_the_phone_it_failed_on_while_another_is_left() -> None:
    pool = Pool(sim_phones(2))
    other = pool.take()  # sim-1 busy
    assert other is not None and other.name == "sim-1"
    assert pool.take(avoid={"sim-2"}) is None  # sim-2 is free, but sim-1 is still in the pool: wait for it
    pool.give_back(other)
    pick = pool.take(avoid={"sim-2"})
    assert pick is not None and pick.name == "sim-1"


def test_the_avoided_phone_is_used_when_it_is_the_only_one_left() -> None:
    pool = Pool(sim_phones(2))
    pool.remove(Phone("sim", "sim-1"), "gone")
    pick = pool.take(avoid={"sim-2"})
    assert pick is not None and pick.name == "sim-2"


def test_a_phone_twice_is_refused() -> None:
    with pytest.raises(ValueError):
        Pool([Phone("sim", "sim-1"), Phone("sim", "sim-1")])
