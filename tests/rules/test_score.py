"""The score in every profile, and the entries and aids the seeds imply:
goals with their time and scorer, a ball-hockey power-play goal ending a minor, the Polish
shoot-out ending once decided, the replay from the start that keeps the goals (ITHF 4.5), the
match penalty and the penalty shot (ball hockey 17e, 15), the ITHF 4.6 forfeit point and ball
hockey's no-show countdown (rule 5). The engine is told the time; nothing sleeps."""

from __future__ import annotations

import dataclasses
import json
import textwrap
from pathlib import Path

import pytest

from timekeeper.box.journal import dumps, loads
from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Engine, Snapshot, State
from timekeeper.rules.replay import parse_actions, replay
from timekeeper.show.status import status_text


def cmd(text: str) -> Command:
    return Command.parse(text)


def play(eng: Engine, *steps: tuple[float, str]) -> list:
    cues = []
    for at, text in steps:
        cues += eng.handle(cmd(text), at)
    return cues


def custom(tmp_path: Path, text: str, name: str = "custom") -> profile.Profile:
    path = tmp_path / f"{name}.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return profile.load(str(path))


# ---------------------------------------------------------------- the score, every profile


def test_goals_are_kept_with_their_time_and_scorer_in_the_status() -> None:
    eng = Engine(profile.load("ithf"))
    assert eng.status(0).score == {"home": 0, "away": 0} and eng.status(0).goals == []
    with pytest.raises(Refused, match="not begun"):
        eng.handle(cmd("goal home"), 0)
    cues = play(eng, (0, "start"), (20, "goal home 17"), (50, "goal away"), (80, "goal home"))
    goals = [c for c in cues if c.name == "goal"]
    assert [(c.due, c.detail) for c in goals] == [
        (20, "home #17 1:0"),
        (50, "away 1:1"),
        (80, "home 2:1"),
    ]
    s = eng.status(90)
    assert s.score == {"home": 2, "away": 1}
    assert s.goals[0] == {"team": "home", "period": 1, "play_time": 0.0, "player": "17"}
    assert s.goals[1]["play_time"] == 30.0  # of play, after the 20-s pre-start
    assert "  2:1  " in status_text(s)
    play(eng, (95, "undo-goal home"))
    assert eng.status(95).score == {"home": 1, "away": 1}
    assert eng.status(95).goals[-1]["team"] == "away"  # home's latest was taken back
    with pytest.raises(Refused, match="no goal to take back"):
        play(eng, (96, "undo-goal home"), (97, "undo-goal home"))


def test_a_goal_entered_in_the_break_counts_for_the_period_just_played() -> None:
    eng = Engine(profile.load("pl-3x6"))
    play(eng, (0, "start"))
    eng.advance(361)  # period 1 over, in the break
    assert eng.state is State.BREAK
    play(eng, (362, "goal away 9"))
    assert eng.status(362).goals == [
        {"team": "away", "period": 1, "play_time": 360.0, "player": "9"}
    ]


def test_goal_commands_parse_as_ctl_and_actions_write_them() -> None:
    assert cmd("goal home 17") == Command(Action.GOAL, team="home", player="17")
    assert cmd("goal=away") == Command(Action.GOAL, team="away")
    assert str(cmd("goal h 17")) == "goal=home:17" and str(cmd("undo-goal a")) == "undo-goal=away"
    assert parse_actions("30:goal=home:17")[0].command == cmd("goal home 17")
    with pytest.raises(ValueError, match="goal TEAM"):
        cmd("goal home 17 18")
    with pytest.raises(ValueError, match="unknown team"):
        cmd("goal nobody")


def test_a_replayed_render_carries_the_goals_and_the_score_is_no_signal() -> None:
    result = replay(profile.load("ithf"), parse_actions("30:goal=home:17,40:goal=away"))
    assert [c.detail for c in result.cues if c.name == "goal"] == ["home #17 1:0", "away 1:1"]
    assert "goal" not in profile.load("ithf").cue_names  # no pack needs a goal sound


# ---------------------------------------------------------------- ball hockey: power play

# ice-hockey practice, a setting for leagues that play it (off in the hokejbal
# profiles, after ball hockey's rule 30 d)
POWER_PLAY = """\
    extends: hokejbal
    penalties:
      power_play_goal_ends_minor: true
"""


def test_the_seed_never_lets_a_goal_end_a_penalty_being_served() -> None:
    """Ball hockey rule 30 d (seed 003): "Ak družstvo, ktoré sa previnilo už bolo oslabené,
    avizovaný menší trest sa zruší, ale všetky tresty odpykávané na trestnej lavici
    zostávajú" — if the offending team is already short-handed, the signalled minor is
    cancelled, but all penalties being served on the bench stay. So the hokejbal profiles
    (and the setting's default) let no goal end a running minor."""
    for name in ("hokejbal", "hokejbal-playoff", "hokejbal-group-ot"):
        p = profile.load(name)
        assert p.penalties is not None and not p.penalties.power_play_goal_ends_minor, name
    eng = Engine(profile.load("hokejbal"))
    play(eng, (0, "start"), (10, "penalty away minor 4"), (12, "penalty away minor 5"))
    cues = play(eng, (30, "goal home 17"))  # a power-play goal
    assert [c.detail for c in cues] == ["home #17 1:0"]  # it ends nothing
    assert [p.state for p in eng.status(31).teams["away"].penalties] == ["running", "running"]


def test_a_power_play_goal_ends_the_short_handed_teams_first_running_minor(tmp_path: Path) -> None:
    eng = Engine(custom(tmp_path, POWER_PLAY))
    play(eng, (0, "start"), (10, "penalty away minor 4"), (12, "penalty away major 5"))
    cues = play(eng, (30, "goal home 17"))
    assert [c.detail for c in cues] == ["home #17 1:0, ends away #1 4 minor"]
    left = [(p.kinds, p.state) for p in eng.status(31).teams["away"].penalties]
    assert left == [("major", "running")]  # a major is served in full
    cues = play(eng, (40, "goal home"))  # still short-handed, but no minor to end
    assert [c.detail for c in cues] == ["home 2:0"]


def test_undo_goal_gives_back_the_minor_a_power_play_goal_ended(tmp_path: Path) -> None:
    eng = Engine(custom(tmp_path, POWER_PLAY))
    play(
        eng,
        (0, "start"),
        (10, "penalty away minor"),
        (11, "penalty away minor"),
        (12, "penalty away minor 3"),
    )  # two run, #3 waits
    play(eng, (30, "goal home"))  # ends #1 (least time left); #3 moves up
    assert [(p.id, p.state) for p in eng.status(30).teams["away"].penalties] == [
        (2, "running"),
        (3, "running"),
    ]
    play(eng, (40, "pause"), (45, "undo-goal home"))  # the wrong team's key
    shown = [(p.id, p.state, p.remaining) for p in eng.status(45).teams["away"].penalties]
    assert shown == [(1, "running", 30), (2, "running", 31), (3, "waiting", 60)]
    assert eng.status(45).score == {"home": 0, "away": 0}
    play(eng, (50, "resume"))
    assert [(c.due, c.detail) for c in eng.advance(80)] == [(80, "away #1 minor")]


def test_a_goal_at_equal_strength_or_by_the_short_handed_team_ends_nothing(tmp_path: Path) -> None:
    eng = Engine(custom(tmp_path, POWER_PLAY))
    play(eng, (0, "start"), (10, "penalty away minor"), (11, "penalty home minor"))
    play(eng, (20, "goal home"))  # 4 on 4
    assert len(eng.status(20).teams["away"].penalties) == 1
    play(eng, (30, "penalty home minor"))
    play(eng, (40, "goal home"))  # home is short: its goal ends none of its own minors
    assert [len(eng.status(40).teams[t].penalties) for t in ("home", "away")] == [2, 1]


def test_the_power_play_rule_is_a_profile_setting(tmp_path: Path) -> None:
    assert custom(tmp_path, POWER_PLAY, "on").penalties.power_play_goal_ends_minor
    off = custom(
        tmp_path,
        """\
        extends: hokejbal
        penalties:
          minor: 60
    """,
    )
    assert not off.penalties.power_play_goal_ends_minor  # the default
    eng = Engine(off)
    play(eng, (0, "start"), (10, "penalty away minor"), (20, "goal home"))
    assert len(eng.status(20).teams["away"].penalties) == 1  # `release away` does it by hand


# ---------------------------------------------------------------- Polish shoot-out


def ko_shootout() -> Engine:
    eng = Engine(profile.load("pl-3x6-ko"))
    eng.handle(cmd("start"), 0)
    now = 0.0
    while eng.state is not State.SHOOTOUT:
        now = eng.next_deadline() or now
        eng.advance(now)
        if eng.state is State.WAITING:
            eng.handle(cmd("next"), now)
    return eng


def test_a_polish_shootout_ends_by_itself_once_decided() -> None:
    eng = ko_shootout()
    t = 2000.0
    cues = []
    for team, result in [("home", "goal"), ("away", "miss"), ("home", "goal"), ("away", "miss")]:
        cues += eng.handle(cmd("next"), t)  # the 15-s shot with its signal
        cues += eng.handle(cmd(f"attempt {team} {result}"), t + 5)
        t += 20
    assert eng.state is State.FINISHED  # 2:0 with one each to go: decided
    assert [c.name for c in cues].count("shot_start") == 4 and cues[-1].name == "end"
    assert eng.status(t).shot == 4 and eng.status(t).shootout_score == "home 2/2 away 0/2"
    assert "home 2/2 away 0/2" in status_text(eng.status(t))


def test_goal_in_a_shootout_is_a_scored_attempt_and_next_still_works() -> None:
    eng = ko_shootout()
    eng.handle(cmd("next"), 2000)
    eng.handle(cmd("goal away"), 2003)  # key `a g` during a shot
    assert eng.m.tally.shootout.goals == {"home": 0, "away": 1}
    eng.handle(cmd("next"), 2010)
    eng.handle(cmd("next"), 2012)  # a shot ended early without a result: allowed, as before
    assert eng.state is State.SHOOTOUT and eng.status(2012).score == {"home": 0, "away": 0}
    with pytest.raises(Refused, match="turn"):
        eng.handle(cmd("attempt away miss"), 2020)


# ---------------------------------------------------------------- journal and replay (4.5)


def test_the_journal_keeps_the_goals_and_old_journals_still_load() -> None:
    eng = Engine(profile.load("ithf"))
    play(eng, (0, "start"), (30, "goal home 7"), (40, "goal away"), (50, "pause"))
    text = dumps(eng.snapshot(60))
    again = Engine(profile.load("ithf"))
    again.restore(loads(text))
    assert again.state is State.STOPPED and again.status(0).score == {"home": 1, "away": 1}
    assert again.status(0).goals == eng.status(60).goals
    old = json.loads(text)
    del old["score"]  # a journal written before the score
    again.restore(loads(json.dumps(old)))
    assert again.state is State.STOPPED and again.status(0).goals == []


def test_a_polish_shootout_score_survives_the_journal() -> None:
    eng = ko_shootout()
    play(eng, (2000, "attempt home goal"), (2010, "attempt away miss"))
    again = Engine(eng.profile)
    again.restore(loads(dumps(eng.snapshot(2020))))
    assert again.m.tally.shootout.goals == {"home": 1, "away": 0}
    assert again.m.tally.shootout.next_team() == "home"


def test_replay_from_the_start_keeps_the_goals_ithf_4_5() -> None:
    eng = Engine(profile.load("ithf"))
    play(eng, (0, "start"), (30, "goal home 7"), (100, "goal away"))
    with pytest.raises(Refused, match="stopped"):
        eng.handle(cmd("replay"), 110)  # not while the clock runs
    play(eng, (120, "pause"))
    restored = Engine(eng.profile)  # the timer failed: back from the journal, stopped
    restored.restore(loads(dumps(eng.snapshot(130))))
    assert restored.handle(cmd("replay"), 1000) == []
    assert restored.state is State.IDLE and restored.status(1000).score == {"home": 1, "away": 1}
    again = Engine(eng.profile)  # a crash now: the goals are still there
    again.restore(loads(dumps(restored.snapshot(1001))))
    assert again.status(0).score == {"home": 1, "away": 1}
    cues = restored.handle(cmd("start"), 1010)
    assert [c.name for c in cues] == ["prestart"]  # the whole match again, from its signal
    restored.advance(1030)
    assert restored.status(1030).play_time == 0 and len(restored.status(1030).goals) == 2
    play(restored, (1050, "goal home"))
    assert restored.status(1050).score == {"home": 2, "away": 1}
    restored.handle(cmd("reset"), 1060)
    assert restored.status(1060).goals == []  # a new match starts from 0:0


def test_a_finished_match_in_the_journal_brings_back_no_goals() -> None:
    eng = Engine(profile.load("ithf"))
    play(eng, (0, "start"), (30, "goal home"))
    eng.advance(400)
    assert eng.state is State.FINISHED
    again = Engine(eng.profile)
    again.restore(loads(dumps(eng.snapshot(400))))
    again.handle(cmd("start"), 500)
    assert again.status(500).goals == []


# ---------------------------------------------------------------- match penalty (17e)


def test_a_match_penalty_keeps_the_team_short_five_minutes_and_the_player_out() -> None:
    eng = Engine(profile.load("hokejbal"))
    play(eng, (0, "start"), (10, "penalty away match 8"))
    s = eng.status(10).teams["away"].penalties
    assert [(p.kinds, p.state, p.remaining) for p in s] == [("match", "running", 300.0)]
    play(eng, (20, "goal home"))  # a power-play goal does not shorten it
    assert eng.status(20).teams["away"].penalties[0].remaining == 290
    cues = eng.advance(310)
    assert [(c.name, c.due, c.detail) for c in cues] == [("penalty_end", 310, "away #1 8 match")]
    s = eng.status(311).teams["away"].penalties
    assert [(p.kinds, p.state, p.remaining) for p in s] == [("match", "game", None)]
    with pytest.raises(ValueError, match="match penalty comes once, last"):
        cmd("penalty home match+minor")
    assert cmd("penalty home minor+match").kinds == ("minor", "match")


# ---------------------------------------------------------------- penalty shot (15, 17f)


def test_a_penalty_shot_has_its_own_signals_while_the_clock_is_stopped() -> None:
    eng = Engine(profile.load("hokejbal"))
    play(eng, (0, "start"))
    with pytest.raises(Refused, match="while the clock is stopped"):
        eng.handle(cmd("penalty-shot home"), 10)
    play(eng, (20, "pause"))
    cues = play(eng, (25, "penalty-shot home"))
    assert [(c.name, c.detail) for c in cues] == [("shot_start", "home penalty shot")]
    assert eng.status(26).penalty_shot == "home" and "PENALTY SHOT home" in status_text(
        eng.status(26)
    )
    for refused in ("resume", "timeout away", "penalty-shot away", "attempt away goal"):
        with pytest.raises(Refused):
            eng.handle(cmd(refused), 27)
    cues = play(eng, (30, "attempt home goal"))
    assert [(c.name, c.detail) for c in cues] == [
        ("shot_end", "home penalty shot goal"),
        ("goal", "home penalty shot 1:0"),
    ]
    assert eng.status(30).goals[0]["play_time"] == 20 and eng.status(30).penalty_shot is None
    cues = play(eng, (40, "penalty-shot away"), (50, "next"))  # no result entered: NEXT ends it
    assert [c.name for c in cues] == ["shot_start", "shot_end"]
    play(eng, (55, "penalty-shot away"), (60, "goal away"))  # the key `a g`: a scored shot
    assert eng.status(60).score == {"home": 1, "away": 1}
    play(eng, (70, "resume"))
    assert eng.state is State.RUNNING


def test_rod_hockey_has_no_penalty_shot() -> None:
    eng = Engine(profile.load("ithf"))
    play(eng, (0, "start"), (30, "pause"))
    with pytest.raises(Refused, match="has no penalties"):
        eng.handle(cmd("penalty-shot home"), 31)


# ---------------------------------------------------------------- operator aids (ITHF 4.6, rule 5)


def test_the_forfeit_point_sounds_30_s_of_play_after_the_start(tmp_path: Path) -> None:
    ithf = custom(
        tmp_path,
        """\
        extends: ithf
        forfeit_signal: true
    """,
    )
    assert "forfeit" in ithf.cue_names and "forfeit" not in profile.load("ithf").cue_names
    result = replay(ithf, parse_actions("10:pause,25:resume"))
    forfeit = [(c.due - result.start, c.play_time) for c in result.cues if c.name == "forfeit"]
    assert forfeit == [(45, 30)]  # 30 s of play: the stop moved it
    ithf_playoff = custom(
        tmp_path,
        """\
        extends: ithf-playoff
        forfeit_signal: true
    """,
        "po",
    )
    assert [c.name for c in replay(ithf_playoff).cues].count("forfeit") == 1  # not in overtime


def test_the_no_show_countdown_runs_from_the_scheduled_start() -> None:
    ball = profile.load("hokejbal")  # rule 5: the hokejbal profiles ask for it
    eng = Engine(ball)
    assert eng.handle(cmd("no-show 1:30"), 100) == []  # the start was due 1:30 ago
    assert eng.state is State.IDLE and eng.status(110).countdown == 200
    assert "no-show 3:20" in status_text(eng.status(110))
    assert [(c.name, c.due) for c in eng.advance(400)] == [("forfeit", 310)]
    assert eng.status(400).countdown is None
    eng.handle(cmd("no-show"), 500)
    assert eng.handle(cmd("start"), 600)[0].name == "start"  # the team came: no forfeit
    assert all(c.name != "forfeit" for c in eng.advance(2000))
    running = Engine(ball)
    running.handle(cmd("start"), 0)
    with pytest.raises(Refused, match="before a match"):
        running.handle(cmd("no-show"), 1)


def test_no_show_is_refused_where_the_profile_does_not_ask_for_it() -> None:
    with pytest.raises(Refused, match="no no-show countdown"):
        Engine(profile.load("ithf")).handle(cmd("no-show"), 0)
    with pytest.raises(Refused, match="under 5:00"):
        Engine(profile.load("hokejbal")).handle(cmd("no-show 6:00"), 0)
    with pytest.raises(ValueError, match="no-show"):
        cmd("no-show soon")


def test_profile_checks_of_the_new_settings(tmp_path: Path) -> None:
    from timekeeper.rules.yamldoc import ConfigError

    with pytest.raises(ConfigError, match="forfeit_signal"):
        custom(
            tmp_path,
            """\
            period: {length: 20}
            forfeit_signal: true
        """,
        )
    with pytest.raises(ConfigError, match="no_show"):
        custom(
            tmp_path,
            """\
            period: {length: 60}
            no_show: -5
        """,
        )
    with pytest.raises(ConfigError, match=r"penalties\.match: must be at most 3600"):
        custom(
            tmp_path,
            """\
            extends: hokejbal
            penalties: {match: 1.0e+6}
        """,
        )


def test_goals_have_a_limit() -> None:
    eng = Engine(profile.load("ithf"))
    eng.handle(cmd("start"), 0)
    for i in range(99):
        eng.handle(cmd("goal home"), 21 + i / 100)
    with pytest.raises(Refused, match="99 goals already"):
        eng.handle(cmd("goal home"), 30)
    assert eng.handle(cmd("goal away"), 30)[0].detail == "away 99:1"


def test_status_fields_are_plain_data() -> None:
    eng = Engine(profile.load("hokejbal"))
    play(eng, (0, "start"), (5, "goal away 3"))
    data = dataclasses.asdict(eng.status(6))
    assert data["score"] == {"home": 0, "away": 1}
    assert data["goals"] == [{"team": "away", "period": 1, "play_time": 5.0, "player": "3"}]
    json.dumps(data)
    assert isinstance(eng.snapshot(6), Snapshot)
