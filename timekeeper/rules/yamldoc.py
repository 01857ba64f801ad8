"""YAML that remembers where every value came from, so that errors in profiles, packs and
config files name the file, line and field instead of a bare KeyError."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

Path_ = tuple[str | int, ...]


@dataclass(frozen=True)
class Where:
    file: Path
    line: int  # 1-based
    column: int  # 1-based

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class ConfigError(Exception):
    """Bad input, refused before anything starts; says where and what."""

    def __init__(self, message: str, where: Where | Path | None = None, field: str = "") -> None:
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

    def __init__(self, data: Any, where: dict[Path_, Where], file: Path,
                 keys: dict[Path_, Where] | None = None) -> None:
        self.data, self.where, self.file = data, where, file
        self.keys = keys or {}  # where each mapping key itself stands

    @classmethod
    def load(cls, file: Path) -> Doc:
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read: {exc.strerror or exc}", file) from None
        except UnicodeDecodeError:
            raise ConfigError("not a UTF-8 text file", file) from None
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            where: dict[Path_, Where] = {}
            keys: dict[Path_, Where] = {}
            data = _build(loader, node, (), where, keys, file) if node is not None else None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            at = Where(file, mark.line + 1, mark.column + 1) if mark else file
            raise ConfigError(f"malformed YAML: {exc.problem or exc.context}", at) from None
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
        return Doc(_merge(base.data, self.data), base.where | self.where, self.file,
                   base.keys | self.keys)

    def check_keys(self, path: Path_, mapping: dict, allowed: Iterable[str]) -> None:
        allowed = list(allowed)
        for key in mapping:
            if key not in allowed:
                near = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"; did you mean {near[0]!r}?" if near else f"; known: {', '.join(allowed)}"
                at = self.keys.get((*path, key)) or self.at((*path, key))
                raise ConfigError(f"unknown key{hint}", at, field_name((*path, key)))


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = _merge(base.get(key), value) if key in base else value
        return out
    return over


def _build(loader: yaml.SafeLoader, node: yaml.Node, path: Path_, where: dict, keys: dict,
           file: Path) -> Any:
    where[path] = Where(file, node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str | int):
                raise yaml.MarkedYAMLError(problem="keys must be plain names",
                                           problem_mark=key_node.start_mark)
            if key in out:
                raise yaml.MarkedYAMLError(problem=f"duplicate key {key!r}",
                                           problem_mark=key_node.start_mark)
            keys[(*path, key)] = Where(file, key_node.start_mark.line + 1,
                                       key_node.start_mark.column + 1)
            out[key] = _build(loader, value_node, (*path, key), where, keys, file)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, (*path, i), where, keys, file)
                for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)
