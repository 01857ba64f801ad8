"""The box config: defaults, shorthand, and clear refusals naming file, line and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import ROOT

from timekeeper.box import config, wiring
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.sound import devices


def load(tmp_path: Path, text: str) -> config.Config:
    path = tmp_path / "config.yaml"
    path.write_text(textwrap.dedent(text))
    return config.load(path)


def test_no_config_file_means_the_default_wiring(monkeypatch) -> None:
    monkeypatch.setattr(config, "DEFAULT_FILE", Path("/nonexistent/config.yaml"))
    cfg = config.load(None)
    assert cfg.source is None and cfg.profile is None
    assert [(b.name, b.pin) for b in cfg.gpio.buttons] == [
        ("start", 17),
        ("toggle", 27),
        ("add", 22),
    ]
    assert cfg.gpio.lamp == wiring.LampConfig(23) and cfg.gpio.horn is None


def test_the_shipped_example_is_valid_and_matches_the_defaults() -> None:
    cfg = config.load(ROOT / "systemd" / "config.yaml")
    assert cfg.profile == "ithf" and cfg.gpio == wiring.default_gpio()


def test_shorthand_pins_names_and_relays(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        """\
        profile: radegast
        state_dir: journal
        gpio:
          buttons: {start: GPIO5, reset: {pin: 6, hold: 4}}
          lamp: {pin: 13, active_high: false}
          horn: {pin: 24, cues: [end], seconds: 3}
    """,
    )
    assert cfg.state_dir == tmp_path / "journal"
    # buttons not mentioned keep their default pins
    assert [(b.name, b.pin, b.hold, b.short, b.long) for b in cfg.gpio.buttons] == [
        ("start", 5, 3.0, "go", "reset"),
        ("toggle", 27, 2.0, "toggle", "finish"),
        ("add", 22, 1.0, "add", "subtract"),
        ("reset", 6, 4.0, None, "reset"),
    ]
    assert cfg.gpio.lamp == wiring.LampConfig(13, active_high=False)
    assert cfg.gpio.horn == wiring.RelayConfig(24, frozenset({"end"}), 3.0)


@pytest.mark.parametrize(
    "text, where",
    [
        ("profle: ithf\n", r":1:1: profle: unknown key; did you mean 'profile'\?"),
        ("gpio:\n  buttons:\n    start: 99\n", r":3:12: gpio.buttons.start: must be a GPIO number"),
        (
            "gpio:\n  buttons: {start: BOARD11, toggle: GPIO17}\n",
            r"gpio.buttons.toggle: GPIO17 is already used by buttons.start",
        ),
        ("gpio:\n  buttons: {toggle: BOARD16}\n", r"gpio.lamp: GPIO23 is already used by buttons"),
        ("gpio:\n  buttons: {add: BOARD6}\n", r"header pin 6 is not a GPIO pin"),
        ("gpio:\n  bounce: 2\n", r"gpio.bounce: must be shorter than every hold time"),
        ("profile: ithff\n", r":1:10: profile: unknown profile 'ithff'; did you mean 'ithf'\?"),
        ("sounds: ./nowhere\n", r":1:9: sounds: no sound pack"),
        ("audio: {driver: alas}\n", r"audio.driver: must be one of alsa"),
        ("gpio:\n  lamp: 27\n", r":2:9: gpio.lamp: GPIO27 is already used by buttons.toggle"),
        ("gpio:\n  horn: {pin: 24, seconds: 0}\n", r":2:28: gpio.horn.seconds: must be more than"),
        ("gpio:\n  horn: {pin: 24, cues: end}\n", r":2:25: gpio.horn.cues: must be a list"),
        ("audio: {attempts: 0}\n", r":1:19: audio.attempts: must be a whole number"),
        ("gpio: [1, 2]\n", r":1:7: gpio: must be a mapping"),
        ("- a list\n", r"must be a mapping"),
    ],
)
def test_bad_configs_are_refused_with_file_line_and_field(
    tmp_path: Path, text: str, where: str
) -> None:
    with pytest.raises(ConfigError, match=where):
        load(tmp_path, text)


def test_a_missing_config_given_by_name_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such config file"):
        config.load(tmp_path / "nope.yaml")


def test_the_docs_show_the_shipped_config_and_the_current_wiring() -> None:
    import importlib.util

    shipped = (ROOT / "systemd" / "config.yaml").read_text().split("\n\n", 1)[1]
    assert shipped in (ROOT / "docs" / "box.md").read_text()
    spec = importlib.util.spec_from_file_location("draw", ROOT / "scripts" / "draw_wiring.py")
    draw = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(draw)  # type: ignore[union-attr]
    assert (ROOT / "docs" / "wiring.svg").read_text() == draw.svg(), "run scripts/draw_wiring.py"


def test_profile_and_pack_paths_are_relative_to_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "league.yaml").write_text("title: league\nperiod: {length: 300}\n")
    cfg = load(tmp_path, "profile: ./league.yaml\n")
    assert cfg.profile == str(tmp_path / "league.yaml")


@pytest.mark.parametrize(
    "text, where",
    [
        (
            "audio:\n  sink: jack\n",
            r"config.yaml:2:9: audio.sink: 'jack' is not one of auto, silent, pipewire, "
            r"pulse, alsa, sdl, mixer",
        ),
        ("audio:\n  sink: [alsa, silent]\n", r"config.yaml:2:9: audio.sink: silent opens no"),
        (
            "audio:\n  sink: pulse\n  device: hw:1\n",
            r"config.yaml:3:11: audio.device: is for alsa or sdl or mixer, and audio.sink "
            r"\(--audio\) is pulse",
        ),
        (
            "audio:\n  latency_ms: 20\n  sink: pulse, alsa\n",
            r"config.yaml:2:15: audio.latency_ms: is for sdl, and audio.sink \(--audio\) is "
            r"pulse,alsa",
        ),
        ("audio: {sink: alsa, latency_ms: 5}\n", r"config.yaml:1:33: audio.latency_ms: is for"),
        ("audio: {sink: mixer, latency_ms: 5}\n", r"config.yaml:1:34: audio.latency_ms: is for"),
        (
            "audio:\n  sink: alsa\n  driver: pulseaudio\n",
            r"config.yaml:3:11: audio.driver: is for sdl or mixer, and audio.sink \(--audio\) "
            r"is alsa",
        ),
        (
            "audio:\n  sink: silent\n  device: hw:0\n",
            r"config.yaml:3:11: audio.device: is for alsa or sdl or mixer, and audio.sink "
            r"\(--audio\) is silent: silent opens no device",
        ),
        ("audio: {sink: silent, chunk: 512}\n", r"config.yaml:1:30: audio.chunk: is for pipewire"),
        (
            "audio:\n  sink: mixer\n  latency: 12\n",
            r"config.yaml:3:12: audio.latency: is for pipewire or pulse or alsa or sdl, and "
            r"audio.sink \(--audio\) is mixer: the mixer cannot place cues",
        ),
    ],
)
def test_the_audio_sink_is_checked_at_its_line(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(ConfigError, match=where):
        load(tmp_path, text)


@pytest.mark.parametrize(
    "text, where",
    [
        ("audio:\n  kind: mixer\n", r"config.yaml:2:9: audio.kind: is no setting: the output "),
        ("audio:\n  volume: 0.5\n  output: alsa\n", r"config.yaml:3:11: audio.output: is no"),
    ],
)
def test_the_old_audio_keys_are_refused_naming_the_one_that_chooses(
    tmp_path: Path, text: str, where: str
) -> None:
    with pytest.raises(ConfigError, match=where + r".*audio\.sink \(run --audio\).*\[pulse, alsa"):
        load(tmp_path, text)


def test_the_audio_sink_is_a_setting_and_runs_option_goes_over_it(tmp_path: Path) -> None:
    assert config.Config(None).audio_sinks == ("pipewire", "pulse", "alsa", "sdl")  # auto
    cfg = load(tmp_path, "audio: {sink: sdl, latency_ms: 20}\n")
    assert cfg.audio_sinks == ("sdl",)
    assert config.audio_for_run(cfg, None, None, None)[0] == ("sdl",)
    with pytest.raises(ConfigError, match=r"--audio-latency: is for sdl, and audio\.sink"):
        config.audio_for_run(cfg, "pulse", None, 30.0)
    with pytest.raises(ConfigError, match=r"audio\.latency_ms"):  # the file's, under pulse
        config.audio_for_run(cfg, "pulse", None, None)
    with pytest.raises(ConfigError, match=r"--audio: stream is what every sink but mixer"):
        config.audio_for_run(cfg, "stream", None, None)
    plain = load(tmp_path, "audio: {sink: [pulse, alsa]}\n")
    assert config.audio_for_run(plain, None, None, None)[0] == ("pulse", "alsa")
    assert config.audio_for_run(plain, "sdl,mixer", None, None)[0] == ("sdl", "mixer")


def test_check_shows_the_sinks_tried_and_those_passed_over(tmp_path: Path, capsys) -> None:
    from timekeeper.cli import main

    for text, said in [
        ("audio: {sink: pulse}\n", "ok  audio: audio.sink pulse: tried in turn pulse"),
        (
            "audio: {volume: 0.5}\n",
            "ok  audio: audio.sink auto: tried in turn pipewire, pulse, alsa, sdl",
        ),
        (
            "audio: {driver: alsa, latency_ms: 20}\n",
            "ok  audio: audio.sink auto: tried in turn (pipewire: passed over: audio.driver is "
            "set, which is for sdl), (pulse: passed over: audio.driver is set, which is for "
            "sdl), (alsa: passed over: audio.driver is set, which is for sdl), sdl",
        ),
        ("audio: {sink: silent}\n", "ok  audio: audio.sink silent (no device"),
    ]:
        (tmp_path / "config.yaml").write_text(text)
        assert main(["check", "--config", str(tmp_path / "config.yaml"), "--profile", "ithf"]) == 0
        assert said in capsys.readouterr().out, text


def test_runs_audio_options_are_checked_over_the_config_in_one_place(tmp_path: Path) -> None:
    measured = load(tmp_path, "audio: {latency: 10}\n")
    # the speaker's latency is the stream's offset on every sink: it chooses no sink and
    # leaves SDL's own latency alone
    assert measured.audio_offset == pytest.approx(0.010)
    sinks, settings = config.audio_for_run(measured, None, None, None)
    assert (sinks, settings.chunk, settings.latency) == (devices.AUTO, None, None)
    assert settings.offset == pytest.approx(0.010)
    sinks, settings = config.audio_for_run(measured, None, 1024, 20.0)
    assert (settings.chunk, settings.latency) == (1024, pytest.approx(0.020))
    with pytest.raises(ConfigError, match=r"audio\.latency"):
        config.audio_for_run(measured, "mixer", None, None)
    plain = config.Config(None)
    assert config.audio_for_run(plain, "mixer", 512, None) == (
        ("mixer",),
        devices.Settings(chunk=512),
    )
    with pytest.raises(ConfigError, match="--audio-latency"):
        config.audio_for_run(plain, "mixer", None, 20.0)
    with pytest.raises(ConfigError, match="--audio-chunk"):
        config.audio_for_run(plain, None, 10, None)


def test_run_audio_silent_leaves_a_card_boxs_settings_alone(tmp_path: Path) -> None:
    """`run --audio silent` (a practice hall, a test at the desk) on a box set up for its
    card: no device is opened, so the file's device settings are not used, not refused; the
    command line's own unused settings still are."""
    card = load(tmp_path, "audio: {sink: alsa, device: 'hw:1', latency: 12, chunk: 1024}\n")
    assert config.audio_for_run(card, "silent", None, None)[0] == ("silent",)
    with pytest.raises(ConfigError, match="--audio-latency"):
        config.audio_for_run(card, "silent", None, 20.0)
