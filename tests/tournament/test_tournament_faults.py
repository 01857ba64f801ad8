"""A tournament's files as a careless director or a full disk leaves them: every
command that reads a hand-broken ledger or tournament file refuses it with file:line and the
field, exit 2, never a traceback; a disk that fills up loses nothing acknowledged; the
file's limits are ones the ledger can hold. Each case is typed as the docs type it and run
by the command line's main in this process (the full disk: typed in a shell of its own)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import in_process

from timekeeper import cli
from timekeeper.tournament.ledger import open_tournament

READERS = (  # every command that reads the ledger, as the docs type them
    ("rounds",),
    ("rounds", "--next"),
    ("standings",),
    ("bracket",),
    ("history",),
    ("export",),
    ("result", "1", "1", "3:1"),
    ("replay", "1", "1", "--reason", "x"),
    ("withdraw", "Player 1", "--reason", "x"),
    ("lot", "A", "--seed", "1"),
    ("draw",),
)


def typed(file: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`timekeeper tournament ACTION -f FILE …` as typed, run by the command line's main in
    this process: its exit code and what it printed."""
    return in_process("tournament", argv[0], "-f", str(file), *argv[1:])


def tk(file: Path, *argv: str) -> int:
    return cli.main(["tournament", argv[0], "-f", str(file), *argv[1:]])


def test_a_drawn_knockout_score_with_ot_says_what_is_wrong(cup: Path) -> None:
    t = open_tournament(cup)[0]
    for m in t.fixtures():
        if not m.knockout:
            assert tk(cup, "result", str(m.slot.round), m.slot.table, "2:1") == 0
    sf = t.fixture("SF1").slot
    done = typed(cup, "result", str(sf.round), sf.table, "1:1", "--ot")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "1:1 --ot has no winner" in done.stderr, done.stderr
    assert "the deciding goal included (e.g. 2:1 --ot)" in done.stderr
    assert "needs overtime" not in done.stderr
    plain = typed(cup, "result", str(sf.round), sf.table, "1:1")
    assert plain.returncode == 2 and "needs overtime (--ot, --sd)" in plain.stderr
    assert typed(cup, "result", str(sf.round), sf.table, "2:1", "--ot").returncode == 0


@pytest.mark.parametrize("byte", [b"\x7f", b"\x07", b"\x1b"], ids=["DEL", "BEL", "ESC"])
def test_a_raw_control_character_in_the_file_is_refused_with_its_line(
    cup: Path, byte: bytes
) -> None:
    raw = cup.read_bytes().replace(b"\ntitle: ", b"\ntitle: Cup" + byte, 1)
    assert raw != cup.read_bytes()
    cup.write_bytes(raw)
    line = raw[: raw.index(byte)].count(b"\n") + 1
    for argv in (("standings",), ("result", "1", "1", "3:1")):
        done = typed(cup, *argv)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert f"cup.yaml:{line}:" in done.stderr and "a control character" in done.stderr


def _lines(cup: Path) -> list[dict]:
    return [
        json.loads(line) for line in cup.with_name("cup.journal.jsonl").read_text().splitlines()
    ]


def _write(cup: Path, lines: list[dict]) -> None:
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    cup.with_name("cup.journal.jsonl").write_text(text, encoding="utf-8")


def _result_as_list(lines: list[dict]) -> tuple[int, str]:
    lines[1]["result"] = [3, 1]
    return 2, "result"


def _groups_as_list(lines: list[dict]) -> tuple[int, str]:
    lines[0]["groups"] = [list(g) for g in lines[0]["groups"].values()]
    return 1, "groups"


def _second_draw(lines: list[dict]) -> tuple[int, str]:
    lines.append({**lines[0], "n": 3})
    return 3, "event"


def _score_999(lines: list[dict]) -> tuple[int, str]:
    lines[1]["result"]["home"] = 999
    return 2, "result.home"


def _decided_bogus(lines: list[dict]) -> tuple[int, str]:
    lines[1]["result"]["decided"] = "bogus"
    return 2, "result.decided"


def _lot_order_as_text(lines: list[dict]) -> tuple[int, str]:
    lines.append({"event": "lot", "n": 3, "group": "A", "order": "Player 1,Player 2", "how": ""})
    return 3, "order"


@pytest.mark.parametrize(
    "edit",
    [
        _result_as_list,
        _groups_as_list,
        _second_draw,
        _score_999,
        _decided_bogus,
        _lot_order_as_text,
    ],
)
def test_a_hand_edited_ledger_is_refused_by_every_command_with_file_line_and_field(
    cup: Path, edit
) -> None:
    assert tk(cup, "result", "1", "1", "3:1") == 0
    lines = _lines(cup)
    line, field = edit(lines)
    _write(cup, lines)
    before = cup.with_name("cup.journal.jsonl").read_bytes()
    for argv in READERS:
        done = typed(cup, *argv)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (argv, done.stderr)
        assert f"cup.journal.jsonl:{line}:1: {field}: " in done.stderr, (argv, done.stderr)
    assert cup.with_name("cup.journal.jsonl").read_bytes() == before  # nothing written


FULL_DISK = """
set -u
mount -t tmpfs -o size=256k tmpfs "$DISK" || exit 97
cp "$CUP" "$DISK/cup.yaml" && cd "$DISK"
tk() { "$PY" -m timekeeper tournament "$@" -f cup.yaml 2>&1; echo "rc=$?"; }
fill() { dd if=/dev/zero of=fill bs=4k 2>/dev/null; }
fill; echo "== draw on a full disk"; tk draw --seed 11
echo "== journal: $(ls cup.journal.jsonl 2>&1)"
rm fill; echo "== draw again"; tk draw --seed 11 >/dev/null
fill; while printf '\\n' >> cup.journal.jsonl 2>/dev/null; do :; done  # its last block too
cp cup.journal.jsonl "$CUP.before"
echo "== result on a full disk"; tk result 1 1 3:1
echo "== standings"; tk standings
rm fill; cmp -s cup.journal.jsonl "$CUP.before"; echo "same=$?"
echo "== result again"; tk result 1 1 3:1
echo "== history"; tk history
"""


@pytest.mark.slow  # (a shell in a user namespace of its own, typing the commands)
def test_a_full_disk_names_the_ledger_says_what_to_do_and_loses_nothing(
    tmp_path: Path,
) -> None:
    """A real full disk: a 256 KB tmpfs mounted in a user namespace of its own (no root
    needed where the kernel allows them), filled up before `draw` and before `result`."""
    cup = tmp_path / "cup.yaml"
    assert cli.main(["tournament", "new", str(cup), "--players", "8"]) == 0
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", FULL_DISK],
        env={**__import__("os").environ, "DISK": str(disk), "CUP": str(cup), "PY": sys.executable},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode == 97 or "unshare:" in done.stderr:
        pytest.skip(f"no user namespace with a tmpfs here: {done.stderr.strip()[:200]}")
    out = done.stdout + done.stderr
    parts = dict(p.split("\n", 1) for p in out.split("== ")[1:])
    assert "Traceback" not in out, out
    full = "No space left on device: nothing written, every entry before stands; make room"
    assert parts["draw on a full disk"].count(f"cup.journal.jsonl: {full}") == 1, out
    assert "rc=1" in parts["draw on a full disk"], out
    assert "No such file" in next(k for k in parts if k.startswith("journal:")), out
    assert f"cup.journal.jsonl: {full}" in parts["result on a full disk"], out
    assert "rc=1" in parts["result on a full disk"], out
    assert "rc=0" in parts["standings"] and "cut off" not in parts["standings"], out
    assert "same=0" in out  # not a byte left of the refused entry
    assert "rc=0" in parts["result again"] and "(ledger entry 2)" in parts["result again"], out
    assert parts["history"].count("result A.1: 3:1") == 1, out


@pytest.mark.parametrize(("size", "tables"), [(256, 4), (128, 64)])
def test_a_field_whose_draw_the_ledger_cannot_hold_is_refused_at_load(
    tmp_path: Path, size: int, tables: int
) -> None:
    """256 players in one group (a draw of minutes) or two groups of 128 on 64 tables (a
    1.6 MB draw line): refused when the file is read, naming the field; nothing written."""
    cup = tmp_path / "cup.yaml"
    players = "\n".join(f"  - P{i}" for i in range(256))
    cup.write_text(
        f"rules: radegast\ntables: {tables}\nplayers:\n{players}\n"
        f"stages:\n  groups:\n    size: {size}\n    advance: 1\n  knockout: {{tree: seeded}}\n",
        encoding="utf-8",
    )
    done = typed(cup, "draw", "--seed", "1")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"cup.yaml:{259 + 3}:11: stages.groups.size: groups of {size} for 256" in done.stderr
    assert "more than the 900 an evening's draw holds: size: 8 or less" in done.stderr
    assert not cup.with_name("cup.journal.jsonl").exists()


def test_a_withdrawn_player_forfeits_the_knockout_they_reach_without_a_second_withdraw(
    tmp_path: Path,
) -> None:
    """Groups of three, the top two to the semi-finals: X beats Y 5:0, withdraws, and
    still finishes second on goal difference (Z 3 +4, X 3 0, Y 3 -4). The semi-final X
    reaches and the 3rd-place match X then falls to are forfeited, with one withdraw."""
    cup = tmp_path / "cup.yaml"
    cup.write_text(
        "rules: radegast\ntables: 2\nplayers: [P1, P2, P3, P4, P5, P6]\n"
        "stages:\n  groups: {size: 3, advance: 2}\n  knockout: {tree: cross, third_place: true}\n",
        encoding="utf-8",
    )
    assert tk(cup, "draw", "--seed", "3") == 0
    t = open_tournament(cup)[0]

    def play(a: str, b: str, score: str) -> None:
        m = next(m for m in t.fixtures() if {m.home, m.away} == {a, b})
        home, away = score.split(":")
        typed_score = score if m.home == a else f"{away}:{home}"
        assert tk(cup, "result", str(m.slot.round), m.slot.table, typed_score) == 0

    x, y, z = t.groups["A"]
    play(x, y, "5:0")
    done = typed(cup, "withdraw", x, "--reason", "went home")
    assert done.returncode == 0, done.stderr
    assert "forfeit: " in done.stdout and f"withdrawn: {x}" in done.stdout
    play(y, z, "0:1")
    b1, b2, b3 = t.groups["B"]
    play(b1, b2, "2:0")
    play(b1, b3, "2:0")
    play(b2, b3, "2:0")
    t = open_tournament(cup)[0]
    assert [r.player for r in t.standings("A")] == [z, x, y]  # X keeps the place earned
    sf = next(n for n in ("SF1", "SF2") if x in (t.fixture(n).home, t.fixture(n).away))
    assert t.fixture(sf).result is not None and t.fixture(sf).result.decided == "forfeit"
    nxt = typed(cup, "rounds", "--next")
    assert nxt.returncode == 0 and sf not in nxt.stdout, nxt.stdout  # its table moved on
    assert "(ready)" not in "".join(line for line in nxt.stdout.splitlines() if x in line)
    other = "SF2" if sf == "SF1" else "SF1"
    o = t.fixture(other).slot
    assert tk(cup, "result", str(o.round), o.table, "3:1") == 0
    t = open_tournament(cup)[0]
    third = t.fixture("3P")
    assert x in (third.home, third.away) and third.result is not None
    assert third.result.at_fault == ("home" if third.home == x else "away")
    assert typed(cup, "withdraw", x, "--reason", "again").returncode == 2
    shown = typed(cup, "bracket").stdout
    assert shown.count("forfeit") == 2, shown


def test_three_groups_seeded_never_pair_two_of_one_group_at_once(tmp_path: Path) -> None:
    """`tree: seeded` for three groups, the top two on: A1 and B1 get the byes (group
    letters are drawn), and nobody meets their own group's other qualifier in their first
    knock-out match (it was C1–C2 in the first round, and A1 against the winner of A2–B2)."""
    cup = tmp_path / "cup.yaml"
    players = ", ".join(f"P{i}" for i in range(1, 10))
    cup.write_text(
        f"rules: radegast\ntables: 3\nplayers: [{players}]\n"
        "stages:\n  groups: {size: 3, advance: 2}\n  knockout: {tree: seeded}\n",
        encoding="utf-8",
    )
    assert tk(cup, "draw", "--seed", "1") == 0
    shown = typed(cup, "bracket")
    assert shown.returncode == 0, shown.stderr
    rows = {line.split()[0]: line for line in shown.stdout.splitlines() if line.strip()}
    assert "C2 – B2" in rows["QF2"] and "C1 – A2" in rows["QF4"], shown.stdout
    assert "A1 – winner QF2" in rows["SF1"] and "B1 – winner QF4" in rows["SF2"], shown.stdout
    assert "C1 – C2" not in shown.stdout and "A2 – B2" not in shown.stdout
