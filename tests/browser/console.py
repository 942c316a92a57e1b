"""What the console's browser tests check on every page they reach: that it
fits the window, and the way back to the admin index."""

from __future__ import annotations


def fits(page) -> None:
    """Neither the content area nor a list's table container scrolls sideways."""
    overflow = page.evaluate(
        """() => [...document.querySelectorAll('#content, #changelist .results, #content-main, #changelist-form')]
              .filter(el => el.scrollWidth > el.clientWidth + 1)
              .map(el => `${el.id || el.className}: ${el.scrollWidth} > ${el.clientWidth}`)"""
    )
    assert overflow == [], overflow
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def home(page) -> None:
    """Back to the admin index, by its link in the header."""
    page.click("#site-name a")
    page.wait_for_selector("#console-shortcuts")
