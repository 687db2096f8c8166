"""Mutation score of the rules: how many small changes to ``events/`` the rules tests catch.

    python tools/mutation.py [MODULE ...] [--jobs N] [--list] [--json PATH] [--only F,G]

For each module (``met``, ``met_rules``, ``v5``, ``action``, ``session``, ``verdicts``,
``fair``) every function and method body is mutated one change at a time: a comparison
turned (``<`` into ``<=``, ``==`` into ``!=``, ``in`` into ``not in``...), an arithmetic
operator swapped (``+`` and ``-``, ``*`` into ``+``, ``//`` into ``*``), an integer made one
larger or one smaller, ``True`` and ``False`` swapped, ``and`` and ``or`` swapped, a ``not`` dropped. Text
constants are left alone: they are messages, not rules. For each mutant the module's own
rules tests run (``SELECTION`` below, the tests named after the rules the module holds);
the mutant is killed when one fails, and survives when all pass. The score printed per
module is the share killed; each survivor is printed with its line, to be killed by a rules
test or explained in ``docs/mutation.md``.

Why not mutmut or cosmic-ray: the package maps ``conteur.events`` to ``events/``
(``package-dir`` in ``pyproject.toml``); mutmut writes its mutants to a ``mutants/`` copy
that the editable install never imports, and cosmic-ray starts a test process for each
mutant, which at about ten seconds an import of the server's dependencies is hours a
module. Here one process imports everything and runs the selection once (it must pass);
then each mutant runs in a forked child that swaps the mutated function's code object in
place (``function.__code__``), so every reference to the function, the deciders' and
evolvers' tables included, sees the mutant, and the parent stays clean. The unmutated run
records which tests reach each function; a mutant runs those tests only.

CPU heavy: ``make mutation`` runs it under ``nice``; it is not part of CI.
"""

from __future__ import annotations

import argparse
import ast
import copy
import gc
import importlib
import inspect
import io
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def rules_tests(*names: str) -> list[str]:
    return [f"tests/rules/test_{name}.py" for name in names]


# the tests each module's mutants run: those named after the rules the module holds
SELECTION: dict[str, list[str]] = {
    "met": rules_tests("met_rules", "met", "met_defender", "met_examples", "met_group", "met_group_static"),
    "met_rules": rules_tests("met_rules", "met", "met_defender"),
    "v5": rules_tests("v5_rules", "v5", "verdicts_rouse"),
    "action": rules_tests("action_rules", "action", "action_settle", "session_rules"),
    "session": rules_tests("session_rules", "session", "carried"),
    "verdicts": rules_tests("verdicts_rules", "verdicts_rouse"),
    "fair": rules_tests("fair", "fair_streams"),
}
TIMEOUT = 60  # seconds a mutant's tests may take: a mutant that loops forever is killed


@dataclass
class Mutant:
    module: str
    function: str  # qualified: "decide_throw", "Challenge.other"
    line: int
    col: int
    kind: str
    before: str
    after: str
    path: tuple  # where the node sits in the function's AST (field names and indexes)
    status: str = ""  # killed | survived | timeout | skipped
    seconds: float = 0.0


@dataclass
class Score:
    module: str
    mutants: list[Mutant] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(m.status == status for m in self.mutants)

    @property
    def tried(self) -> int:
        return sum(m.status in ("killed", "survived", "timeout") for m in self.mutants)

    @property
    def caught(self) -> int:
        return self.count("killed") + self.count("timeout")

    @property
    def share(self) -> float:
        return self.caught / self.tried if self.tried else 1.0


# ---------------------------------------------------------------- mutation operators

_COMPARE = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
_BINARY = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.FloorDiv: ast.Mult,
           ast.Mod: ast.FloorDiv}
_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
           ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not", ast.Add: "+",
           ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%", ast.And: "and", ast.Or: "or"}


def _changes(node: ast.AST):
    """The mutations of one node: (kind, before, after, apply) where apply(node) mutates it."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            new = _COMPARE.get(type(op))
            if new is not None:
                yield ("compare", _SYMBOL[type(op)], _SYMBOL[new],
                       lambda n, i=i, new=new: n.ops.__setitem__(i, new()))
    elif isinstance(node, (ast.BinOp, ast.AugAssign)):
        new = _BINARY.get(type(node.op))
        if new is not None:
            yield ("arithmetic", _SYMBOL[type(node.op)], _SYMBOL[new], lambda n, new=new: setattr(n, "op", new()))
    elif isinstance(node, ast.BoolOp):
        new = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield ("boolean", _SYMBOL[type(node.op)], _SYMBOL[new], lambda n, new=new: setattr(n, "op", new()))
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield ("constant", repr(node.value), repr(not node.value), lambda n: setattr(n, "value", not n.value))
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield ("number", repr(node.value), repr(node.value + 1), lambda n: setattr(n, "value", n.value + 1))
        if node.value > 0:
            yield ("number", repr(node.value), repr(node.value - 1), lambda n: setattr(n, "value", n.value - 1))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield ("negation", "not", "(dropped)", None)  # applied by replacing the node


def _walk(node: ast.AST, path: tuple = ()):
    """Every node under ``node`` with its path, skipping docstrings and annotations."""
    yield node, path
    for name, value in ast.iter_fields(node):
        if name in ("annotation", "returns", "decorator_list", "type_comment"):
            continue
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.AST):
                    if (name == "body" and i == 0 and isinstance(item, ast.Expr)
                            and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str)):
                        continue  # a docstring
                    yield from _walk(item, path + ((name, i),))
        elif isinstance(value, ast.AST):
            yield from _walk(value, path + ((name, None),))


def _at(node: ast.AST, path: tuple) -> ast.AST:
    for name, index in path:
        node = getattr(node, name) if index is None else getattr(node, name)[index]
    return node


def _replace_at(root: ast.AST, path: tuple, new: ast.AST) -> None:
    parent = _at(root, path[:-1])
    name, index = path[-1]
    if index is None:
        setattr(parent, name, new)
    else:
        getattr(parent, name)[index] = new


def _functions(tree: ast.Module):
    """Top-level functions and the methods of top-level classes, by qualified name."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node, None
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{node.name}.{item.name}", item, node


def mutants_of(module: str) -> tuple[list[Mutant], dict]:
    path = ROOT / "events" / f"{module}.py"
    tree = ast.parse(path.read_text(), str(path))
    found: list[Mutant] = []
    defs: dict[str, tuple[ast.AST, ast.ClassDef | None]] = {}
    for qualname, fn, cls in _functions(tree):
        defs[qualname] = (fn, cls)
        for body_index, statement in enumerate(fn.body):
            for node, where in _walk(statement, (("body", body_index),)):
                for kind, before, after, _ in _changes(node):
                    found.append(Mutant(module, qualname, node.lineno, node.col_offset, kind,
                                        before, after, where))
    return found, defs


def _mutated_code(mutant: Mutant, defs: dict, source_path: Path):
    fn, cls = defs[mutant.function]
    fn = copy.deepcopy(fn)
    node = _at(fn, mutant.path)
    if mutant.kind == "negation":
        _replace_at(fn, mutant.path, node.operand)
    else:
        for kind, before, after, apply in _changes(node):
            if (kind, before, after) == (mutant.kind, mutant.before, mutant.after):
                apply(node)
                break
    fn.decorator_list = []
    holder: ast.AST = fn
    if cls is not None:  # compiled inside its class, so super() and private names resolve alike
        holder = ast.ClassDef(name=cls.name, bases=[], keywords=[], body=[fn], decorator_list=[])
        ast.copy_location(holder, cls)
    module = ast.Module(body=[holder], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, str(source_path), "exec", flags=_FUTURE, dont_inherit=True)
    if cls is not None:
        code = next(c for c in code.co_consts if inspect.iscode(c) and c.co_name == cls.name)
    return next(c for c in code.co_consts if inspect.iscode(c) and c.co_name == fn.name)


_FUTURE = __import__("__future__").annotations.compiler_flag


def _target(module, qualname: str):
    """The function object whose code a mutant replaces."""
    owner, name = module, qualname
    if "." in qualname:
        cls_name, name = qualname.split(".")
        owner = getattr(module, cls_name)
        value = owner.__dict__.get(name)
    else:
        value = module.__dict__.get(name)
    for attr in ("fget", "__func__", "func"):
        if value is not None and not inspect.isfunction(value) and hasattr(value, attr):
            value = getattr(value, attr)
    while value is not None and hasattr(value, "__wrapped__"):
        value = value.__wrapped__
    return value if inspect.isfunction(value) else None


# ---------------------------------------------------------------- running

def _pytest_args(module: str) -> list[str]:
    files = [f for f in SELECTION[module] if (ROOT / f).exists()]
    return ["-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "--no-header",
            "-o", "addopts=", *files]


def _quiet_pytest(args: list[str]) -> int:
    out = io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = out
    try:
        return int(pytest.main(args))
    finally:
        sys.stdout, sys.stderr = saved


class _Coverage:
    """A pytest plugin recording, for each test, which functions of one module it runs
    (``sys.setprofile`` during the unmutated run): a mutant then runs only the tests that
    reach its function, and one no test reaches survives without a run."""

    def __init__(self, path: str, spans: dict[str, tuple[int, int]]):
        self.path, self.spans = path, spans
        self.tests: dict[str, list[str]] = {name: [] for name in spans}
        self._seen: set[str] = set()
        self._lines: dict[object, str | None] = {}

    def _function(self, code) -> str | None:
        if code not in self._lines:
            line = code.co_firstlineno
            self._lines[code] = next((n for n, (a, b) in self.spans.items() if a <= line <= b), None)
        return self._lines[code]

    def _profile(self, frame, event, arg):
        if event == "call" and frame.f_code.co_filename == self.path:
            name = self._function(frame.f_code)
            if name is not None:
                self._seen.add(name)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self._seen = set()
        sys.setprofile(self._profile)
        try:
            yield
        finally:
            sys.setprofile(None)
            for name in self._seen:
                self.tests[name].append(item.nodeid)


def _quiet_pytest_with(args: list[str], plugins: list) -> int:
    out = io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = out
    try:
        return int(pytest.main(args, plugins=plugins))
    finally:
        sys.stdout, sys.stderr = saved


def _nested(old, new):
    """(original, mutant) code of the functions defined inside a function, at any depth,
    matched in the order they are defined (a mutant adds or removes none)."""
    olds = [c for c in old.co_consts if inspect.iscode(c)]
    news = [c for c in new.co_consts if inspect.iscode(c)]
    for o, n in zip(olds, news):
        if o.co_name == n.co_name:
            yield o, n
            yield from _nested(o, n)


def _swap(target, code) -> None:
    """The mutant in place of ``target``'s code, and in every function made from the code
    nested in it: a decorator's wrapper (``_grouped``'s ``decide``) was made at import, so
    swapping the decorator's own code alone would change nothing that runs."""
    pairs = list(_nested(target.__code__, code))  # holds the originals: their ids stay theirs
    inner = {id(o): n for o, n in pairs}
    target.__code__ = code
    if inner:
        for obj in gc.get_objects():
            if isinstance(obj, types.FunctionType) and id(obj.__code__) in inner:
                obj.__code__ = inner[id(obj.__code__)]


def _run_child(target, code, args: list[str]) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            signal.alarm(TIMEOUT)
            if target is not None:
                _swap(target, code)
            # a temporary folder of its own: pytest's shared numbered ones are rotated by
            # each run, which would remove those of test runs going on beside this one
            os._exit(_quiet_pytest(args + [f"--basetemp={_scratch}/{os.getpid()}"]))
        except BaseException:
            os._exit(3)
    return pid


_scratch = ""  # this run's folder of pytest temporary folders


def run(module_names: list[str], jobs: int, only_list: bool, only: set[str] = frozenset()) -> list[Score]:
    global _scratch
    _scratch = tempfile.mkdtemp(prefix="conteur-mutation-")
    try:
        return _run(module_names, jobs, only_list, only)
    finally:
        shutil.rmtree(_scratch, ignore_errors=True)


def _run(module_names: list[str], jobs: int, only_list: bool, only: set[str]) -> list[Score]:
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT / "tests"))
    scores = []
    for name in module_names:
        mod = importlib.import_module(f"conteur.events.{name}")
        mutants, defs = mutants_of(name)
        if only:
            mutants = [m for m in mutants if m.function in only]
        score = Score(name, mutants)
        scores.append(score)
        if only_list:
            for m in mutants:
                print(f"{name}.py:{m.line}:{m.col} {m.function} {m.kind} {m.before} -> {m.after}")
            continue
        args = _pytest_args(name)
        started = time.monotonic()
        # a decorated function's code starts at its first decorator
        spans = {q: (min([fn.lineno] + [d.lineno for d in fn.decorator_list]), fn.end_lineno)
                 for q, (fn, _) in defs.items()}
        coverage = _Coverage(str(Path(mod.__file__)), spans)
        # imports the tests once, for every child to share, and sees which tests reach what
        baseline = _quiet_pytest_with(args + [f"--basetemp={_scratch}/baseline"], [coverage])
        if baseline != 0:
            raise SystemExit(f"{name}: the selected tests fail unmutated (pytest {' '.join(args)}): "
                             "fix them first")
        print(f"{name}: {len(mutants)} mutants, tests: {' '.join(a for a in args if a.endswith('.py'))} "
              f"({time.monotonic() - started:.1f} s unmutated)", flush=True)
        running: dict[int, tuple[Mutant, float]] = {}
        queue = list(mutants)
        while queue or running:
            while queue and len(running) < jobs:
                m = queue.pop(0)
                target = _target(mod, m.function)
                try:
                    code = _mutated_code(m, defs, Path(mod.__file__))
                except (SyntaxError, ValueError, StopIteration):
                    code = None
                if target is None or code is None or code.co_freevars != target.__code__.co_freevars:
                    m.status = "skipped"
                    continue
                reaching = coverage.tests.get(m.function, [])
                if not reaching:
                    m.status = "survived"  # no selected test runs this function
                    print(f"  survived {name}.py:{m.line}:{m.col} {m.function}: {m.kind} {m.before} -> "
                          f"{m.after} (no test reaches it)", flush=True)
                    continue
                options = [a for a in args if not a.endswith(".py")]
                running[_run_child(target, code, options + reaching)] = (m, time.monotonic())
            if not running:
                continue
            pid, status = os.wait()
            shutil.rmtree(f"{_scratch}/{pid}", ignore_errors=True)
            m, began = running.pop(pid)
            m.seconds = time.monotonic() - began
            if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM:
                m.status = "timeout"
            else:
                m.status = "survived" if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else "killed"
            if m.status == "survived":
                print(f"  survived {name}.py:{m.line}:{m.col} {m.function}: {m.kind} {m.before} -> {m.after}",
                      flush=True)
        print(f"{name}: {score.caught}/{score.tried} killed ({100 * score.share:.1f}%), "
              f"{score.count('skipped')} skipped, {time.monotonic() - started:.0f} s", flush=True)
    return scores


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE",
                        help=f"modules of events/ (default: {' '.join(SELECTION)})")
    parser.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--json", type=Path, help="write every mutant and its status here")
    parser.add_argument("--only", default="", metavar="F,G",
                        help="mutate these functions only (qualified names, comma separated)")
    args = parser.parse_args(argv)
    modules = args.modules or list(SELECTION)
    unknown = [m for m in modules if m not in SELECTION]
    if unknown:
        parser.error(f"no such module: {', '.join(unknown)} (one of {', '.join(SELECTION)})")
    scores = run(modules, max(1, args.jobs), args.list, {f for f in args.only.split(",") if f})
    if args.list:
        return 0
    print("\nmutation score (share of mutants killed by the rules tests):")
    for s in scores:
        print(f"  {s.module + '.py':<14} {s.caught:>5}/{s.tried:<5} {100 * s.share:5.1f}%")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(
            [{"module": m.module, "function": m.function, "line": m.line, "col": m.col, "kind": m.kind,
              "before": m.before, "after": m.after, "status": m.status} for s in scores for m in s.mutants],
            indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
