"""The house: the package's wings show the flow (rules → sound → show → box → cli), a lower
wing never imports a higher one, and no module imports another that imports it back.

Every import counts, those inside functions too: a late import is still a dependency."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers import ROOT

PACKAGE = ROOT / "timekeeper"
# lowest first; a wing may import its own modules and those of the wings before it
WINGS = ("rules", "tournament", "sound", "show", "web", "hall", "box")
# the top of the house: may import any wing
TOP = ("cli", "__main__", "__init__")  # (cli: a package, each wing's commands in it)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """The timekeeper modules `path` imports (a `from timekeeper.x import y` that names a
    module y counts as importing timekeeper.x.y)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("timekeeper")}
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.startswith("timekeeper")
        ):
            found.add(node.module)
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                if _exists(candidate):
                    found.add(candidate)
    return {name for name in found if _exists(name)}


def _exists(name: str) -> bool:
    rel = Path(*name.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").is_file() or (
        PACKAGE.parent / rel / "__init__.py"
    ).is_file()


def graph() -> dict[str, set[str]]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name in ("profiles", "sounds") or "sounds" in path.parts:
            continue
        name = module_name(path)
        # a package's __init__ is imported by its modules' imports anyway: leave it out
        out[name] = {m for m in imports_of(path) if m != name and not name.startswith(m + ".")}
    return out


def wing_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in WINGS else None


def test_every_module_lives_in_a_wing_or_at_the_top() -> None:
    loose = [
        m
        for m in graph()
        if m != "timekeeper" and wing_of(m) is None and m.split(".")[1] not in TOP
    ]
    assert not loose, f"modules outside the wings {WINGS}: {loose}"


def test_a_lower_wing_never_imports_a_higher_one() -> None:
    wrong = []
    for module, deps in graph().items():
        wing = wing_of(module)
        if wing is None:
            continue
        for dep in deps:
            other = wing_of(dep)
            if other is None and dep != "timekeeper":
                wrong.append(f"{module} imports {dep} (the top of the house)")
            elif other is not None and WINGS.index(other) > WINGS.index(wing):
                wrong.append(f"{module} ({wing}) imports {dep} ({other})")
    assert not wrong, "\n".join(sorted(wrong))


# the hall by audience: each part may import the bus, the bus neither of the others
HALL_PARTS = {"bus": (), "table": ("bus",), "desk": ("bus",)}
HALL_TOP = ("__init__", "practice")  # the whole hall on one machine: above its parts


def hall_part(module: str) -> str | None:
    parts = module.split(".")
    inside = parts[:2] == ["timekeeper", "hall"] and len(parts) > 2 and parts[2] in HALL_PARTS
    return parts[2] if inside else None


def test_the_halls_table_and_desk_never_import_each_other() -> None:
    """hall/ is split by audience: bus/ (the messages, the broker, the clock) is shared;
    table/ is what a box runs and desk/ what the desk runs, and neither imports the other,
    nor the bus either of them. Every hall module lives in one of them (or is the package's
    own `practice`)."""
    g = graph()
    loose = [
        m
        for m in g
        if m.startswith("timekeeper.hall.")
        and hall_part(m) is None
        and m.split(".")[-1] not in HALL_TOP
    ]
    assert not loose, f"hall modules outside bus/, table/ and desk/: {loose}"
    wrong = []
    for module, deps in g.items():
        part = hall_part(module)
        if part is None:
            continue
        for dep in deps:
            other = hall_part(dep)
            if dep.startswith("timekeeper.hall.") and other is None:
                wrong.append(f"{module} ({part}) imports {dep} (the hall's top)")
            elif other is not None and other != part and other not in HALL_PARTS[part]:
                wrong.append(f"{module} ({part}) imports {dep} ({other})")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_circles() -> None:
    g = graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(g.get(node, ())):
            if state.get(dep) == 1:
                cycles.append([*path[path.index(dep) :], dep])
            elif dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for node in sorted(g):
        if node not in state:
            visit(node, [node])
    assert not cycles, "import circles:\n" + "\n".join(" → ".join(c) for c in cycles)


def test_the_rules_wing_does_no_io_but_reading_yaml() -> None:
    """The engine is told the time: nothing in rules reads a clock, sleeps or opens devices.
    The tournament wing is as pure (it reads and writes only its own files)."""
    banned = ("time", "socket", "threading", "pygame", "numpy", "gpiozero", "subprocess")
    wrong = []
    for path in [*(PACKAGE / "rules").glob("*.py"), *(PACKAGE / "tournament").glob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            )
            wrong += [f"{path.name}: {n}" for n in names if n.split(".")[0] in banned]
    assert not wrong, wrong


def test_mixing_is_the_sound_wings_own_module() -> None:
    """The mixing arithmetic that render and stream share is written once, in sound/mixing:
    no other module defines a function of the same name, and both import it from there."""
    import inspect

    from timekeeper.sound import mixing

    mixing_path = Path(inspect.getfile(mixing)).resolve()
    own = {
        name
        for name, thing in vars(mixing).items()
        if inspect.isfunction(thing) and thing.__module__ == mixing.__name__
    }
    assert "mix_into" in own
    copies = [
        f"{path.relative_to(PACKAGE)}: {node.name}"
        for path in PACKAGE.rglob("*.py")
        if path.resolve() != mixing_path
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef) and node.name in own
    ]
    assert not copies, copies
    for user in ("render", "voices"):
        assert mixing.__name__ in imports_of(PACKAGE / "sound" / f"{user}.py"), user


def test_a_test_module_imports_test_modules_of_its_own_folder_only() -> None:
    """A test module found only because pytest put another wing's folder on sys.path imports
    when the whole suite runs and fails when its own folder runs alone: what tests of more
    than one wing share lives in a helper at tests/ top (cups, helpers, running, …)."""
    tests = Path(__file__).resolve().parents[1]
    crossing = []
    for file in tests.glob("*/test_*.py"):
        for name in re.findall(r"^\s*(?:from|import) (test_\w+)", file.read_text(), re.M):
            if not (file.parent / f"{name}.py").exists():
                crossing.append(f"{file.relative_to(tests)} imports {name}")
    assert not crossing, crossing
