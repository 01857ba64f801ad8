"""YAML that remembers where every value came from, so that errors in profiles, packs and
config files name the file, line and field instead of a bare KeyError."""

from __future__ import annotations

import difflib
import math
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

Path_ = tuple[str | int, ...]
HOUR = 3600.0


@dataclass(frozen=True)
class Where:
    file: Path
    line: int  # 1-based
    column: int  # 1-based

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class ConfigError(Exception):
    """Bad input, refused before anything starts; says where and what."""

    def __init__(
        self, message: str, where: Where | Path | str | None = None, field: str = ""
    ) -> None:
        self.message, self.where, self.field = message, where, field
        prefix = f"{where}: " if where is not None else ""
        super().__init__(f"{prefix}{field + ': ' if field else ''}{message}")


def field_name(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


class Doc:
    """A parsed YAML document: plain Python data plus the position of every value."""

    def __init__(
        self,
        data: Any,
        where: dict[Path_, Where],
        file: Path,
        keys: dict[Path_, Where] | None = None,
    ) -> None:
        self.data, self.where, self.file = data, where, file
        self.keys = keys or {}  # where each mapping key itself stands

    @classmethod
    def load(cls, file: Path) -> Doc:
        text = _read_text(file)
        try:
            loader = _Loader(text)  # (it checks every character here, before parsing)
        except yaml.reader.ReaderError as exc:
            before = text[: exc.position]
            column = len(before) - (before.rfind("\n") + 1) + 1
            raise ConfigError(
                f"a control character ({exc.character:#04x}) YAML does not allow: remove it",
                Where(file, before.count("\n") + 1, column),
            ) from None
        try:
            node = loader.get_single_node()
            where: dict[Path_, Where] = {}
            keys: dict[Path_, Where] = {}
            budget = [MAX_VALUES]
            data = _build(loader, node, (), where, keys, file, budget) if node is not None else None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            at = Where(file, mark.line + 1, mark.column + 1) if mark else file
            raise ConfigError(f"malformed YAML: {exc.problem or exc.context}", at) from None
        except yaml.YAMLError as exc:  # e.g. a character YAML does not allow
            raise ConfigError(f"malformed YAML: {exc}", file) from None
        finally:
            loader.dispose()
        return cls(data if data is not None else {}, where, file, keys)

    def at(self, path: Path_) -> Where | Path:
        """The position of `path`, or of its nearest parent that has one."""
        while path:
            if path in self.where:
                return self.where[path]
            path = path[:-1]
        return self.where.get((), self.file)

    def error(self, path: Path_, message: str) -> ConfigError:
        return ConfigError(message, self.at(path), field_name(path))

    def merged_over(self, base: Doc) -> Doc:
        """This document laid over `base` (mappings merge, everything else replaces)."""
        return Doc(
            _merge(base.data, self.data), base.where | self.where, self.file, base.keys | self.keys
        )

    def check_keys(self, path: Path_, mapping: dict[str, Any], allowed: Iterable[str]) -> None:
        allowed = list(allowed)
        for key in mapping:
            if key not in allowed:
                near = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"; did you mean {near[0]!r}?" if near else f"; known: {', '.join(allowed)}"
                at = self.keys.get((*path, key)) or self.at((*path, key))
                raise ConfigError(f"unknown key{hint}", at, field_name((*path, key)))


class Reader:
    """Typed access to a Doc, raising ConfigError with file:line and the field's name: the
    one reader of profiles and of the box's config."""

    def __init__(self, doc: Doc) -> None:
        self.doc = doc

    def get(self, path: Path_, default: Any = None) -> Any:
        value: Any = self.doc.data
        for part in path:
            in_dict = isinstance(value, dict) and part in value
            in_list = isinstance(value, list) and isinstance(part, int) and part < len(value)
            if in_dict or in_list:
                value = value[part]
            else:
                return default
        return value

    def mapping(
        self, path: Path_, keys: tuple[str, ...], *, optional: bool = True
    ) -> dict[str, Any] | None:
        value = self.get(path)
        if value is None:
            if optional:
                return None
            raise self.doc.error(path, "missing")
        if not isinstance(value, dict):
            raise self.doc.error(path, "must be a mapping of settings")
        self.doc.check_keys(path, value, keys)
        return value

    def seconds(
        self, path: Path_, default: float | None = None, *, zero: bool = False, most: float = HOUR
    ) -> float:
        value = self.get(path, default)
        if value is None:
            raise self.doc.error(path, "missing (a number of seconds)")
        if isinstance(value, bool) or not isinstance(value, int | float):
            hint = " (YAML reads 1e9 as text: write 1.0e+9)" if _numeric_text(value) else ""
            raise self.doc.error(path, f"must be a number of seconds, not {value!r}{hint}")
        if not math.isfinite(value):
            raise self.doc.error(path, f"must be a finite number of seconds, not {value}")
        if value < 0 or (value == 0 and not zero):
            kind = "zero or more" if zero else "more than zero"
            raise self.doc.error(path, f"must be {kind} seconds (got {value})")
        if value > most:
            raise self.doc.error(
                path, f"must be at most {most:g} seconds ({_hms(most)}), not {value:g}"
            )
        return float(value)

    def integer(self, path: Path_, default: int, most: int = 1000) -> int:
        value = self.get(path, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
            raise self.doc.error(path, f"must be a whole number from 1 to {most}, not {value!r}")
        return value

    def flag(self, path: Path_, default: bool) -> bool:
        value = self.get(path, default)
        if not isinstance(value, bool):
            raise self.doc.error(path, f"must be true or false, not {value!r}")
        return value

    def choice(self, path: Path_, choices: tuple[str, ...], default: str) -> str:
        value = self.get(path, default)
        if value not in choices:
            raise self.doc.error(path, f"must be one of {', '.join(choices)}, not {value!r}")
        return str(value)

    def text(self, path: Path_, default: str, most: int = 4096) -> str:
        value = self.get(path, default)
        if not isinstance(value, str):
            raise self.doc.error(path, f"must be text, not {value!r}")
        if len(value) > most:
            raise self.doc.error(path, f"must be at most {most} characters (got {len(value)})")
        return value


def _numeric_text(value: Any) -> bool:
    try:
        return isinstance(value, str) and math.isfinite(float(value))
    except ValueError:
        return False


def _hms(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = _merge(base.get(key), value) if key in base else value
        return out
    return over


# Limits that refuse a hostile or broken file in milliseconds, before it can cost minutes and
# gigabytes (a profile, a pack or a config is a few hundred bytes to a few kilobytes).
MAX_BYTES = 256 * 1024  # the file, read before parsing
MAX_DEPTH = 32  # nesting of mappings and lists (a profile needs 4)
MAX_ALIASES = 64  # *alias uses: anchors are allowed, an alias bomb is not
MAX_VALUES = 5_000  # values, also after aliases are expanded (a profile has about 40)
MAX_DIGITS = 40  # a number longer than this is no time, count or volume


def _read_text(file: Path) -> str:
    try:  # non-blocking: opening a FIFO must not wait for a writer
        with open(os.open(file, os.O_RDONLY | os.O_NONBLOCK), "rb") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                raise ConfigError("not a regular file (a device, a FIFO or a folder)", file)
            raw = stream.read(MAX_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file) from None
    if len(raw) > MAX_BYTES:
        raise ConfigError(f"too large for a settings file (more than {MAX_BYTES // 1024} KB)", file)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError("not a UTF-8 text file", Where(file, line, 1)) from None
    if "\x00" in text:
        before = text[: text.index("\x00")]
        column = len(before) - (before.rfind("\n") + 1) + 1
        raise ConfigError(
            "a NUL byte: not a text file", Where(file, before.count("\n") + 1, column)
        )
    return text


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with limits on nesting and aliases, checked as it composes (its
    composer is recursive: a 1,000-deep document would otherwise end in RecursionError)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0
        self._aliases = 0
        self._nodes = 0

    def _mark(self) -> Any:
        return self.peek_event().start_mark  # type: ignore[no-untyped-call]

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise yaml.MarkedYAMLError(
                    problem=f"more than {MAX_ALIASES} aliases (*name)", problem_mark=self._mark()
                )
        self._nodes += 1
        if self._nodes > MAX_VALUES:  # refused while parsing, before the rest is read
            raise yaml.MarkedYAMLError(
                problem=f"more than {MAX_VALUES} values", problem_mark=self._mark()
            )
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.MarkedYAMLError(
                    problem=f"nested more than {MAX_DEPTH} deep", problem_mark=self._mark()
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _build(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    path: Path_,
    where: dict[Path_, Where],
    keys: dict[Path_, Where],
    file: Path,
    budget: list[int],
) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise yaml.MarkedYAMLError(
            problem=f"more than {MAX_VALUES} values (after aliases are expanded)",
            problem_mark=node.start_mark,
        )
    where[path] = Where(file, node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise yaml.MarkedYAMLError(
                    problem="keys must be plain names", problem_mark=key_node.start_mark
                )
            key = _scalar(loader, key_node)
            if not isinstance(key, str | int):
                raise yaml.MarkedYAMLError(
                    problem="keys must be plain names", problem_mark=key_node.start_mark
                )
            if key in out:
                raise yaml.MarkedYAMLError(
                    problem=f"duplicate key {key!r}", problem_mark=key_node.start_mark
                )
            keys[(*path, key)] = Where(
                file, key_node.start_mark.line + 1, key_node.start_mark.column + 1
            )
            out[key] = _build(loader, value_node, (*path, key), where, keys, file, budget)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [
            _build(loader, item, (*path, i), where, keys, file, budget)
            for i, item in enumerate(node.value)
        ]
    return _scalar(loader, node)


def _scalar(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    if node.tag in _NUMBER_TAGS and len(node.value) > MAX_DIGITS:
        raise yaml.MarkedYAMLError(
            problem=f"a number of more than {MAX_DIGITS} characters", problem_mark=node.start_mark
        )
    try:
        return loader.construct_object(node, deep=True)
    except (ValueError, OverflowError) as exc:
        raise yaml.MarkedYAMLError(
            problem=f"cannot be read ({exc})", problem_mark=node.start_mark
        ) from None
