"""Find the Firestore queries a module runs, by reading its source (ast), and the indexes they need.

A query is followed through one function the way the store adapters write them:
`client.collection(X)` / `.collection_group(X)` then `.where(filter=FieldFilter(f, op, v))`,
`.order_by(f, direction=...)`, `.find_nearest(vector_field=...)` (a vector index: the equality
fields, then the vector field), `.limit(...)`, `.select(...)` and finally `.stream()`, `.get()`
or an aggregation (`.count()`, `.sum()`, `.avg()`), across assignments to local names and both
arms of an `if` (a query built under a condition is two queries). Collection names may be
string literals or module-level constants (defined there or imported from a project module).
Every `.where`/`.order_by` call in a scanned module must be part of a query found this way: a
query built some other way fails loudly instead of being missed.

Index rules (Firestore, native mode):
- one field, collection scope: served by the automatic single-field indexes, unless the field is
  exempted (an empty `index_config` override);
- one field, collection-group scope: needs a single-field override with a COLLECTION_GROUP index;
- several fields, equality filters only: served by merging single-field indexes;
- otherwise: a composite index with the equality fields first (any order), then the inequality
  field and the `order_by` fields in order, with their directions.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from pathlib import Path

EXECUTE = {"stream", "get", "count", "sum", "avg"}
PASS_THROUGH = {"limit", "limit_to_last", "select", "offset", "start_at", "start_after", "end_at"}
PASS_THROUGH |= {"end_before"}
EQUALITY = {"==", "in", "array_contains", "array-contains", "array_contains_any"}
EQUALITY |= {"array-contains-any"}
VECTOR = "VECTOR"  # the "direction" of the vector field in a find_nearest query's index


@dataclass(frozen=True)
class Query:
    scope: str  # COLLECTION or COLLECTION_GROUP
    collection: str
    filters: tuple[tuple[str, str], ...] = ()  # (field, operator)
    orders: tuple[tuple[str, str], ...] = ()  # (field, ASCENDING|DESCENDING)
    where: str = ""  # module:function:line of the call that runs it
    calls: frozenset[tuple[int, int]] = field(default=frozenset(), compare=False)

    @property
    def fields(self) -> set[str]:
        return {f for f, _ in self.filters} | {f for f, _ in self.orders}

    @property
    def equality_fields(self) -> set[str]:
        return {f for f, op in self.filters if op in EQUALITY}

    @property
    def inequality_fields(self) -> list[str]:
        return [f for f, op in self.filters if op not in EQUALITY]

    def needs_composite(self) -> bool:
        if any(direction == VECTOR for _, direction in self.orders):
            return True  # a nearest-neighbour query always needs a vector index
        if len(self.fields) <= 1:
            return False
        return bool(self.inequality_fields or self.orders)

    def composite_fields(self) -> tuple[set[str], list[tuple[str, str]]]:
        """(equality fields, then the ordered (field, direction) tail the index must have)."""
        tail = list(self.orders)
        for f in self.inequality_fields:
            if f not in {o for o, _ in tail}:
                tail.insert(0, (f, "ASCENDING"))
        ordered = {f for f, _ in tail}
        return self.equality_fields - ordered, tail


class UnfollowedQueryError(AssertionError):
    pass


ROOT = Path(__file__).resolve().parents[2]


def _imported_constants(node: ast.ImportFrom, depth: int) -> dict[str, str]:
    """String constants a `from project.module import NAME` brings in (collection names kept in
    a module of their own), read from that module's source."""
    if not node.module or node.level or depth > 2:
        return {}
    base = ROOT.joinpath(*node.module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            theirs = module_constants(ast.parse(path.read_text()), depth + 1)
            return {
                alias.asname or alias.name: theirs[alias.name]
                for alias in node.names
                if alias.name in theirs
            }
    return {}


def module_constants(tree: ast.Module, depth: int = 0) -> dict[str, str]:
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            constants.update(_imported_constants(node, depth))
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                    constants[target.id] = node.value.value
    return constants


class _Function:
    def __init__(self, module: str, name: str, constants: dict[str, str]) -> None:
        self.module, self.name, self.constants = module, name, constants
        self.found: list[Query] = []

    def string(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        return None

    def evaluate(self, node: ast.expr, env: dict[str, list[Query]]) -> list[Query]:
        if isinstance(node, ast.Name):
            return env.get(node.id, [])
        if isinstance(node, ast.Await):
            return self.evaluate(node.value, env)
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return []
        method, receiver = node.func.attr, node.func.value
        if method in ("collection", "collection_group") and node.args:
            collection = self.string(node.args[0])
            if collection is None:
                return []
            scope = "COLLECTION" if method == "collection" else "COLLECTION_GROUP"
            return [Query(scope, collection, calls=frozenset({_pos(node)}))]
        base = self.evaluate(receiver, env)
        if not base:
            return []
        if method == "where":
            condition = self._filter(node)
            return [
                replace(q, filters=(*q.filters, condition), calls=q.calls | {_pos(node)})
                for q in base
            ]
        if method == "order_by" and node.args:
            order = (self.string(node.args[0]) or "?", _direction(node))
            return [
                replace(q, orders=(*q.orders, order), calls=q.calls | {_pos(node)}) for q in base
            ]
        if method == "find_nearest":  # vector search: the index ends in a vector field
            field_name = next(
                (self.string(k.value) for k in node.keywords if k.arg == "vector_field"), None
            )
            vector = (field_name or "?", VECTOR)
            return [
                replace(q, orders=(*q.orders, vector), calls=q.calls | {_pos(node)}) for q in base
            ]
        if method in PASS_THROUGH:
            return base
        if method in EXECUTE:
            where = f"{self.module}:{self.name}:{node.lineno}"
            self.found.extend(replace(q, where=where) for q in base)
            return []
        return []

    def _filter(self, node: ast.Call) -> tuple[str, str]:
        args = list(node.args)
        for keyword in node.keywords:
            if keyword.arg == "filter" and isinstance(keyword.value, ast.Call):
                args = list(keyword.value.args)
        if len(args) >= 2:
            field_name, operator = self.string(args[0]), self.string(args[1])
            if field_name and operator:
                return field_name, operator
        raise UnfollowedQueryError(
            f"{self.module}:{self.name}:{node.lineno}: a where() whose field and operator are "
            "not literals or module constants"
        )

    def run(self, body: list[ast.stmt], env: dict[str, list[Query]]) -> dict[str, list[Query]]:
        for statement in body:
            env = self.statement(statement, env)
        return env

    def statement(self, node: ast.stmt, env: dict[str, list[Query]]) -> dict[str, list[Query]]:
        if isinstance(node, ast.If):
            self.visit_calls(node.test, env)
            return _merge(self.run(node.body, dict(env)), self.run(node.orelse, dict(env)))
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            self.visit_calls(node.iter if not isinstance(node, ast.While) else node.test, env)
            return _merge(env, self.run(node.body, dict(env)))
        if isinstance(node, ast.With | ast.AsyncWith):
            return self.run(node.body, env)
        if isinstance(node, ast.Try):
            after = self.run(node.body, dict(env))
            for handler in node.handlers:
                after = _merge(after, self.run(handler.body, dict(env)))
            return self.run(node.finalbody, self.run(node.orelse, after))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self.run(node.body, dict(env))  # nested helpers (e.g. transactional closures)
            return env
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            self.visit_calls(node.value, env)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            queries = self.evaluate(node.value, env)
            env = dict(env)
            for target in targets:
                if isinstance(target, ast.Name):
                    env[target.id] = queries
            return env
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.visit_calls(child, env)
        return env

    def visit_calls(self, node: ast.expr, env: dict[str, list[Query]]) -> None:
        """Evaluate every executing call inside an expression (e.g. `async for x in q.stream()`)."""
        for sub in ast.walk(node):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr in EXECUTE
            ):
                self.evaluate(sub, env)


def _merge(*envs: dict[str, list[Query]]) -> dict[str, list[Query]]:
    merged: dict[str, list[Query]] = {}
    for env in envs:
        for name, queries in env.items():
            known = merged.setdefault(name, [])
            known.extend(q for q in queries if q not in known)
    return merged


def _pos(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _direction(node: ast.Call) -> str:
    values = [k.value for k in node.keywords if k.arg == "direction"] + node.args[1:2]
    text = ast.unparse(values[0]) if values else ""
    return "DESCENDING" if "DESC" in text.upper() else "ASCENDING"


def queries_in_source(source: str, module: str) -> list[Query]:
    """Every query the functions of `source` run; raises if a where/order_by is not followed."""
    tree = ast.parse(source)
    constants = module_constants(tree)
    found: list[Query] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = _Function(module, node.name, constants)
            function.run(node.body, {})
            found.extend(q for q in function.found if q not in found)
    followed = {call for q in found for call in q.calls}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("where", "order_by")
            and _pos(node) not in followed
        ):
            raise UnfollowedQueryError(
                f"{module}:{node.lineno}: a Firestore query this analysis cannot follow to the "
                "call that runs it; build it in one function (tests/support/firestore_queries.py)"
            )
    return found


def queries_in(paths: list[Path], root: Path) -> list[Query]:
    found: list[Query] = []
    for path in paths:
        module = str(path.relative_to(root))
        found.extend(queries_in_source(path.read_text(), module))
    return found
