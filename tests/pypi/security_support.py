"""Shared by the security tests of the PyPI clients (test_security_*.py): throwaway certificates
made with the `openssl` command line, and the bundled broker's binary started with TLS, SASL and
ACL flags, its listeners parsed from the `listener.PROTOCOL=HOST:PORT` lines it prints after
`bootstrap.servers=`.

Bundled broker only: the Apache Kafka cluster of tests/kafka has no SASL or TLS listener, so
these tests have no Kafka half. Their fixtures are parametrized "bundled" so that the kafka1
label's `-k "not bundled"` leaves them out.
"""
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# SASL users, each with the password "<user>-pw". admin is the super user of the ACL broker.
USERS = ("alice", "bob", "carol", "admin")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def password(user):
    return f"{user}-pw"


def binary():
    return os.environ.get("EXACTLY_BROKER_BIN", str(ROOT / "build/broker-stub/exactly-broker"))


def _openssl(*args, cwd):
    done = subprocess.run(["openssl", *args], cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    assert done.returncode == 0, f"openssl {' '.join(args)}: {done.stdout}"


class Certificates:
    """A CA, the broker's certificate signed by it (for localhost and 127.0.0.1), a client
    certificate signed by it (CN=pypi-client, so the principal User:CN=pypi-client), and a second,
    unrelated CA that signed nothing the broker presents. Files in `directory`, PEM."""

    def __init__(self, directory):
        if shutil.which("openssl") is None:
            pytest.skip("no openssl command line to make the test certificates")
        self.dir = pathlib.Path(directory)
        self.ca, self.ca_key = self._ca("exactly-pypi-ca")
        self.wrong_ca, _ = self._ca("exactly-pypi-other-ca")
        self.broker, self.broker_key = self._signed(
            "broker", "localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                                   "extendedKeyUsage=serverAuth\n")
        self.client, self.client_key = self._signed("client", "pypi-client",
                                                    "extendedKeyUsage=clientAuth\n")
        # A client certificate from the other CA: the broker must refuse it.
        self.stranger, self.stranger_key = self._signed(
            "stranger", "pypi-stranger", "extendedKeyUsage=clientAuth\n",
            ca="exactly-pypi-other-ca")

    def _key(self, name):
        _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-out", f"{name}.key", cwd=self.dir)
        return str(self.dir / f"{name}.key")

    def _ca(self, name):
        key = self._key(name)
        _openssl("req", "-x509", "-new", "-key", key, "-out", f"{name}.pem", "-days", "2",
                 "-subj", f"/CN={name}", "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=self.dir)
        return str(self.dir / f"{name}.pem"), key

    def _signed(self, name, common_name, extensions, ca="exactly-pypi-ca"):
        key = self._key(name)
        (self.dir / f"{name}.ext").write_text(extensions)
        _openssl("req", "-new", "-key", key, "-out", f"{name}.csr", "-subj", f"/CN={common_name}",
                 cwd=self.dir)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
                 "-CAcreateserial", "-days", "2",
                 "-out", f"{name}.pem", "-extfile", f"{name}.ext", cwd=self.dir)
        return str(self.dir / f"{name}.pem"), key


class SecuredBroker:
    """The binary with `flags`, in memory: .bootstrap (the PLAINTEXT port) and .listeners
    ({"SSL": "127.0.0.1:PORT", ...})."""

    def __init__(self, *flags):
        self.proc = subprocess.Popen([binary(), "--port", "0", *flags], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        try:
            line = self.proc.stdout.readline()
            assert line.startswith("bootstrap.servers="), (line, self.proc.poll())
            self.bootstrap = line.strip().split("=", 1)[1]
            wanted = set()
            for flag, value in zip(flags, flags[1:]):
                if flag == "--listeners":
                    wanted = {item.split("://")[0] for item in value.split(",")}
            self.listeners = {}
            while set(self.listeners) != wanted:
                line = self.proc.stdout.readline()
                assert line.startswith("listener."), (line, self.listeners, wanted)
                protocol, address = line.strip()[len("listener."):].split("=", 1)
                self.listeners[protocol] = address
        except BaseException:
            self.stop()
            raise

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


def start(certs, *, client_ca=False, acl=False):
    """A broker with SSL, SASL_PLAINTEXT and SASL_SSL listeners and the users of USERS; with
    client_ca, TLS clients must present a certificate the CA signed; with acl, the authorizer
    is on with User:admin as its super user."""
    flags = ["--listeners", "SSL://:0,SASL_PLAINTEXT://:0,SASL_SSL://:0",
             "--ssl-certificate-file", certs.broker, "--ssl-private-key-file", certs.broker_key,
             "--sasl-users", ",".join(f"{user}:{password(user)}" for user in USERS),
             "--sasl-mechanisms", ",".join(MECHANISMS)]
    if client_ca:
        flags += ["--ssl-ca-file", certs.ca]
    if acl:
        flags += ["--authorizer", "--super-users", "User:admin"]
    return SecuredBroker(*flags)


@pytest.fixture(scope="session")
def certs(tmp_path_factory):
    return Certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="module", params=["bundled"])
def secured(certs):
    broker = start(certs)
    yield broker
    broker.stop()


@pytest.fixture(scope="module", params=["bundled"])
def client_auth(certs):
    broker = start(certs, client_ca=True)
    yield broker
    broker.stop()


@pytest.fixture(scope="module", params=["bundled"])
def acl_broker(certs):
    broker = start(certs, acl=True)
    yield broker
    broker.stop()
