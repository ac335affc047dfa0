"""The context-manager protocol the client classes share."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Optional, Type, TypeVar

from exactly.errors import Error

_C = TypeVar("_C", bound="ClosesOnExit")


class ClosesOnExit:
    """``with Client(...) as c:`` closes ``c`` on the way out. When the body
    raised, an :class:`Error` from ``close`` is dropped, so that the body's
    exception is the one the caller sees."""

    def close(self) -> Any:
        raise NotImplementedError

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if exc_type is None:
            self.close()
            return
        try:
            self.close()
        except Error:
            pass
