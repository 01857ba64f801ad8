"""What a desk command (`timekeeper hall …`) runs with — the broker and its account, the
hall's name, the language — from the command line over the config, merged here once, as
`box/config.audio_for_run` does it for `run`; cli/hall.py only wires.

The config is the box wing's (`box/config.py`, a wing above this one): the caller loads it,
and only the fields named in `DeskConfig` are read here."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from timekeeper.hall.account import with_account
from timekeeper.hall.link import Broker
from timekeeper.rules.yamldoc import ConfigError
from timekeeper.show import language


class HallSection(Protocol):
    """A config's `hall:` section (box/config.HallConfig)."""

    @property
    def broker(self) -> str: ...
    @property
    def hall(self) -> str: ...
    @property
    def user(self) -> str | None: ...
    @property
    def password(self) -> str | None: ...
    @property
    def password_file(self) -> Path | None: ...


class DeskConfig(Protocol):
    """What the desk reads of a config (box/config.Config)."""

    @property
    def hall(self) -> HallSection | None: ...
    @property
    def language(self) -> str: ...


@dataclass(frozen=True)
class DeskSettings:
    broker: Broker  # with the account it logs in with
    hall: str
    language: str  # --language, else the config's, else en
    language_given: bool  # --language was given: it wins over a tournament file's

    def language_for(self, tournament_language: str) -> str:
        """The calls' and the pages' language once a tournament is named: the file's
        `language:`, unless --language said otherwise."""
        if self.language_given or not tournament_language:
            return self.language
        return tournament_language


def desk_settings(
    args: argparse.Namespace, load_config: Callable[[Path | None], DeskConfig]
) -> DeskSettings:
    """--broker, --hall, --user, --password-file and --language over --config (or the box's
    own config): the broker is the option's, else the config's `hall.broker`; the hall's
    name the option's, else (with the config's broker, or a --config) the config's, else
    `hall`; the account as account.py says. Refused (ConfigError, exit 2) before any
    connection is tried."""
    cfg = load_config(args.config) if args.config or not args.broker else None
    url = args.broker or (cfg.hall.broker if cfg and cfg.hall else None)
    if url is None:
        raise ConfigError(
            "which hall? give --broker mqtt://HOST (and --hall NAME), or a "
            "config with a hall: section",
            field="--broker",
        )
    hall = args.hall_name or (cfg.hall.hall if cfg and cfg.hall else "hall")
    if cfg is None and not args.user:  # the account may still be the config's
        cfg = load_config(None)
    account = cfg.hall if cfg and cfg.hall else None
    user = args.user or (account.user if account else None)
    password_file = args.password_file or (account.password_file if account else None)
    password = None if args.password_file or args.user else (account.password if account else None)
    try:
        broker = Broker.parse(url)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--broker") from None
    try:
        broker = with_account(broker, user, password, password_file)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--password-file") from None
    lang = args.language or (cfg.language if cfg else language.DEFAULT)
    try:
        language.check(lang)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--language") from None
    return DeskSettings(broker, hall, lang, args.language is not None)
