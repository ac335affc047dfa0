"""Type stubs and py.typed ship with the package and match the extension."""

import ast
import importlib.util
import os
import subprocess
import sys

import pytest

import exactly
from exactly import _exactly

PACKAGE = os.path.dirname(exactly.__file__)


def stub_tree():
    with open(os.path.join(PACKAGE, "_exactly.pyi")) as f:
        return ast.parse(f.read())


def test_py_typed_and_stubs_ship_with_the_package():
    assert os.path.isfile(os.path.join(PACKAGE, "py.typed"))
    assert os.path.isfile(os.path.join(PACKAGE, "_exactly.pyi"))


def test_stub_names_every_class_method_and_function():
    tree = stub_tree()
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    names = set(classes) | {n.name for n in tree.body
                            if isinstance(n, ast.FunctionDef)}
    names |= {t.target.id for t in tree.body if isinstance(t, ast.AnnAssign)}
    public = {n for n in dir(_exactly) if not n.startswith("_")}
    assert public <= names, public - names

    def members(cls_node):
        out = set()
        for node in cls_node.body:
            if isinstance(node, ast.FunctionDef):
                out.add(node.name)
        for base in cls_node.bases:
            if isinstance(base, ast.Name) and base.id in classes:
                out |= members(classes[base.id])
        return out

    for name in public:
        obj = getattr(_exactly, name)
        if not isinstance(obj, type):
            continue
        have = members(classes[name])
        want = {m for m in vars(obj) if not m.startswith("_")}
        assert want <= have, (name, want - have)


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (apt-get install mypy)")
def test_mypy_accepts_a_typed_user_program(tmp_path):
    program = tmp_path / "user.py"
    program.write_text(
        "import exactly\n"
        "def main(servers: str) -> None:\n"
        "    p = exactly.TransactionalProducer(servers, 't1')\n"
        "    with p.transaction() as txn:\n"
        "        txn.send('orders', key=b'k', value='v')\n"
        "    report: exactly.DeliveryReport = exactly.Producer(servers)"
        ".send_future('t', b'v').result()\n"
        "    with exactly.Consumer(servers, 'g', topics=['t']) as c:\n"
        "        m = c.poll(1.0)\n"
        "        if m is not None:\n"
        "            print(m.value, report.offset)\n"
        "    with exactly.testing.Broker() as broker:\n"
        "        broker.faults.drop_produce_responses(3)\n")
    env = dict(os.environ)
    where = os.path.dirname(PACKAGE)
    if os.path.basename(where) not in ("site-packages", "dist-packages"):
        # A build tree; installed, mypy finds it as a PEP 561 package (and
        # refuses site-packages in MYPYPATH).
        env["MYPYPATH"] = where
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", str(tmp_path / "cache"), str(program)],
        capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
