"""The hall's language (docs/web.md): one JSON file per language in lang/, each with exactly
the English keys and the same {placeholders}; every word a page asks for is in the English
file; `language:` in the config is checked like every other field; a club's correction in a
user folder changes only the words it names and is checked as strictly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import ROOT

from timekeeper.box import config
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.show import language

STATIC = ROOT / "timekeeper" / "web" / "static"
# the overview's and the board's: `hall` words
HALL = ROOT / "timekeeper" / "hall" / "desk" / "static"


def raw(code: str) -> dict:
    return json.loads((ROOT / "lang" / f"{code}.json").read_text(encoding="utf-8"))


def test_there_is_a_file_for_every_language_and_no_other() -> None:
    assert sorted(p.stem for p in (ROOT / "lang").glob("*.json")) == sorted(language.LANGUAGES)


@pytest.mark.parametrize("code", language.LANGUAGES)
def test_every_language_has_exactly_the_english_keys_and_placeholders(code: str) -> None:
    english, other = raw("en"), raw(code)
    assert set(other) == set(english) and isinstance(other["language"], str)
    for section in language.SECTIONS:
        assert list(other[section]) == list(english[section]), section  # (same order: diffable)
        for key, text in english[section].items():
            theirs = other[section][key]
            assert language.placeholders(theirs) == language.placeholders(text), (section, key)
            assert (theirs.strip() and theirs == theirs.strip(" ")) or key == "offStep", key
    if code != "en":  # (the states at least are translated)
        assert other["line"]["running"] != english["line"]["running"]
    assert language.words(code)["pages"] == other["pages"]  # (and it loads)


def used_keys() -> dict[str, set[str]]:
    """The keys the pages' code asks for: say("x") / word("x"), data-w="x" and its kin, the
    sides (say(team)), the penalty kinds and the hall's states."""
    pages: set[str] = {"home", "away"}
    for file in [*STATIC.glob("*.js"), *STATIC.glob("*.html")]:
        text = file.read_text(encoding="utf-8")
        pages |= set(re.findall(r'\bsay\("(\w+)"', text))
        for pair in re.findall(r'\bsay\([^()]*\? "(\w+)" : "(\w+)"', text):  # say(a ? x : y)
            pages |= set(pair)
        pages |= set(re.findall(r'data-w(?:-placeholder|-label)?="(\w+)"', text))
        pages |= set(re.findall(r'\b\w+: "(kind\w+)"', text))
    hall_text = "".join(
        file.read_text(encoding="utf-8") for file in [*HALL.glob("*.js"), *HALL.glob("*.html")]
    )
    hall = set(re.findall(r'\bword\("(\w+)"', hall_text))
    hall |= set(re.findall(r'data-w(?:-title)?="(\w+)"', hall_text))
    hall |= set(re.findall(r'"(board\w+)"', hall_text))  # (the board's standings columns)
    hall |= {
        "idle",
        "prestart",
        "running",
        "stopped",
        "break",
        "waiting",
        "shootout",
        "shot",
        "finished",
    }
    return {"pages": pages - {"key"}, "hall": hall}  # ("key": the comments' example)


def test_every_word_the_pages_ask_for_is_in_the_english_file_and_none_is_left_over() -> None:
    english = raw("en")
    for section, keys in used_keys().items():
        assert keys <= set(english[section]), f"{section}: missing {keys - set(english[section])}"
    unused = set(english["pages"]) - used_keys()["pages"]
    assert not unused, f"pages: never used {unused}"
    unused = set(english["hall"]) - used_keys()["hall"]
    assert not unused, f"hall: never used {unused}"


@pytest.mark.parametrize(
    ("part", "code", "shown"),
    [
        ("period 2", "cs", "2. třetina"),
        ("half 1", "de", "1. Halbzeit"),
        ("overtime", "sv", "förlängning"),
        ("overtime 2", "fi", "2. jatkoaika"),
        ("shoot-out", "pl", "rzuty karne"),
        ("match", "en", "match"),
        ("quarter 3", "cs", "quarter 3"),  # a part a profile names otherwise: as it is
    ],
)
def test_the_parts_of_the_match_are_named_in_the_language(part: str, code: str, shown: str) -> None:
    assert language.part_name(part, language.words(code)["parts"]) == shown


def load(tmp_path: Path, text: str) -> config.Config:
    file = tmp_path / "config.yaml"
    file.write_text(text, encoding="utf-8")
    return config.load(file)


def test_the_config_chooses_the_language_and_refuses_an_unknown_one(tmp_path: Path) -> None:
    assert load(tmp_path, "profile: ithf\n").language == "en"
    assert load(tmp_path, "language: cs\n").language == "cs"
    with pytest.raises(
        ConfigError,
        match=r"config.yaml:2:11: language: unknown language "
        r"'cz'; known: en, cs, sk, pl, sl, de, sv, fi",
    ):
        load(tmp_path, "profile: ithf\nlanguage: cz\n")


def test_a_clubs_correction_changes_only_its_words_and_is_checked(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("TIMEKEEPER_LANG_PATH", str(tmp_path))
    language.words.cache_clear()
    try:
        (tmp_path / "cs.json").write_text('{"pages": {"home": "DOMA"}}', encoding="utf-8")
        cs = language.words("cs")
        assert cs["pages"]["home"] == "DOMA" and cs["pages"]["away"] == "HOSTÉ"
        for text, where in [
            ('{"pages": {\n  "hom": "DOMA"}}', r"cs.json:2: pages.hom: unknown key"),
            (
                '{"pages": {\n "wins": "VYHRÁVÁ"}}',
                r"cs.json:2: pages.wins: must keep the English text's placeholders \({team}\)",
            ),
            ('{"pages": {"home": "DOMA",}}', r"cs.json:1:27: "),
            ('{"page": {}}', r"cs.json:1: page: unknown section"),
        ]:
            language.words.cache_clear()
            (tmp_path / "cs.json").write_text(text, encoding="utf-8")
            with pytest.raises(ConfigError, match=where):
                language.words("cs")
    finally:
        language.words.cache_clear()


def test_a_page_says_its_language_and_loads_its_words() -> None:
    html = (STATIC / "display.html").read_text(encoding="utf-8")
    shown = language.page(html, "de")
    assert '<html lang="de"' in shown and 'src="/lang/de.js"' in shown
    assert language.chosen("sv", "cs") == "sv" and language.chosen("xx", "cs") == "cs"
    assert language.chosen(None, "cs") == "cs"
    script = language.script("pl", "pages", "parts")
    assert 'const LANG = "pl";' in script and "const PARTS = {" in script


def test_hall_serve_refuses_an_unknown_language_before_it_connects(capsys) -> None:
    from timekeeper import cli

    code = cli.main(["hall", "serve", "--broker", "mqtt://127.0.0.1:9", "--language", "cz"])
    assert code == 2
    assert "--language: unknown language 'cz'; known: en, cs" in capsys.readouterr().err


def test_the_tournament_files_language_is_the_desks_unless_language_is_given(
    tmp_path: Path,
) -> None:
    import argparse

    from timekeeper.hall.desk.deskconfig import desk_settings
    from timekeeper.tournament import spec

    file = tmp_path / "cup.yaml"
    file.write_text("rules: radegast\nlanguage: cs\nplayers: [Ann, Bob]\n", encoding="utf-8")
    cup = spec.load(file)

    def settings(lang: str | None):
        args = argparse.Namespace(
            config=None,
            broker="mqtt://127.0.0.1",
            hall_name=None,
            user="desk",
            password_file=None,
            language=lang,
        )
        return desk_settings(args, lambda path: pytest.fail("no config is read"))

    assert settings(None).language_for(cup.language) == "cs"  # (else the config's, or en)
    assert settings("de").language_for(cup.language) == "de"  # --language de wins
