"""librdkafka properties from Python arguments.

Properties pass straight through under their librdkafka names, from a
``config`` dict (``{"linger.ms": 5}``) or as keyword arguments with dots
written as underscores (``linger_ms=5``). Values become strings (booleans as
"true"/"false").
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from exactly.errors import ConfigError


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def properties(
    config: Optional[Mapping[str, Any]],
    keywords: Mapping[str, Any],
    **fields: Any,
) -> Dict[str, str]:
    """Merges `config`, `keywords` (underscores become dots) and `fields`
    (named as the property, dots as underscores; None means unset)."""
    out: Dict[str, str] = {}
    origin: Dict[str, str] = {}

    def put(name: str, value: Any, where: str) -> None:
        if value is None:
            return
        text = _text(value)
        if name in out and out[name] != text:
            raise ConfigError(
                f"property {name} is set twice with different values: "
                f"{out[name]!r} ({origin[name]}) and {text!r} ({where})",
                "INVALID_ARGUMENT",
            )
        out[name] = text
        origin[name] = where

    for name, value in (config or {}).items():
        put(str(name), value, f"config[{name!r}]")
    for name, value in keywords.items():
        put(name.replace("_", "."), value, f"keyword {name}")
    for name, value in fields.items():
        put(name.replace("_", "."), value, f"argument {name}")
    return out


def mode_unchecked(mode: str) -> bool:
    if mode == "exactly_once":
        return False
    if mode == "unchecked":
        return True
    raise ConfigError(
        f"mode must be 'exactly_once' or 'unchecked', not {mode!r}",
        "INVALID_ARGUMENT",
    )


def block_when_full(queue_full: str) -> bool:
    if queue_full == "block":
        return True
    if queue_full == "fail":
        return False
    raise ConfigError(
        f"queue_full must be 'block' or 'fail', not {queue_full!r}",
        "INVALID_ARGUMENT",
    )
