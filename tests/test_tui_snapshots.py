"""Snapshots of each screen of the app (pytest-textual-snapshot), on fixed answers so that the
pictures do not change with the date: a layout change shows up as a failed comparison.

After an intended change: `uv run --locked pytest tests/test_tui_snapshots.py --snapshot-update`,
then look at the new SVGs in tests/__snapshots__/ before committing them."""

from __future__ import annotations

import pytest

pytest.importorskip("pytest_textual_snapshot", reason="pytest-textual-snapshot (a dev dependency) is not installed")

from canned_remote import CannedRemote

from jezero.tui.app import JezeroApp

SIZE = (110, 32)


def app() -> JezeroApp:
    return JezeroApp(CannedRemote())


async def settle(pilot) -> None:
    """Let the debounced searches and the workers finish."""
    for _ in range(3):
        await pilot.pause(0.3)
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_home(snap_compare):
    assert snap_compare(app(), terminal_size=SIZE, run_before=settle)


def test_search_with_explanation(snap_compare):
    async def before(pilot):
        await pilot.press("s", *"analytics", "down")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=SIZE, run_before=before)


def test_item(snap_compare):
    async def before(pilot):
        await pilot.press("s", *"docker", "down")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=SIZE, run_before=before)


def test_timeline(snap_compare):
    async def before(pilot):
        await pilot.press("t")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=SIZE, run_before=before)


def test_agents(snap_compare):
    async def before(pilot):
        await pilot.press("a")
        await settle(pilot)

    # Wider: a device row carries its last upload, core and plugin versions besides the health.
    assert snap_compare(app(), terminal_size=(150, 32), run_before=before)


def test_agent_view(snap_compare):
    async def before(pilot):
        await pilot.press("v")
        await settle(pilot)
        await pilot.press("down", "enter", *"drop the plausible script from the shop")
        await settle(pilot)
        await pilot.press("escape")  # back to the projects: no blinking cursor in the picture
        await settle(pilot)

    assert snap_compare(app(), terminal_size=SIZE, run_before=before)
