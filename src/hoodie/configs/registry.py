"""The registry of configuration keys: one :class:`ConfigProperty` per key (made by :func:`define`),
how values are read from option maps, and the unknown-key warnings.

A property *is* its key (it subclasses ``str``, so ``options[PROP]`` and f-strings keep working) and
also knows how to read its value from an option map: ``PROP.get(options)`` resolves aliases, applies
the type's rule (:mod:`hoodie.configs.rules`) and the default, and raises :class:`ConfigValueError`
naming the key, the value and what is accepted. ``read(options, MyError)`` gives a reader that raises
a service's own error class instead.

Aliases are resolved in one place (:meth:`ConfigProperty.raw`): the property's key is the newest
Hudi spelling and its aliases are older ones. A value under any of them is used; when the key and an
alias (or two aliases) carry values that parse to different results, reading fails naming both.

Every key is defined in one module of the :mod:`hoodie.configs` package, and importing any part of
the package imports all of them (its ``__init__`` does), so :func:`all_configs`, :func:`lookup` and
:func:`known_keys` always see every key.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import warnings
from typing import Any, Generic, Iterator, Mapping, Optional, Sequence

from hoodie.configs.rules import STRING, ConfigType, ConfigValueError, Str, T, _shown, _text

# Groups of the configuration reference shared by several modules of the package.
W = "write"
R = "read"
TB = "table"


class ConfigProperty(str, Generic[T]):
    """One configuration key: its type, default, Hudi aliases, doc and group. The object is the key
    string itself, so it works wherever a key does.

    ``option`` is False for a key that is only a table property (``hoodie.properties``, e.g.
    ``hoodie.populate.meta.fields``): it is read by the same rules, but no write or service takes it
    as an option, so an option of that name is still warned about as unknown (it would change nothing)."""

    type: ConfigType[T]
    default: Optional[T]
    doc: str
    group: str
    aliases: tuple[str, ...]
    option: bool

    def __new__(cls, key: str, type_: ConfigType[T], default: Optional[T], doc: str, group: str,
                aliases: Sequence[str] = (), option: bool = True) -> "ConfigProperty[T]":
        self = super().__new__(cls, key)
        self.type = type_
        self.default = default
        self.doc = doc
        self.group = group
        self.aliases = tuple(aliases)
        self.option = option
        return self

    @property
    def key(self) -> str:
        """The key (Hudi's newest spelling)."""
        return str.__str__(self)

    @property
    def default_text(self) -> Optional[str]:
        """The default as text (None when the key has no default)."""
        return None if self.default is None else self.type.format(self.default)

    def parse(self, text: Any, key: Optional[str] = None) -> T:
        """Apply the type's rule to one value (``key`` names it in the error; default: this key)."""
        name = key or self.key
        s = _text(text)
        if s is None:
            raise ConfigValueError(f"{name} is empty; give a {self.type.describe()} value")
        return self.type.read(name, s)

    def raw(self, options: Optional[Mapping[str, Any]]) -> Optional[str]:
        """The stripped text set for this key or one of its aliases (None when none is set).

        The single place aliases are resolved: values under several of the names must agree
        (after parsing); otherwise the conflict is an error naming both."""
        if not options:
            return None
        found = [(k, t) for k in (self.key, *self.aliases) if k in options
                 for t in (_text(options[k]),) if t is not None]
        if not found:
            return None
        if len(found) > 1:
            parsed = [self.parse(t, k) for k, t in found]
            if any(p != parsed[0] for p in parsed[1:]):
                raise ConfigValueError(f"{' and '.join(k for k, _ in found)} are both set, to different values "
                                       f"({', '.join(_shown(t) for _, t in found)}); keep only {self.key}")
        return found[0][1]

    def get(self, options: Optional[Mapping[str, Any]]) -> Optional[T]:
        """This key's value in ``options`` (aliases resolved), or the default when unset."""
        text = self.raw(options)
        if text is None:
            return self.default
        return self.parse(text, self._source(options))

    def _source(self, options: Optional[Mapping[str, Any]]) -> str:
        """Which spelling carried the value, for messages."""
        for k in (self.key, *self.aliases):
            if options and _text(options.get(k)) is not None:
                return k
        return self.key

    def __reduce__(self) -> tuple:
        # Pickled (e.g. to Spark executors) as the plain key.
        return (str, (self.key,))


# Backwards-compatible name of a registry entry.
ConfigKey = ConfigProperty

class ConfigReader:
    """Reads properties from one option map and raises ``error`` (a service's own error class,
    a subclass of ValueError) instead of :class:`ConfigValueError`."""

    def __init__(self, options: Optional[Mapping[str, Any]], error: type[Exception] = ConfigValueError) -> None:
        self.options: Mapping[str, Any] = options or {}
        self.error = error

    def get(self, prop: "ConfigProperty[T]") -> Optional[T]:
        """The value of ``prop`` (its default when unset)."""
        try:
            return prop.get(self.options)
        except ConfigValueError as e:
            if self.error is ConfigValueError:
                raise
            raise self.error(str(e)) from None

    def raw(self, prop: "ConfigProperty[Any]") -> Optional[str]:
        """The text set for ``prop`` or an alias (None when unset); conflicts raise."""
        try:
            return prop.raw(self.options)
        except ConfigValueError as e:
            if self.error is ConfigValueError:
                raise
            raise self.error(str(e)) from None

    def is_set(self, prop: "ConfigProperty[Any]") -> bool:
        """Whether ``prop`` or an alias has a non-blank value."""
        return self.raw(prop) is not None


def read(options: Optional[Mapping[str, Any]], error: type[Exception] = ConfigValueError) -> ConfigReader:
    """A :class:`ConfigReader` over ``options`` raising ``error``."""
    return ConfigReader(options, error)


_REGISTRY: dict[str, ConfigProperty[Any]] = {}
_ALIAS_OWNER: dict[str, str] = {}


def _same(a: ConfigProperty[Any], b: ConfigProperty[Any]) -> bool:
    return (a.key, a.type.describe(), a.default_text, a.doc, a.group, a.aliases, a.option) == \
        (b.key, b.type.describe(), b.default_text, b.doc, b.group, b.aliases, b.option)


def define(key: str, default: Any, doc: str, group: str, aliases: Sequence[str] = (),
           type: Optional[ConfigType[Any]] = None, option: bool = True) -> ConfigProperty[Any]:
    """Define and register a key; returns its :class:`ConfigProperty`.

    ``default`` is a typed value or its text (parsed by the type, so every default is one the rule
    accepts); ``type`` defaults to string; ``option=False`` marks a key that is only a table property
    (see :class:`ConfigProperty`). A key has one definition: defining it again differently is
    a programming error (an identical definition, e.g. a re-imported module, is fine)."""
    old = _REGISTRY.get(key)
    if isinstance(default, str) and not default.strip():
        default = None  # a blank value is unset by the rules, so a blank default is no default
    t: ConfigType[Any] = type or STRING
    prop0: ConfigProperty[Any] = ConfigProperty(key, t, None, doc, group, aliases)
    typed = default
    if isinstance(default, str) and not isinstance(t, Str):
        typed = prop0.parse(default)
    prop = ConfigProperty(key, t, typed, doc, group, aliases, option)
    if old is not None and not _same(old, prop):
        raise ValueError(f"config key {key} is defined twice, differently; keep one definition")
    for a in prop.aliases:
        owner = _ALIAS_OWNER.get(a, key)
        if owner != key or a in _REGISTRY:
            raise ValueError(f"{a} is an alias of {key} and also of {owner}; an alias belongs to one key")
    if key in _ALIAS_OWNER and _ALIAS_OWNER[key] != key:
        raise ValueError(f"{key} is already an alias of {_ALIAS_OWNER[key]}")
    if old is not None:
        return old
    _REGISTRY[key] = prop
    for a in prop.aliases:
        _ALIAS_OWNER[a] = key
    return prop


def all_configs() -> list[ConfigProperty[Any]]:
    """Every defined key, sorted by group then key."""
    return sorted(_REGISTRY.values(), key=lambda c: (c.group, c.key))


def lookup(key: str) -> Optional[ConfigProperty[Any]]:
    """The property of ``key`` or of the key ``key`` is an alias of (None when unknown)."""
    return _REGISTRY.get(_ALIAS_OWNER.get(key, key))


def known_keys() -> set[str]:
    """Every key and alias hoodie accepts as an option (table-only properties are not options)."""
    out: set[str] = set()
    for c in all_configs():
        if not c.option:
            continue
        out.add(c.key)
        out.update(c.aliases)
    return out


_quiet: contextvars.ContextVar[bool] = contextvars.ContextVar("hoodie_quiet_unknown_keys", default=False)


def warn_unknown_keys(options: Optional[Mapping[str, Any]], stacklevel: int = 3) -> list[str]:
    """Warn about each ``hoodie.*`` key in ``options`` that hoodie does not know, suggesting the
    closest known key; returns the unknown keys.

    Every entry point that takes options calls this (writes, TTL, clean, compaction, the CLI's
    ``--set``): a misspelled key would otherwise be ignored and its default applied in silence.
    """
    if not options or _quiet.get():
        return []
    known = known_keys()
    unknown = [k for k in options if isinstance(k, str) and k.startswith("hoodie.") and k not in known]
    for k in unknown:
        close = difflib.get_close_matches(k, sorted(known), n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        warnings.warn(f"unknown option {k!r} is ignored{hint}", UserWarning, stacklevel=stacklevel)
    return unknown


@contextlib.contextmanager
def unknown_keys_checked() -> Iterator[None]:
    """Inside this block :func:`warn_unknown_keys` is silent: the caller has already warned about
    these options (inline services get the options of the write that warned)."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)

