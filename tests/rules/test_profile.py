"""Profiles are validated once at load: every bad input is refused with file:line:column and
the field, before a match can start."""

from __future__ import annotations

import re

import pytest

from timekeeper.rules import profile
from timekeeper.rules.yamldoc import ConfigError

BUILT_IN = [
    "hokejbal",
    "hokejbal-group-ot",
    "hokejbal-playoff",
    "ithf",
    "ithf-playoff",
    "ithf-thirds",
    "pl-3x6",
    "pl-3x6-final",
    "pl-3x6-ko",
    "radegast",
    "radegast-playoff",
]


def error_of(path) -> str:
    with pytest.raises(ConfigError) as caught:
        profile.load(str(path))
    return str(caught.value)


def test_built_in_profiles_are_all_there_and_load() -> None:
    assert list(profile.available()) == BUILT_IN
    for name in BUILT_IN:
        assert profile.load(name).key == name


def test_every_built_in_profile_cites_its_rules() -> None:
    for name, (file, _) in profile.available().items():
        head = file.read_text(encoding="utf-8").split("\n", 1)[0]
        assert head.startswith("#"), name
        assert re.search(r"\d+\.\d+|III|RULES\.md", file.read_text(encoding="utf-8")), name


def test_a_20_second_test_match_with_marks_every_5_s(short_profile) -> None:
    p = profile.load(str(short_profile))
    period = p.periods[0]
    assert period.length == 20 and period.melody == 5
    assert [(m.remaining, m.count) for m in period.marks] == [(15, 3), (10, 2), (5, 1)]


def test_extends_reuses_a_base_and_overrides_only_what_it_says() -> None:
    thirds = profile.load("ithf-thirds")
    assert thirds.prestart == 20 and thirds.periods[0].melody == 30
    assert [m.cue for m in thirds.periods[0].marks] == ["third", "third"]


def test_extends_a_user_profile_by_relative_path(write_profile) -> None:
    write_profile("base", "period: {length: 60}\n")
    child = write_profile("child", "extends: base.yaml\nperiod: {marks: 10}\n")
    assert len(profile.load(str(child)).periods[0].marks) == 5


def test_user_profiles_are_listed_and_shadow_nothing_silently(write_profile, monkeypatch) -> None:
    path = write_profile("club-night", "title: Club night\nperiod: {length: 240}\n")
    monkeypatch.setenv("TIMEKEEPER_PROFILES_PATH", str(path.parent))
    found = profile.available()
    assert found["club-night"][1] == "user" and found["ithf"][1] == "built-in"
    assert profile.load("club-night").title == "Club night"


def test_malformed_yaml_names_file_line_and_column(write_profile) -> None:
    path = write_profile("bad", "period:\n  length: 300\n  marks: [minutes\n")
    assert re.match(rf"{re.escape(str(path))}:\d+:\d+: malformed YAML", error_of(path))


def test_unknown_key_suggests_the_nearest_valid_name(write_profile) -> None:
    path = write_profile("typo", "period:\n  length: 300\n  melodie: 30\n")
    assert error_of(path) == (f"{path}:3:3: period.melodie: unknown key; did you mean 'melody'?")


def test_wrong_type_is_refused(write_profile) -> None:
    path = write_profile("type", "period:\n  length: five minutes\n")
    assert error_of(path) == (
        f"{path}:2:11: period.length: must be a number of seconds, not 'five minutes'"
    )


@pytest.mark.parametrize("value", ["0", "-3"])
def test_zero_or_negative_durations_are_refused(write_profile, value) -> None:
    path = write_profile("neg", f"period:\n  length: {value}\n")
    assert "period.length: must be more than zero seconds" in error_of(path)


def test_negative_overtime_in_a_list_names_the_item(write_profile) -> None:
    path = write_profile("ot", "period: {length: 60}\novertime:\n  - length: 30\n  - length: -1\n")
    assert error_of(path).startswith(f"{path}:4:13: overtime[1].length: must be more than zero")


def test_melody_longer_than_the_period(write_profile) -> None:
    path = write_profile("mel", "period: {length: 20, melody: 30}\n")
    assert "period.melody: is longer than the period" in error_of(path)


def test_unknown_profile_lists_the_available_ones() -> None:
    with pytest.raises(
        ConfigError,
        match=r"unknown profile 'ithff'; did you mean 'ithf'\? "
        r"available: .*ithf, ithf-pl",
    ):
        profile.load("ithff")


def test_missing_period_section(write_profile) -> None:
    path = write_profile("empty", "title: nothing\n")
    assert error_of(path) == f"{path}:1:1: period: missing"


def test_extends_loop_is_refused(write_profile) -> None:
    write_profile("a", "extends: b\nperiod: {length: 60}\n")
    b = write_profile("b", "extends: a\n")
    assert "loop of extends" in error_of(b)


def test_duplicate_keys_are_refused(write_profile) -> None:
    path = write_profile("dup", "period:\n  length: 60\n  length: 90\n")
    assert "duplicate key 'length'" in error_of(path)


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        ("prestart: 10", "ITHF rule 4.4"),
        ("prestart: 31", "ITHF rule 4.4"),
        ("period: {length: 240}", "ITHF rule 4.1"),
        ("period: {marks: none}", "ITHF rule 4.4"),
        ("period: {melody: 20}", "ITHF rule 4.4"),
    ],
)
def test_a_profile_that_follows_ithf_must_keep_its_rules(write_profile, change, rule) -> None:
    path = write_profile("mine", f"extends: ithf\n{change}\n")
    message = error_of(path)
    assert rule in message and str(path) in message


def test_ithf_prestart_window_edges_are_allowed(write_profile) -> None:
    for lead in (15, 30):
        assert profile.load(str(write_profile(f"p{lead}", f"extends: ithf\nprestart: {lead}\n")))


def test_the_error_points_at_the_file_that_has_the_bad_value(write_profile) -> None:
    base = write_profile("base", "period:\n  length: 60\n  marks: sometimes\n")
    child = write_profile("child", "extends: base\ntitle: child\n")
    assert error_of(child).startswith(f"{base}:3:10: period.marks: must be minutes, thirds")


def test_every_profile_setting_is_a_setting(write_profile) -> None:
    path = write_profile(
        "all",
        """\
        title: Everything
        add_step: 15
        prestart: 5
        feedback: false
        period: {length: 90, count: 2, marks: 30, mark_beeps: single, melody: 10, starts: auto}
        break: {length: 20, warning: 5}
        overtime:
          - {length: 40, marks: none, melody: 0, sudden_death: false}
          - {length: 20, mark_beeps: count}
        shootout: {first: 2, then: 1, shot: 10}
    """,
    )
    p = profile.load(str(path))
    assert (p.add_step, p.prestart, p.feedback) == (15, 5, frozenset())
    assert [m.count for m in p.periods[0].marks] == [1, 1]
    assert p.intermission is not None and p.intermission.warning == 5
    assert [x.length for x in p.periods] == [90, 90, 40, 20]
    assert p.shootout is not None and p.shootout.shot == 10


@pytest.mark.parametrize(
    ("marks", "message"),
    [
        ("0", "must be minutes, thirds, none or a number of seconds"),
        ("120", "marks every 120 s leave none in a 60-s period"),
        ("5", "the first mark of a 60-s period would be 11 beeps"),
    ],
)
def test_marks_that_make_no_sense_are_refused(write_profile, marks, message) -> None:
    path = write_profile("marks", f"period: {{length: 60, marks: {marks}}}\n")
    assert message in error_of(path)


def test_many_marks_are_fine_as_single_beeps(write_profile) -> None:
    path = write_profile("marks", "period: {length: 60, marks: 5, mark_beeps: single}\n")
    assert {m.count for m in profile.load(str(path)).periods[0].marks} == {1}


def test_a_user_profile_can_take_a_built_in_name_and_extend_it(write_profile, monkeypatch) -> None:
    path = write_profile("ithf", "extends: ithf\nprestart: 25\n")
    monkeypatch.setenv("TIMEKEEPER_PROFILES_PATH", str(path.parent))
    mine = profile.load("ithf")
    assert mine.source == path and mine.prestart == 25 and mine.periods[0].length == 300
    assert profile.available()["ithf"][1] == "user"


def test_nothing_may_follow_an_untimed_sudden_death(write_profile) -> None:
    path = write_profile(
        "ot", "period: {length: 60}\novertime: [{untimed: true}]\nshootout: {first: 3}\n"
    )
    assert "nothing after it (overtime, shoot-out) is ever played" in error_of(path)


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_not_a_number_and_infinity_are_refused(write_profile, value) -> None:
    path = write_profile("nan", f"period: {{length: {value}}}\n")
    assert "period.length: must be" in error_of(path)


def test_a_profile_extending_its_own_name_with_nothing_else_of_that_name(write_profile) -> None:
    path = write_profile("selfy", "extends: selfy\nperiod: {length: 60}\n")
    assert "extends itself: no other profile is named 'selfy'" in error_of(path)


# ----------------------------------------------------------------------------- ball hockey


def test_ball_hockey_settings_load_into_typed_objects() -> None:
    p = profile.load("hokejbal-playoff")
    assert (
        p.penalties is not None
        and p.penalties.lengths == {"minor": 60, "major": 180, "personal": 300, "match": 300}
        and p.penalties.running == 2
    )
    assert not p.penalties.power_play_goal_ends_minor  # rule 30 d: no goal ends a penalty
    assert p.timeout is not None and (p.timeout.length, p.timeout.per_team) == (30, 1)
    assert p.shootout is not None and p.shootout.shot is None
    assert [x.name for x in p.periods] == ["half 1", "half 2", "overtime"]
    # shot_start/shot_end: the penalty shot's own signals (rule 15), not the shoot-out's
    assert {"penalty_end", "timeout_end", "shot_start", "shot_end"} <= p.cue_names
    assert "pause" not in p.cue_names  # no blips
    assert p.no_show == 300 and "forfeit" in p.cue_names  # rule 5: the no-show countdown


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("penalties:\n  minr: 60\n", "4:3: penalties.minr", "unknown key; did you mean 'minor'?"),
        (
            "penalties:\n  major: -3\n",
            "4:10: penalties.major",
            "must be more than zero seconds (got -3)",
        ),
        (
            "penalties:\n  running: 0\n",
            "4:12: penalties.running",
            "must be a whole number from 1 to 6, not 0",
        ),
        ("timeout:\n  lenght: 30\n", "4:3: timeout.lenght", "unknown key; did you mean 'length'?"),
        (
            "timeout:\n  per_team: two\n",
            "4:13: timeout.per_team",
            "must be a whole number from 1 to 10, not 'two'",
        ),
        ("shootout:\n  shot: never\n", "4:9: shootout.shot", "must be a number of seconds"),
    ],
)
def test_ball_hockey_settings_are_checked_with_file_line_and_field(
    write_profile, text: str, where: str, message: str
) -> None:
    path = write_profile("ball", "period:\n  length: 480\n" + text)
    error = error_of(path)
    assert error.startswith(f"{path}:{where}: ") and message in error


def test_feedback_cues_can_be_chosen_one_by_one(write_profile) -> None:
    path = write_profile(
        "quiet",
        """\
        title: only the pause is answered
        feedback: [pause]
        period: {length: 60}
    """,
    )
    p = profile.load(str(path))
    assert p.feedback == {"pause"} and "resume" not in p.cue_names
    bad = write_profile(
        "bad",
        """\
        title: x
        feedback: [pause, beep]
        period: {length: 60}
    """,
    )
    with pytest.raises(ConfigError, match=r"bad.yaml:2:19: feedback\[1\]: must be one of"):
        profile.load(str(bad))


@pytest.mark.parametrize(
    ("change", "field", "rule"),
    [
        ("period: {mark_beeps: single}", "period.mark_beeps", "ITHF rule 4.4"),
        (
            "overtime: [{length: 120, sudden_death: false}]\nshootout: {first: 3}",
            "overtime[0]",
            "ITHF rule 4.8",
        ),
        ("overtime: [{length: 120}]", "overtime[0]", "ITHF rule 4.8"),
        (
            "overtime: [{untimed: true}]\nshootout: {first: 3}",
            "overtime[0].untimed",
            "nothing after",
        ),
    ],
)
def test_ithf_overtime_and_beeps_are_checked_too(write_profile, change, field, rule) -> None:
    message = error_of(write_profile("mine", f"extends: ithf\n{change}\n"))
    assert f" {field}: " in message and rule in message


def test_third_marks_may_be_single_beeps_under_ithf(write_profile) -> None:
    path = write_profile("thirds", "extends: ithf\nperiod: {marks: thirds, mark_beeps: single}\n")
    assert profile.load(str(path)).follows == "ithf"


def test_the_ithf_refusal_says_the_way_out(write_profile) -> None:
    message = error_of(write_profile("club", "extends: ithf\nperiod: {length: 600}\n"))
    assert "ITHF rule 4.1" in message and "follows: none" in message


@pytest.mark.parametrize("leave", ["none", "null", "None", "~"])
def test_a_club_profile_leaves_ithf_and_its_title(write_profile, leave) -> None:
    path = write_profile("club-10", f"extends: ithf\nfollows: {leave}\nperiod: {{length: 600}}\n")
    club = profile.load(str(path))
    assert club.follows is None and club.periods[0].length == 600
    assert club.title == "club-10" and "ITHF" not in club.description


def test_a_club_profile_that_leaves_ithf_keeps_its_own_title(write_profile) -> None:
    path = write_profile(
        "club", "extends: ithf\nfollows: none\ntitle: Club night, 10 min\nperiod: {length: 600}\n"
    )
    assert profile.load(str(path)).title == "Club night, 10 min"


def test_a_profile_that_stays_with_ithf_keeps_the_title(write_profile) -> None:
    assert (
        profile.load(str(write_profile("mine", "extends: ithf\nprestart: 25\n"))).title
        == profile.load("ithf").title
    )


def test_an_unknown_rule_set_names_the_known_ones_and_none(write_profile) -> None:
    message = error_of(write_profile("odd", "follows: fifa\nperiod: {length: 60}\n"))
    assert "unknown rule set 'fifa'; known: ithf, or none" in message


def test_profiles_say_which_signals_are_aids_not_rules() -> None:
    """Radegast and Polish rules ask for no marks, melody or break warning."""
    for name in ("radegast", "radegast-playoff", "pl-3x6", "pl-3x6-ko", "pl-3x6-final"):
        p = profile.load(name)
        assert "Aids, not rules" in p.description, name
        assert "Aids, not rules" in p.source.read_text(encoding="utf-8"), name


def test_the_two_hokejbal_group_profiles_cite_each_its_own_rule() -> None:
    vht, base = profile.load("hokejbal"), profile.load("hokejbal-group-ot")
    assert "VHT 7" in vht.description and vht.shootout is None and vht.regulation == 2
    assert len(vht.periods) == 2  # a draw stands
    assert "Rule 1" in base.description and base.periods[0].length == 480
    overtime = base.periods[2]
    assert (overtime.length, overtime.sudden_death) == (300, True)
    assert base.shootout is not None and (base.shootout.first, base.shootout.then) == (3, 1)


def test_polish_citations_say_what_the_rules_say() -> None:
    text = profile.load("pl-3x6").source.read_text(encoding="utf-8")
    assert "siren must be on time" not in text and "III.7: players must be back" not in text
