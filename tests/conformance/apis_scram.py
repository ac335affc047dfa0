"""Schemas of the SCRAM credential APIs (KIP-554), written from Kafka's
DescribeUserScramCredentials*.json and AlterUserScramCredentials*.json: v0 only, flexible."""
import hashlib

from wire import Api

# Kafka's ScramMechanism type codes.
SCRAM_SHA_256, SCRAM_SHA_512 = 1, 2

DESCRIBE_USER_SCRAM_CREDENTIALS = Api(50, "DescribeUserScramCredentials", 0, request=[
    ("users", [("name", "string", "0+")], "0+"),  # null: every user
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("error_code", "int16", "0+"),
    ("error_message", "string", "0+"),
    ("results", [
        ("user", "string", "0+"),
        ("error_code", "int16", "0+"),
        ("error_message", "string", "0+"),
        ("credential_infos", [("mechanism", "int8", "0+"), ("iterations", "int32", "0+")], "0+"),
    ], "0+"),
])

ALTER_USER_SCRAM_CREDENTIALS = Api(51, "AlterUserScramCredentials", 0, request=[
    ("deletions", [("name", "string", "0+"), ("mechanism", "int8", "0+")], "0+"),
    ("upsertions", [
        ("name", "string", "0+"),
        ("mechanism", "int8", "0+"),
        ("iterations", "int32", "0+"),
        ("salt", "bytes", "0+"),
        ("salted_password", "bytes", "0+"),
    ], "0+"),
], response=[
    ("throttle_time_ms", "int32", "0+"),
    ("results", [
        ("user", "string", "0+"),
        ("error_code", "int16", "0+"),
        ("error_message", "string", "0+"),
    ], "0+"),
])


def salted_password(mechanism: int, password: str, salt: bytes, iterations: int) -> bytes:
    """Hi(password, salt, iterations) of RFC 5802: what an upsertion carries."""
    digest = "sha256" if mechanism == SCRAM_SHA_256 else "sha512"
    return hashlib.pbkdf2_hmac(digest, password.encode(), salt, iterations)


def upsertion(name: str, mechanism: int = SCRAM_SHA_256, password: str = "secret",
              iterations: int = 4096, salt: bytes = b"conformance-salt") -> dict:
    return {"name": name, "mechanism": mechanism, "iterations": iterations, "salt": salt,
            "salted_password": salted_password(mechanism if mechanism in (1, 2) else 1,
                                               password, salt, max(iterations, 1))}
