"""`explain --format html` and `graph --format html`: the page of program/page/, one HTML file."""

from __future__ import annotations


def html(page) -> str:
    return page.html()
