"""Exceptions. Every error exactly raises is an :class:`Error`; one that came
from Kafka is a :class:`KafkaError` and carries the Kafka error (librdkafka's
code and name) with the three flags every Kafka client has:

* ``retriable``: the same call may succeed if repeated;
* ``txn_requires_abort``: abort the transaction, then run it again;
* ``fatal``: this client instance cannot continue (``fenced`` tells whether
  another instance with the same ``transactional.id`` took over).

The others say what was wrong without Kafka: :class:`ConfigError` (also a
``ValueError``) for a refused option or argument, :class:`StateError` (also a
``RuntimeError``) for a call the object's state does not allow, and
:class:`TimeoutError` (also the built-in ``TimeoutError``).
"""

from __future__ import annotations

import builtins
from typing import Any, Optional, Tuple

__all__ = [
    "Error",
    "KafkaError",
    "ConfigError",
    "StateError",
    "TimeoutError",
    "ResourceExhaustedError",
]


class Error(Exception):
    """Base class of every exception raised by exactly.

    ``status`` is the status code of the SDK's ``absl::Status`` (for example
    ``"INVALID_ARGUMENT"`` or ``"UNAVAILABLE"``); ``message`` its message.
    """

    def __init__(self, message: str = "", status: str = "UNKNOWN") -> None:
        super().__init__(message)
        self.message = message
        self.status = status

    def __reduce__(self) -> Any:
        return (self.__class__, (self.message,), self.__dict__)

    def __str__(self) -> str:
        return self.message


class KafkaError(Error):
    """An error that came from Kafka (the broker or librdkafka).

    ``code`` is librdkafka's error code (broker errors >= 1, local errors
    < -1), ``name`` its name (e.g. ``"INVALID_PRODUCER_EPOCH"``,
    ``"_QUEUE_FULL"``).
    """

    def __init__(
        self,
        message: str = "",
        status: str = "UNKNOWN",
        *,
        code: int = 0,
        name: str = "",
        retriable: bool = False,
        txn_requires_abort: bool = False,
        fatal: bool = False,
        fenced: bool = False,
    ) -> None:
        super().__init__(message, status)
        self.code = code
        self.name = name
        self.retriable = retriable
        self.txn_requires_abort = txn_requires_abort
        self.fatal = fatal
        self.fenced = fenced

    def __repr__(self) -> str:
        flags = [
            f for f in ("retriable", "txn_requires_abort", "fatal", "fenced")
            if getattr(self, f)
        ]
        return (
            f"KafkaError({self.name}, code={self.code}, "
            f"flags=[{', '.join(flags)}], message={self.message!r})"
        )


class ConfigError(Error, ValueError):
    """An option, property or argument was refused (INVALID_ARGUMENT)."""


class StateError(Error, RuntimeError):
    """The call is not allowed now, e.g. on a closed client
    (FAILED_PRECONDITION)."""


class TimeoutError(Error, builtins.TimeoutError):  # noqa: A001
    """The call did not complete in time (DEADLINE_EXCEEDED)."""


class ResourceExhaustedError(Error):
    """Out of room: a full spool or disk (RESOURCE_EXHAUSTED)."""


_BY_STATUS = {
    "INVALID_ARGUMENT": ConfigError,
    "FAILED_PRECONDITION": StateError,
    "DEADLINE_EXCEEDED": TimeoutError,
    "RESOURCE_EXHAUSTED": ResourceExhaustedError,
}


def _from_status(
    status: str,
    message: str,
    kafka: Optional[Tuple[int, str, bool, bool, bool, bool]],
) -> Error:
    """The exception for an SDK status (called by the extension)."""
    if kafka is not None:
        code, name, retriable, abort, fatal, fenced = kafka
        return KafkaError(
            message,
            status,
            code=code,
            name=name,
            retriable=retriable,
            txn_requires_abort=abort,
            fatal=fatal,
            fenced=fenced,
        )
    return _BY_STATUS.get(status, Error)(message, status)
