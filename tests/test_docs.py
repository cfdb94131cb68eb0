"""The docs stay readable and linked: every reference page short enough to read in a few
minutes, and every relative link in the docs and the README pointing at something that exists.

The reference pages (docs/*.md) say what the code does now; dated experiments live in
docs/measurements/ (issue 62), which has no length limit: a record is as long as its data.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MOST_LINES = 300
# Reference pages allowed to be longer, and why. None today: a page that grows past the limit
# is split by concept, or its dated parts moved to docs/measurements/.
EXEMPT: dict[str, str] = {}

# [text](target) and ![alt](target); the target up to the first space or closing parenthesis.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~)")


def reference_pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def linked_pages() -> list[Path]:
    """Every markdown file whose links are checked: the README and all of docs/, records included."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def links(page: Path) -> list[tuple[int, str]]:
    """(line number, target) of every markdown link outside fenced code blocks and inline code."""
    found, fenced = [], False
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        found += [(number, target) for target in LINK.findall(line)]
    return found


def relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE) and not target.startswith("//")


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes of a page's headings: lower case, punctuation dropped, spaces to
    hyphens, repeats numbered."""
    made: dict[str, int] = {}
    result = set()
    fenced = False
    for line in page.read_text().splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        count = made.get(slug, 0)
        made[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


@pytest.mark.parametrize("page", reference_pages(), ids=lambda p: p.name)
def test_every_reference_page_is_short_enough_to_read(page):
    lines = len(page.read_text().splitlines())
    if page.name in EXEMPT:
        pytest.skip(EXEMPT[page.name])
    assert lines <= MOST_LINES, (
        f"docs/{page.name} has {lines} lines (at most {MOST_LINES}): split it by concept, or move its dated "
        "experiments to docs/measurements/ and link them")


def test_every_relative_link_in_the_docs_and_the_readme_resolves_to_a_file():
    broken = []
    for page in linked_pages():
        for number, target in links(page):
            if not relative(target):
                continue
            path = target.split("#", 1)[0]
            if path and not (page.parent / path).exists():
                broken.append(f"{page.relative_to(ROOT)}:{number}: {target}")
    assert broken == []


def test_links_into_a_reference_page_name_one_of_its_headings():
    """A link with an anchor into a page that was rewritten must follow the section it meant.
    The records in docs/measurements/ are kept as they were written, so their own anchors are not held
    to this; links from the README and the reference pages are."""
    broken = []
    for page in [ROOT / "README.md", *reference_pages()]:
        for number, target in links(page):
            if not relative(target) or "#" not in target:
                continue
            path, anchor = target.split("#", 1)
            goal = (page.parent / path) if path else page
            if goal.suffix == ".md" and goal.exists() and anchor not in anchors(goal):
                broken.append(f"{page.relative_to(ROOT)}:{number}: {target}")
    assert broken == []


def test_the_link_checker_sees_links_and_misses_none(tmp_path):
    """The checks above can fail: a page with a broken link, a link inside code, and a good one."""
    (tmp_path / "there.md").write_text("# A heading, with words\n")
    page = tmp_path / "page.md"
    page.write_text("See [there](there.md#a-heading-with-words) and ![pic](missing.png).\n"
                    "`[not a link](nowhere.md)`\n```\n[nor this](nowhere.md)\n```\n[web](https://example.com)\n")
    found = [target for _, target in links(page)]
    assert found == ["there.md#a-heading-with-words", "missing.png", "https://example.com"]
    assert [t for t in found if relative(t) and not (tmp_path / t.split("#")[0]).exists()] == ["missing.png"]
    assert anchors(tmp_path / "there.md") == {"a-heading-with-words"}
