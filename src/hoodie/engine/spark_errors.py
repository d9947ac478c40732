"""hoodie's own message out of an error that came back through Spark.

An error hoodie raises inside Spark (the ``hoodie`` data source's ``schema``/``reader``/``writer``, a
Python worker running a write task) reaches the caller wrapped: an ``AnalysisException``
(``[PYTHON_DATA_SOURCE_ERROR] ... Traceback ...``), a ``PythonException`` or a ``Py4JJavaError`` whose
text holds the worker's Python traceback among Java frames. :func:`unwrap` finds the last Python
traceback in that text and, when it was raised by hoodie's code, returns an exception carrying hoodie's
message alone; :func:`unwrapping` applies it around an entry point (``hoodie.sql``, ``hoodie.spark.*``).

The exception returned is of the class raised inside Spark when that class is hoodie's (``WriteError``,
``SqlError``...), else of :class:`SparkSideError` mixed with the builtin class raised (a ``ValueError``
stays catchable as ``ValueError``). Its message is printed once and first: the Spark exception is kept as
``spark_exception`` (and as ``__context__``, not printed) instead of as the printed cause.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import re
from typing import Any, Callable, Optional, TypeVar

from hoodie.errors import HoodieError

F = TypeVar("F", bound=Callable[..., Any])

_TRACEBACK = "Traceback (most recent call last):"
_FRAME_FILE = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+')
_EXC_LINE = re.compile(r"^(?P<cls>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Warning)): ?(?P<msg>.*)$")
# Where Spark's own text resumes after the Python exception's message.
_END = re.compile(r"^(?:\s+SQLSTATE: \w+|\s*at [\w$.]+\(|\tat |JVM stacktrace:|\s*\.\.\. \d+ more|"
                  r"\s*Caused by: |Driver stacktrace:|\s*$)")


class SparkSideError(HoodieError):
    """An error hoodie raised inside Spark (data source, Python worker), unwrapped: the message is hoodie's
    own. ``original_type`` names the class raised there; ``spark_exception`` is what Spark raised."""

    original_type: str = ""
    spark_exception: Optional[BaseException] = None


_MIXED: dict[type, type] = {}


def _text(e: BaseException) -> str:
    """Everything the exception says, the JVM side of a Py4J error included."""
    parts = [str(e)]
    java = getattr(e, "java_exception", None)
    if java is not None:
        try:
            parts.append(str(java.toString()))
            cause = java.getCause()
            while cause is not None:
                parts.append(str(cause.toString()))
                cause = cause.getCause()
        except Exception:  # a JVM already gone: the Python text is all there is
            pass
    desc = getattr(e, "desc", None)
    if isinstance(desc, str):
        parts.append(desc)
    return "\n".join(parts)


def hoodie_message(text: str) -> Optional[tuple[str, str]]:
    """(exception class name, message) of the last Python traceback in ``text`` when one of its frames is in
    hoodie's code; None otherwise (an error of Spark's own, or of user code)."""
    start = text.rfind(_TRACEBACK)
    if start < 0:
        return None
    lines = text[start + len(_TRACEBACK):].splitlines()
    in_hoodie = False
    for i, line in enumerate(lines):
        f = _FRAME_FILE.match(line)
        if f:
            in_hoodie = in_hoodie or "/hoodie/" in f.group("file").replace("\\", "/")
            continue
        if line.startswith((" ", "\t")) or not line:
            continue  # a frame's source line, or its carets
        m = _EXC_LINE.match(line)
        if not m:
            continue
        msg = [m.group("msg")]
        for more in lines[i + 1:]:
            if _END.match(more):
                break
            msg.append(more)
        return (m.group("cls"), "\n".join(msg).strip()) if in_hoodie else None
    return None


def _class(name: str) -> Optional[type]:
    if "." not in name:
        cls = getattr(builtins, name, None)
    else:
        module, _, attr = name.rpartition(".")
        if not module.startswith("hoodie."):
            return None
        try:
            cls = getattr(importlib.import_module(module), attr, None)
        except Exception:
            return None
    return cls if isinstance(cls, type) and issubclass(cls, BaseException) else None


def unwrap(e: BaseException) -> Optional[BaseException]:
    """The hoodie error inside ``e`` (an exception Spark raised), or None when ``e`` holds none."""
    if isinstance(e, HoodieError):
        return None  # raised by hoodie on the driver: already hoodie's own
    found = hoodie_message(_text(e))
    if found is None:
        return None
    name, msg = found
    cls = _class(name)
    if cls is not None and issubclass(cls, HoodieError):
        out = cls.__new__(cls)  # its own constructor may take other arguments; the message is complete
        Exception.__init__(out, msg)
    else:
        base = cls if cls is not None and issubclass(cls, Exception) else None
        mixed = SparkSideError
        if base is not None and not issubclass(SparkSideError, base):
            mixed = _MIXED.get(base) or _MIXED.setdefault(
                base, type(f"SparkSide{base.__name__}", (SparkSideError, base), {"__module__": __name__}))
        out = mixed.__new__(mixed)
        Exception.__init__(out, msg)
    out.original_type = name  # type: ignore[attr-defined]
    out.spark_exception = e  # type: ignore[attr-defined]
    return out


def unwrapping(fn: F) -> F:
    """``fn`` raising hoodie's own error (:func:`unwrap`) in place of the Spark exception wrapping it."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            inner = unwrap(e)
            if inner is None:
                raise
            raise inner from None  # the message once: Spark's text repeats it among its frames
    return wrapper  # type: ignore[return-value]


__all__ = ["SparkSideError", "unwrap", "unwrapping", "hoodie_message"]
