"""docs/how-it-works.md's picture of the desk and its module map: the picture is drawn from
scripts/draw_desk.py's table (a module moved, or a step changed, without drawing it again
fails here), the page shows it and says each of its flows in words, and the map names every
module of the package in its wing's row."""

from __future__ import annotations

import importlib.util
import re
import sys

from helpers import ROOT

DOC = ROOT / "docs" / "how-it-works.md"
PACKAGE = ROOT / "timekeeper"


def draw_desk():  # scripts/ is no package
    spec = importlib.util.spec_from_file_location("draw_desk", ROOT / "scripts" / "draw_desk.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module


def test_the_picture_is_drawn_from_its_table() -> None:
    draw = draw_desk()
    assert draw.PICTURE.read_text(encoding="utf-8") == draw.svg(), (
        "docs/img/desk.svg differs from scripts/draw_desk.py's table: run scripts/draw_desk.py"
    )
    assert draw.main(["--check"]) == 0


def test_a_module_moved_is_a_stale_picture(monkeypatch) -> None:
    """The lanes name their files by what the code defines: a class moved to another module
    changes the picture, and one that is gone stops the drawing, naming it."""
    draw = draw_desk()
    before = draw.svg()
    assert "hall/desk/intake.py" in before
    moved = dict(draw.definitions())
    moved["Intake"] = [PACKAGE / "hall" / "desk" / "results.py"]
    monkeypatch.setattr(draw, "definitions", lambda: moved)
    after = draw.svg()
    assert after != before and "hall/desk/results.py" in after
    del moved["Intake"]
    try:
        draw.svg()
    except LookupError as exc:
        assert "'Intake'" in str(exc)
    else:
        raise AssertionError("a lane's part that is gone was drawn")


def section(text: str, title: str) -> str:
    _, found, rest = text.partition(f"\n## {title}\n")
    assert found, f"how-it-works.md has no section {title!r}"
    return re.split(r"\n#{1,2} ", rest)[0]


def test_the_page_shows_the_picture_and_says_each_flow() -> None:
    draw = draw_desk()
    text = DOC.read_text(encoding="utf-8")
    desk = section(text, "The desk")
    assert re.search(r"!\[[^\]]+\]\(img/desk\.svg\)", desk), "no image link to img/desk.svg"
    assert text.index("| wing | holds |") < text.index("\n## The desk\n"), (
        "the desk's section comes after the module map"
    )
    for flow in draw.FLOWS:
        said = re.search(rf"\*\*{re.escape(flow.title)}\.\*\*(.+?)(?=\n\d+\. |\Z)", desk, re.S)
        assert said and len(said.group(1).split()) >= 30, f"no few lines on {flow.title!r}"


# ---------------------------------------------------------------------- the module map


def module_map(text: str) -> dict[str, str]:
    """The map's rows: the wing's folder (or, for a module at the package's top, the
    package's) -> the row's text."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| wing | holds |"))
    rows: dict[str, str] = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        key = re.findall(r"`([^`]+)`", line.split("|")[1])[0]
        folder = key if key.endswith("/") else key.rsplit("/", 1)[0] + "/"
        rows[folder] = rows.get(folder, "") + line
    return rows


def unnamed(text: str) -> list[str]:
    """The package's modules the map does not name: neither by file name in its wing's row
    (the row of the deepest folder holding it) nor by its path anywhere in the map."""
    rows = module_map(text)
    everything = " ".join(rows.values())
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in ("__init__.py", "__main__.py"):
            continue
        name = path.relative_to(ROOT).as_posix()
        if f"`{name}`" in everything or f"`{name.removeprefix('timekeeper/')}`" in everything:
            continue
        wings = [folder for folder in rows if name.startswith(folder)]
        if wings:
            folder = max(wings, key=len)
            inside = name.removeprefix(folder)
            named = re.findall(r"`([^`]+\.py)`", rows[folder])
            if any(inside == n or inside.endswith("/" + n) for n in named):
                continue
        missing.append(name)
    return missing


def test_the_module_map_names_every_module() -> None:
    missing = unnamed(DOC.read_text(encoding="utf-8"))
    assert not missing, (
        "docs/how-it-works.md's module map does not name these modules (add each, with a few "
        "words on what it holds, to its wing's row): " + ", ".join(missing)
    )


def test_a_module_left_out_is_named() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert unnamed(text) == []
    without = text.replace("`intake.py` with", "with").replace("`desksocket.py`", "its socket")
    assert unnamed(without) == [
        "timekeeper/hall/desk/desksocket.py",
        "timekeeper/hall/desk/intake.py",
    ]


def test_the_map_names_no_module_that_is_gone() -> None:
    """Every file the map names in a wing's row is a module of that wing (a module moved
    or removed is taken out of the map, or renamed there)."""
    rows = module_map(DOC.read_text(encoding="utf-8"))
    gone = []
    for folder, row in rows.items():
        have = {p.relative_to(ROOT).as_posix() for p in (ROOT / folder).rglob("*.py")}
        for n in re.findall(r"`([^`]+\.py)`", row):
            if not any(h == n or h.endswith("/" + n) or h == folder + n for h in have):
                gone.append(f"{folder}: {n}")
    assert not gone, "docs/how-it-works.md's module map names files that are not there: " + (
        ", ".join(gone)
    )
