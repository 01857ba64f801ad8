"""Ball hockey (hokejbal) matches replayed with the time passed in: net time, penalties that
run only with the game clock (expiry during stoppages, queueing, frozen in the break, release
on a power-play goal, removal), time-outs (refused twice), the clock correction and the
shoot-out's score. The same engine as rod hockey; only the profile differs."""

from __future__ import annotations

import dataclasses
import json

import pytest

from timekeeper.rules import profile
from timekeeper.rules.commands import Action, Command, Refused
from timekeeper.rules.engine import Engine, State
from timekeeper.rules.replay import parse_actions, replay
from timekeeper.rules.stoppedtime import StoppedTime

START, NEXT = Command(Action.START), Command(Action.NEXT)
STOP, GO = Command(Action.PAUSE), Command(Action.RESUME)


def cmd(text: str) -> Command:
    return Command.parse(text)


def names(cues) -> list[str]:
    return [c.name for c in cues]


def match(name: str = "hokejbal") -> Engine:
    """A match whose first half started at 0 (no pre-start in these rules)."""
    eng = Engine(profile.load(name))
    assert names(eng.handle(START, 0)) == ["start"]
    return eng


def penalties(eng: Engine, now: float, team: str = "home") -> list[tuple]:
    teams = eng.status(now).teams
    assert teams is not None
    return [(p.id, p.kinds, p.state, p.remaining) for p in teams[team].penalties]


def timeline(name: str, actions: str = "") -> list[tuple[float, str]]:
    result = replay(profile.load(name), parse_actions(actions))
    return [
        (round(c.due - result.start, 6), c.name + (f" {c.detail}" if c.detail else ""))
        for c in result.cues
        if not c.stop
    ]


# ---------------------------------------------------------------- whole matches


def test_group_match_two_halves_of_net_time_with_a_three_minute_break() -> None:
    assert timeline("hokejbal") == [
        (0, "start"),
        (480, "period_end"),
        (660, "break_warning"),
        (660, "start"),
        (1140, "end"),
    ]
    p = profile.load("hokejbal")
    assert [x.name for x in p.periods] == ["half 1", "half 2"]  # a draw stands (VHT 7)
    assert not p.feedback  # no blips on every whistle


def test_every_whistle_stops_the_clock_and_the_halves_end_exactly_at_zero() -> None:
    tl = timeline("hokejbal", "1:00:pause,1:12.5:resume,5:00:pause,5:30:resume")
    assert tl[:2] == [(0, "start"), (480 + 12.5 + 30, "period_end")]


def test_playoff_overtime_then_a_shootout_decided_by_the_entered_results() -> None:
    tl = timeline(
        "hokejbal-playoff",
        "45:00:attempt=home:goal,45:10:attempt=away:miss,"
        "45:20:attempt=home:goal,45:30:attempt=away:miss",
    )
    assert tl[-4:] == [(1380, "end"), (1380, "start"), (1680, "period_end"), (2730, "end")]


def test_a_penalty_expires_by_play_time_however_long_the_stoppages() -> None:
    tl = timeline("hokejbal", "1:40:penalty=home:minor:17,2:00:pause,2:50:resume")
    assert (160 + 50, "penalty_end home #1 17 minor") in tl
    result = replay(
        profile.load("hokejbal"), parse_actions("100:penalty=home:minor,120:pause,170:resume")
    )
    served = next(c for c in result.cues if c.name == "penalty_end")
    assert served.play_time == pytest.approx(160) and served.period == 1


def test_penalties_are_frozen_in_the_break_and_go_on_in_the_second_half() -> None:
    eng = match()
    eng.handle(cmd("penalty away major"), 420)  # 60 s of it served by the end of the half
    eng.advance(500)
    assert eng.state is State.BREAK
    assert penalties(eng, 500, "away") == [(1, "major", "running", 120)]
    assert penalties(eng, 650, "away") == [(1, "major", "running", 120)]  # frozen
    eng.advance(700)
    eng.handle(NEXT, 700)  # the second half starts
    cues = eng.advance(900)
    assert [(c.name, c.due, c.play_time, c.period) for c in cues] == [("penalty_end", 820, 120, 2)]


def test_third_penalty_waits_for_a_free_place_then_runs_its_full_length() -> None:
    eng = match()
    for kind in ("minor", "major", "minor"):
        eng.handle(cmd(f"penalty home {kind}"), 30)
    assert penalties(eng, 40) == [
        (1, "minor", "running", 50),
        (2, "major", "running", 170),
        (3, "minor", "waiting", 60),
    ]
    eng.handle(STOP, 50)
    eng.handle(GO, 80)  # 30 s stoppage
    cues = eng.advance(400)
    assert [(c.due, c.detail) for c in cues if c.name == "penalty_end"] == [
        (120, "home #1 minor"),
        (180, "home #3 minor"),
        (240, "home #2 major"),
    ]


def test_a_penalty_served_exactly_at_the_end_of_the_half_ends_with_the_half() -> None:
    eng = match()
    eng.handle(cmd("penalty home minor"), 420)
    assert names(eng.advance(480)) == ["period_end"]
    assert penalties(eng, 480) == []


def test_release_after_a_power_play_goal_and_the_waiting_penalty_moves_up() -> None:
    eng = match()
    eng.handle(cmd("penalty home major"), 10)
    eng.handle(cmd("penalty home minor"), 20)
    eng.handle(cmd("penalty home minor"), 30)
    eng.handle(STOP, 50)  # away scores on the power play
    assert eng.handle(cmd("release home"), 52) == []  # no signal: play is stopped for the goal
    assert penalties(eng, 52) == [(1, "major", "running", 140), (3, "minor", "running", 60)]
    with pytest.raises(Refused, match="away has no running minor"):
        eng.handle(cmd("release away"), 53)
    eng.handle(GO, 60)
    assert [c.due for c in eng.advance(300) if c.name == "penalty_end"] == [120, 200]


def test_a_penalty_entered_by_mistake_is_removed() -> None:
    eng = match()
    eng.handle(cmd("penalty away minor 7"), 10)
    eng.handle(cmd("penalty away minor 9"), 11)
    eng.handle(cmd("penalty away personal 9"), 12)  # meant for home
    eng.handle(cmd("remove away"), 13)
    eng.handle(cmd("remove away #1"), 14)
    assert [(p.id, p.player) for p in eng.status(15).teams["away"].penalties] == [(2, "9")]
    with pytest.raises(Refused, match="no penalty #5"):
        eng.handle(cmd("remove away 5"), 16)


def test_combinations_one_plus_one_plus_five_and_three_plus_game() -> None:
    eng = match()
    eng.handle(cmd("penalty home minor+minor+personal 4"), 0)
    eng.handle(cmd("penalty away major+game 11"), 0)
    assert penalties(eng, 90) == [(1, "minor+minor+personal", "running", 330)]
    cues = eng.advance(420)
    assert [(c.due, c.detail) for c in cues if c.name == "penalty_end"] == [
        (180, "away #2 11 major+game"),
        (420, "home #1 4 minor+minor+personal"),
    ]
    assert penalties(eng, 421, "away") == [(2, "major+game", "game", None)]  # out for good


def test_penalty_commands_are_refused_by_rod_hockey_profiles() -> None:
    eng = Engine(profile.load("ithf"))
    eng.handle(START, 0)
    for text in ("penalty home minor", "timeout home", "attempt home goal"):
        with pytest.raises(Refused, match=r"has no (penalties or time-outs|shoot-out score)"):
            eng.handle(cmd(text), 30)
    assert eng.status(30).teams is None


# ---------------------------------------------------------------- time-outs


def test_timeout_only_while_stopped_with_its_own_countdown_and_signal() -> None:
    eng = match()
    with pytest.raises(Refused, match="while the clock is stopped"):
        eng.handle(cmd("timeout home"), 100)
    eng.handle(STOP, 100)
    assert eng.handle(cmd("timeout home"), 105) == []
    st = eng.status(115)
    assert (st.state, st.timeout, st.timeout_countdown) == ("stopped", "home", 20)
    assert eng.next_deadline() == 135
    cues = eng.advance(200)
    assert [(c.name, c.due, c.detail) for c in cues] == [("timeout_end", 135, "home")]
    assert eng.status(200).teams["home"].timeouts_left == 0


def test_a_second_timeout_is_refused_with_a_clear_message() -> None:
    eng = match()
    eng.handle(STOP, 100)
    eng.handle(cmd("timeout home"), 100)
    with pytest.raises(Refused, match="home's time-out is running"):
        eng.handle(cmd("timeout away"), 110)
    eng.advance(130)
    with pytest.raises(Refused, match="one time-out per stoppage"):
        eng.handle(cmd("timeout away"), 131)  # rule 26: not in the same stoppage
    eng.handle(GO, 140)
    eng.handle(STOP, 200)
    with pytest.raises(Refused, match=r"home has taken its time-out already \(1 per match\)"):
        eng.handle(cmd("timeout home"), 201)
    eng.handle(cmd("timeout away"), 202)  # the other team, in another stoppage: yes
    eng.handle(GO, 240)
    eng.handle(STOP, 300)
    with pytest.raises(Refused, match="away has taken its time-out already"):
        eng.handle(cmd("timeout away"), 301)


def test_restarting_play_ends_a_timeout_early_without_its_signal() -> None:
    eng = match()
    eng.handle(STOP, 100)
    eng.handle(cmd("timeout away"), 100)
    assert eng.handle(GO, 120) == []
    assert eng.status(121).timeout is None
    assert "timeout_end" not in names(eng.advance(500))


def test_penalties_do_not_run_during_a_timeout() -> None:
    tl = timeline("hokejbal", "0:10:penalty=home:minor,0:20:pause,0:20:timeout=away,0:55:resume")
    assert tl[1:3] == [(50, "timeout_end away"), (105, "penalty_end home #1 minor")]


# ---------------------------------------------------------------- time correction


def test_correction_sets_the_clock_while_stopped_and_penalties_move_with_it() -> None:
    eng = match()
    eng.handle(cmd("penalty home minor"), 100)
    with pytest.raises(Refused, match="while it is stopped"):
        eng.handle(cmd("set 6:00"), 120)
    eng.handle(STOP, 120)  # 6:00 left, the minor has 40 s left
    eng.handle(cmd("set 6:10"), 125)  # the clock ran 10 s too long
    st = eng.status(125)
    assert st.remaining == 370 and penalties(eng, 125) == [(1, "minor", "running", 50)]
    eng.handle(GO, 130)
    cues = eng.advance(600)
    assert [(c.name, c.due) for c in cues] == [("penalty_end", 180), ("period_end", 500)]


def test_correcting_past_a_penalty_ends_it_at_once_and_the_next_one_starts() -> None:
    eng = match()
    for _ in range(3):
        eng.handle(cmd("penalty home minor"), 100)
    eng.handle(STOP, 150)  # 5:30 left; both running minors have 10 s left
    cues = eng.handle(cmd("set 5:10"), 155)  # 20 s forward
    assert cues == []  # served by the correction: ended silently, play is stopped
    assert penalties(eng, 155) == [(3, "minor", "running", 50)]  # started 10 s ago, at 160


def test_rod_hockey_can_set_its_clock_too_and_marks_follow_the_new_time() -> None:
    """One engine: a failed timer can be set where it stopped, if the referee accepts that
    (ITHF 4.5 itself replays the match from the start: see test_score)."""
    eng = Engine(profile.load("ithf"))
    eng.handle(START, 0)
    eng.advance(100)  # the 4-minute mark sounded at 80 (1:00 of play)
    eng.handle(STOP, 100)
    eng.handle(cmd("set 4:30"), 101)  # back to 0:30 of play: the 4:00-left mark comes again
    cues = eng.handle(GO, 110) + eng.advance(150)
    assert [(c.name, c.due, c.count) for c in cues] == [("resume", 110, 1), ("minute", 140, 4)]


def test_correction_is_checked() -> None:
    eng = match()
    eng.handle(STOP, 10)
    with pytest.raises(Refused, match="between 0:00 and 8:00"):
        eng.handle(cmd("set 9:00"), 11)
    eng.handle(cmd("set 0:00"), 12)
    assert names(eng.handle(GO, 13)) == ["period_end"]


# ---------------------------------------------------------------- shoot-out


def shootout(eng_time: float = 2000) -> tuple[Engine, float]:
    eng = match("hokejbal-playoff")
    eng.advance(600)
    eng.handle(NEXT, 780)
    eng.advance(1380)
    eng.handle(NEXT, 1400)
    eng.advance(eng_time)
    assert eng.state is State.SHOOTOUT
    return eng, eng_time


def test_shootout_is_decided_early_and_the_match_ends_by_itself() -> None:
    eng, t = shootout()
    with pytest.raises(Refused, match="enter the attempt's result"):
        eng.handle(NEXT, t)
        eng.handle(NEXT, t)
    for i, (team, result) in enumerate([("home", "goal"), ("away", "miss"), ("home", "goal")]):
        if eng.state is State.SHOOTOUT:
            eng.handle(NEXT, t + i)
        assert eng.handle(cmd(f"attempt {team} {result}"), t + i) == []
    assert eng.status(t + 5).teams["home"].shootout == "2/2"
    assert names(eng.handle(cmd("attempt away miss"), t + 10)) == ["end"]  # 2:0, one each left
    assert eng.state is State.FINISHED


def test_shootout_turns_and_the_one_each_series() -> None:
    eng, t = shootout()
    with pytest.raises(Refused, match="attempts are entered in the shoot-out"):
        match("hokejbal-playoff").handle(cmd("attempt home goal"), 5)
    eng.handle(cmd("attempt away goal"), t)  # entered without NEXT: counted all the same
    with pytest.raises(Refused, match="home's turn"):
        eng.handle(cmd("attempt away goal"), t)
    for team, result in [
        ("home", "goal"),
        ("away", "miss"),
        ("home", "miss"),
        ("away", "miss"),
        ("home", "miss"),
        ("away", "goal"),
    ]:
        assert eng.handle(cmd(f"attempt {team} {result}"), t) == []
    st = eng.status(t)
    assert (st.shot, st.series) == (7, 2)
    assert names(eng.handle(cmd("attempt home miss"), t)) == ["end"]


def test_shootout_order_of_the_first_attempt_is_kept_strictly() -> None:
    eng, t = shootout()
    eng.handle(cmd("attempt home goal"), t)
    eng.handle(cmd("attempt away goal"), t)
    eng.handle(cmd("attempt home goal"), t)
    eng.handle(cmd("attempt away miss"), t)  # all even in attempts: still home's turn
    with pytest.raises(Refused, match="it is home's turn"):
        eng.handle(cmd("attempt away goal"), t)


# ---------------------------------------------------------------- status and plain data


def test_status_is_json_with_penalties_and_timeouts() -> None:
    eng = match()
    eng.handle(cmd("penalty home minor 17"), 10)
    eng.handle(STOP, 20)
    eng.handle(cmd("timeout away"), 20)
    data = json.loads(json.dumps(dataclasses.asdict(eng.status(25))))
    assert data["teams"]["home"]["penalties"] == [
        {"id": 1, "kinds": "minor", "player": "17", "state": "running", "remaining": 50.0}
    ]
    assert data["teams"]["away"]["timeouts_left"] == 0
    assert (data["timeout"], data["timeout_countdown"]) == ("away", 25.0)


def test_the_match_state_of_penalties_and_timeouts_is_plain_data() -> None:
    eng = match()
    eng.handle(cmd("penalty home minor+minor"), 10)
    eng.handle(cmd("penalty away major+game"), 10)
    eng.handle(STOP, 30)
    eng.handle(cmd("timeout home"), 31)
    extra = eng.m.extra
    assert extra is not None
    saved = json.dumps(extra.to_dict())
    twin = match()
    twin.handle(STOP, 30)
    twin.m.extra = StoppedTime.from_dict(json.loads(saved))
    assert twin.m.extra == extra and twin.status(40) == eng.status(40)


# ---------------------------------------------------------------- commands and scripts


def test_ball_hockey_commands_parse_in_ctl_and_script_forms() -> None:
    assert cmd("penalty home minor+minor+personal 17") == Command(
        Action.PENALTY, team="home", kinds=("minor", "minor", "personal"), player="17"
    )
    assert cmd("penalty=a:major+game") == Command(
        Action.PENALTY, team="away", kinds=("major", "game")
    )
    assert cmd("remove home #3").ref == 3 and cmd("set 4:32").seconds == 272
    steps = parse_actions("30:penalty=home:minor,1:30:set=4:30,2:00:attempt=away:goal")
    assert [(s.at, str(s.command)) for s in steps] == [
        (30, "penalty=home:minor"),
        (90, "set=4:30"),
        (120, "attempt=away:goal"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("penalty home", "usage: penalty TEAM"),
        ("penalty visitors minor", "unknown team 'visitors'; teams: home, away"),
        ("penalty home mjaor", "did you mean 'major'?"),
        ("penalty home game+minor", "a game misconduct comes once, last"),
        ("timeout", "timeout needs a team"),
        ("remove home last", "a penalty's id is a number"),
        ("attempt home scored", "usage: attempt TEAM goal|miss"),
        ("set 4:75", "set M:SS"),
        ("release home 3", "release takes a team only"),
    ],
)
def test_ball_hockey_commands_that_cannot_mean_anything_are_refused(
    text: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("|", r"\|")):
        cmd(text)


def test_a_match_restored_from_its_journal_is_still_a_ball_hockey_match() -> None:
    eng = match()
    eng.advance(100)
    back = Engine(profile.load("hokejbal"))
    back.restore(eng.snapshot(100))
    assert back.state is State.STOPPED
    back.handle(cmd("penalty home minor"), 200)
    back.handle(cmd("timeout away"), 200)  # stopped: allowed
    assert back.status(200).teams["home"].penalties[0].remaining == 60
