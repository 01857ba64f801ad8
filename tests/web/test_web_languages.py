"""Every page in every language (docs/web.md), in Debian's headless Chromium: the display, the
operator page and the overlay of a real box (`timekeeper run --web`, its config saying
`language: cs`) and the desk's hall overview (`hall serve --language de`), each loaded once
per language — the configured one without `?lang=`, the others with it. A page notes every
key its language lacks in `window.tkMissing`; none may be missing, no labelled element is
blank, and the page is in the language asked for (its `<html lang>` and its words)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import wait_for
from webbox import WebBox, browser, have_browser

from timekeeper.show import language

pytestmark = [
    pytest.mark.slow,  # a browser and a box (tests/conftest.py: the fast tier)
    pytest.mark.skipif(
        not have_browser(), reason="needs chromium and chromium-driver (./bootstrap.sh --test)"
    ),
]
BOX_LANGUAGE = "cs"  # the box's config
DESK_LANGUAGE = "de"  # `hall serve --language`, as the overview fixture is made here

# what each page shows once it has drawn, and what it has shown
DRAWN = {
    "/": "return document.body.dataset.state ? document.getElementById('state').textContent : ''",
    "/control": "return document.getElementById('box-home').children.length ? "
    "document.getElementById('state').textContent : ''",
    "/overlay": "return document.body.dataset.state ? "
    "document.getElementById('ov-part').textContent : ''",
}
# the page's text and what each of its files answered (a 429 on a script left a page dead)
SHOWN = (
    "return document.body.innerText + JSON.stringify(performance"
    ".getEntriesByType('resource').map(e => [e.name, e.responseStatus]))"
)
LABELS = """return [...document.querySelectorAll('[data-w]')]
  .filter(n => !n.textContent.trim())
  .map(n => n.dataset.w)"""


def page_state(page) -> dict:
    return page.execute_script(
        "return {lang: document.documentElement.lang, "
        "missing: window.tkMissing, text: document.body.innerText}"
    )


def address(url: str, path: str, code: str, configured: str) -> str:
    return f"{url}{path}" + (
        "" if code == configured else f"{'&' if '?' in path else '?'}lang={code}"
    )


@pytest.mark.parametrize("overview", [DESK_LANGUAGE], indirect=True)
def test_every_page_in_every_language(tmp_path: Path, overview) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"language: {BOX_LANGUAGE}\n", encoding="utf-8")
    hall_url = overview[0]
    with WebBox("hokejbal", extra=("--config", str(config))) as box, browser(1024, 768) as page:
        # a running match, stopped, with a goal and penalties: the pages' lists are drawn
        for command in (
            ("start",),
            ("goal", "home", "17"),
            ("penalty", "away", "minor", "8"),
            ("penalty", "away", "major+game", "4"),
            ("toggle",),
        ):
            assert box.command(*command)[0] == 200, command
        page.get(f"{box.url}/control#token={box.token}")  # (the token, kept by this browser)
        for code in language.LANGUAGES:
            words = language.words(code)
            for path, drawn in DRAWN.items():
                page.get(address(box.url, path, code, BOX_LANGUAGE))
                try:  # (a loaded CI machine once took over 10 s: a deadline, not a pause)
                    wait_for(lambda d=drawn: page.execute_script(d), f"{path} drawn in {code}", 30)
                except AssertionError as exc:  # what the page showed instead, for the log
                    shown = page.execute_script(SHOWN)
                    raise AssertionError(
                        f"{exc}; the page showed {shown[:600]!r}; the box "
                        f"said {box.run_log()[-1500:]}"
                    ) from None
                seen = page_state(page)
                assert seen["lang"] == code and seen["missing"] == [], (path, code, seen)
                assert page.execute_script(LABELS) == [], (path, code)
                assert words["pages"]["stopped"] in seen["text"], (path, code, seen["text"])
                if path != "/overlay":  # (the overlay shows the part while the clock runs)
                    half = words["parts"]["half"].replace("{n}", "1")
                    assert half in seen["text"], (path, code, seen["text"])
            page.get(address(f"{hall_url}/hall", "", code, DESK_LANGUAGE))
            tiles = wait_for(
                lambda: page.execute_script(
                    "return document.querySelectorAll('.table').length === 2 && "
                    "document.body.innerText"
                ),
                f"the hall in {code}",
                10,
            )
            seen = page_state(page)
            assert seen["lang"] == code and seen["missing"] == [], (code, seen)
            assert words["hall"]["running"] in tiles and words["hall"]["prestart"] in tiles
            assert words["hall"]["startAll"] not in tiles  # (the desk's buttons need its token)
            assert words["hall"]["table"].replace("{name}", "1") in tiles, tiles


def test_the_words_script_is_the_languages_file(overview) -> None:
    """What /lang/XX.js gives a page is lang/XX.json's, and an unknown language is a 404."""
    import urllib.error
    import urllib.request

    hall_url, _, _ = overview
    with urllib.request.urlopen(f"{hall_url}/lang/sv.js", timeout=10) as answer:
        script = answer.read().decode()
    hall = json.loads(script.split("const WORDS = ", 1)[1].split(";\n", 1)[0])
    assert hall == language.words("sv")["hall"]
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{hall_url}/lang/xx.js", timeout=10)
    assert refused.value.code == 404
