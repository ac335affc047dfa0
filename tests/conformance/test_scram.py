"""SCRAM credentials through DescribeUserScramCredentials and AlterUserScramCredentials
(KIP-554): listing, the per-user errors of both APIs, and an upsertion or deletion seen by the
next describe. Kafka answers a request's users in hash order, so the results are compared sorted
by user; its brokers learn an alteration through the metadata log, so a describe after one waits
until it shows (the bundled broker's is immediate)."""
from apis_scram import (ALTER_USER_SCRAM_CREDENTIALS, DESCRIBE_USER_SCRAM_CREDENTIALS,
                        SCRAM_SHA_256, SCRAM_SHA_512, upsertion)
from side_by_side import scenario, unique, wait_until


def _alter(broker, deletions=(), upsertions=()):
    answer = broker.call(ALTER_USER_SCRAM_CREDENTIALS, 0, deletions=list(deletions),
                         upsertions=list(upsertions))
    return sorted(answer["results"], key=lambda r: (r["user"], r["error_code"]))


def _describe(broker, users):
    return broker.call(DESCRIBE_USER_SCRAM_CREDENTIALS, 0,
                       users=None if users is None else [{"name": u} for u in users])


def _infos(result):
    return sorted((i["mechanism"], i["iterations"]) for i in result["credential_infos"])


def _described(broker, user):
    """The user's (mechanism, iterations), or its describe error code."""
    result = _describe(broker, [user])["results"][0]
    return result["error_code"] or _infos(result)


def _wait_described(broker, user, expected):
    wait_until(lambda: _described(broker, user) == expected,
               f"{user}'s credentials to read {expected}")


@scenario
def test_describe_all_users(broker):
    """Null users and an empty list both describe every user with a credential: a user just
    given both mechanisms is among them with each mechanism's iterations, and no result of
    either list carries an error."""
    user = unique("scram-all")
    altered = _alter(broker, upsertions=[upsertion(user, SCRAM_SHA_256, iterations=4096),
                                         upsertion(user + "-512", SCRAM_SHA_512,
                                                   iterations=8192)])
    _wait_described(broker, user, [(SCRAM_SHA_256, 4096)])
    _wait_described(broker, user + "-512", [(SCRAM_SHA_512, 8192)])
    facts = {"altered": [r["error_code"] for r in altered]}
    for name, users in (("null", None), ("empty", [])):
        answer = _describe(broker, users)
        mine = {r["user"]: _infos(r) for r in answer["results"]
                if r["user"] in (user, user + "-512")}
        facts[name] = {"error_code": answer["error_code"],
                       "error_message": answer["error_message"],
                       "result_errors": sorted({r["error_code"] for r in answer["results"]}),
                       "mine": [mine.get(user), mine.get(user + "-512")]}
    return facts


@scenario
def test_describe_unknown_user(broker):
    """A user without credentials: RESOURCE_NOT_FOUND for that user, no request-level error,
    and the others named still described."""
    known, unknown = unique("scram-known"), unique("scram-unknown")
    _alter(broker, upsertions=[upsertion(known)])
    _wait_described(broker, known, [(SCRAM_SHA_256, 4096)])
    answer = _describe(broker, [unknown, known])
    results = sorted(answer["results"], key=lambda r: r["user"] == known)
    return {"error_code": answer["error_code"],
            "results": [{"error_code": r["error_code"],
                         "error_message": r["error_message"].replace(unknown, "<user>")
                         if r["error_message"] is not None else None,
                         "infos": _infos(r)} for r in results]}


@scenario
def test_duplicate_user(broker):
    """A user named twice in a describe is answered once, DUPLICATE_RESOURCE; altered twice in
    one request (two upsertions, or a deletion and an upsertion) DUPLICATE_RESOURCE too, with
    nothing of it applied, while another user of the same request is altered."""
    user, other, again = unique("scram-dup"), unique("scram-other"), unique("scram-again")
    described = _describe(broker, [user, user])
    twice = _alter(broker, upsertions=[upsertion(user), upsertion(user, SCRAM_SHA_512),
                                       upsertion(other)])
    mixed = _alter(broker, deletions=[{"name": again, "mechanism": SCRAM_SHA_256}],
                   upsertions=[upsertion(again)])
    deleted_twice = _alter(broker, deletions=[{"name": again, "mechanism": SCRAM_SHA_256},
                                              {"name": again, "mechanism": SCRAM_SHA_512}])
    _wait_described(broker, other, [(SCRAM_SHA_256, 4096)])

    def shown(results, *users):
        out = []
        for r in results:
            message = r["error_message"]
            for i, u in enumerate(users):
                message = message.replace(u, f"<user{i}>") if message else message
            out.append((users.index(r["user"]), r["error_code"], message))
        return sorted(out)

    return {"describe": shown(described["results"], user),
            "describe_error_code": described["error_code"],
            "two_upsertions": shown(twice, user, other),
            "deletion_and_upsertion": shown(mixed, again),
            "two_deletions": shown(deleted_twice, again),
            "user_afterwards": _described(broker, user)}


@scenario
def test_bad_mechanism(broker):
    """A mechanism other than 1 (SCRAM-SHA-256) or 2 (SCRAM-SHA-512), in an upsertion or a
    deletion: UNSUPPORTED_SASL_MECHANISM."""
    a, b, c = unique("scram-mech"), unique("scram-mech"), unique("scram-mech")
    results = _alter(broker, deletions=[{"name": a, "mechanism": 0}],
                     upsertions=[upsertion(b, 3), upsertion(c, -1)])
    return sorted((r["error_code"], r["error_message"]) for r in results)


@scenario
def test_bad_iterations_and_names(broker):
    """Iterations below SCRAM's minimum (4096) or above 16384, and an empty user name (in an
    upsertion or a deletion): UNACCEPTABLE_CREDENTIAL, each with Kafka's reason; the bounds
    themselves are accepted."""
    low, high, lowest, highest = (unique("scram-iter") for _ in range(4))
    refused = _alter(broker, upsertions=[upsertion(low, iterations=4095),
                                         upsertion(high, SCRAM_SHA_512, iterations=16385)])
    accepted = _alter(broker, upsertions=[upsertion(lowest, iterations=4096),
                                          upsertion(highest, SCRAM_SHA_512,
                                                    iterations=16384)])
    no_name = _alter(broker, upsertions=[upsertion("")])
    no_name_deleted = _alter(broker, deletions=[{"name": "", "mechanism": SCRAM_SHA_256}])
    by_user = {low: "low", high: "high", lowest: "lowest", highest: "highest", "": "empty"}
    return {"refused": sorted((by_user[r["user"]], r["error_code"], r["error_message"])
                              for r in refused),
            "accepted": sorted((by_user[r["user"]], r["error_code"]) for r in accepted),
            "no_name": [(r["user"], r["error_code"], r["error_message"]) for r in no_name],
            "no_name_deleted": [(r["user"], r["error_code"], r["error_message"])
                                for r in no_name_deleted]}


@scenario
def test_upsert_then_describe(broker):
    """Upsertions answer NONE with a null message and show in the next describe with their
    iterations; a second upsertion of a mechanism replaces the first; the two mechanisms are
    separate credentials."""
    user = unique("scram-upsert")
    first = _alter(broker, upsertions=[upsertion(user, SCRAM_SHA_256, iterations=8192)])
    _wait_described(broker, user, [(SCRAM_SHA_256, 8192)])
    second = _alter(broker, upsertions=[upsertion(user, SCRAM_SHA_512, iterations=4096)])
    _wait_described(broker, user, [(SCRAM_SHA_256, 8192), (SCRAM_SHA_512, 4096)])
    third = _alter(broker, upsertions=[upsertion(user, SCRAM_SHA_256, iterations=10000,
                                                 password="changed")])
    _wait_described(broker, user, [(SCRAM_SHA_256, 10000), (SCRAM_SHA_512, 4096)])
    return {"answers": [[(r["error_code"], r["error_message"]) for r in a]
                        for a in (first, second, third)],
            "described": _described(broker, user)}


@scenario
def test_delete_missing_and_existing(broker):
    """Deleting a credential that does not exist (no user, or not that mechanism):
    RESOURCE_NOT_FOUND; deleting one that does: NONE, and the user is then not found (its last
    credential gone) or keeps its other mechanism."""
    nobody, user = unique("scram-nobody"), unique("scram-delete")
    missing = _alter(broker, deletions=[{"name": nobody, "mechanism": SCRAM_SHA_256}])
    _alter(broker, upsertions=[upsertion(user, SCRAM_SHA_256)])
    _wait_described(broker, user, [(SCRAM_SHA_256, 4096)])
    other_mechanism = _alter(broker, deletions=[{"name": user, "mechanism": SCRAM_SHA_512}])
    _alter(broker, upsertions=[upsertion(user, SCRAM_SHA_512)])
    _wait_described(broker, user, [(SCRAM_SHA_256, 4096), (SCRAM_SHA_512, 4096)])
    one = _alter(broker, deletions=[{"name": user, "mechanism": SCRAM_SHA_512}])
    _wait_described(broker, user, [(SCRAM_SHA_256, 4096)])
    last = _alter(broker, deletions=[{"name": user, "mechanism": SCRAM_SHA_256}])
    wait_until(lambda: _described(broker, user) == 91, "the user's last credential to go")
    return {"missing": [(r["error_code"], r["error_message"]) for r in missing],
            "other_mechanism": [(r["error_code"], r["error_message"]) for r in other_mechanism],
            "one": [(r["error_code"], r["error_message"]) for r in one],
            "last": [(r["error_code"], r["error_message"]) for r in last],
            "afterwards": _described(broker, user)}
