"""A small evaluator for GitHub Actions expressions (`${{ ... }}` and `if:`), for testing our workflows' filters.

PyPI has no maintained evaluator (only tree-sitter grammars, which parse but do not evaluate), so this is a
recursive-descent one for the language as documented (https://docs.github.com/actions/reference/evaluate-
expressions-in-workflows-and-actions), following GitHub's reference implementation, npm's `@actions/expressions`:
- literals: 'strings' ('' escapes a quote), numbers, true, false, null; operators ( ) [ ] . ! < <= > >= == != && ||;
- `a && b` / `a || b` short-circuit and return an operand, not a boolean; `!` gives a boolean;
- `==` coerces like JavaScript's loose equality but compares strings case-insensitively, and objects by identity;
- property access is case-insensitive and yields null when missing; `.*` / `[*]` make a filtered array whose
  further property access maps over its elements (`github.event.issue.labels.*.name` is the list of names);
- functions: contains, startsWith, endsWith (case-insensitive), format, join, toJSON, and the status functions of
  a job's `if:` (success() and always() true, failure() and cancelled() false: a job with no `needs`).
tests/test_workflow_filters.py checks it against @actions/expressions itself when node has that package.

Imports: the standard library only.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

_TOKEN = re.compile(r"""\s*(?:
    (?P<str>'(?:[^']|'')*')
  | (?P<num>(?:0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+))
  | (?P<word>[A-Za-z_][A-Za-z0-9_-]*)
  | (?P<op>&&|\|\||==|!=|<=|>=|[()\[\].,!<>*])
)""", re.X)
_LITERALS = {"true": True, "false": False, "null": None, "NaN": math.nan, "Infinity": math.inf}
_STATUS = {"success": True, "always": True, "failure": False, "cancelled": False}
_FUNCTIONS = {"contains": 2, "startswith": 2, "endswith": 2, "format": None, "join": None, "tojson": 1}


class ExpressionError(ValueError):
    """The expression does not parse, or names an unknown context or function."""


class Filtered(list):
    """The result of `.*`: property access on it maps over its elements."""


def tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        found = _TOKEN.match(text, pos)
        if not found or found.end() == pos:
            raise ExpressionError(f"unexpected character at {pos}: {text[pos:pos + 10]!r}")
        kind = found.lastgroup
        out.append((kind, found.group(kind)))
        pos = found.end()
    return out


class _Parser:
    """Precedence, lowest first: ||, &&, == !=, < <= > >=, !, then postfix . [] and calls."""

    def __init__(self, text: str, contexts: Mapping[str, Any]):
        self.toks, self.i = tokens(text), 0
        self.contexts = {k.lower(): v for k, v in contexts.items()}

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise ExpressionError(f"expected {value or 'more'} at token {self.i}, got {tok and tok[1]!r}")
        self.i += 1
        return tok

    def accept(self, *values: str) -> str | None:
        tok = self.peek()
        if tok and tok[0] == "op" and tok[1] in values:
            self.i += 1
            return tok[1]
        return None

    def parse(self):
        node = self.logical("||")
        if self.peek() is not None:
            raise ExpressionError(f"unexpected {self.peek()[1]!r} after the expression")
        return node

    def logical(self, op: str):
        lower = (lambda: self.logical("&&")) if op == "||" else (lambda: self.compare(("==", "!=")))
        args = [lower()]
        while self.accept(op):
            args.append(lower())
        return args[0] if len(args) == 1 else ("logic", op, args)

    def compare(self, ops: tuple[str, ...]):
        lower = (lambda: self.compare(("<", "<=", ">", ">="))) if ops == ("==", "!=") else self.unary
        node = lower()
        while (op := self.accept(*ops)):
            node = ("cmp", op, node, lower())
        return node

    def unary(self):
        return ("not", self.unary()) if self.accept("!") else self.postfix(self.primary())

    def primary(self):
        kind, value = self.take()
        if kind == "str":
            return ("lit", value[1:-1].replace("''", "'"))
        if kind == "num":
            return ("lit", float(int(value, 16)) if value.lower().startswith("0x") else float(value))
        if kind == "op" and value == "(":
            node = self.logical("||")
            self.take(")")
            return node
        if kind == "word" and value in _LITERALS:
            return ("lit", _LITERALS[value])
        if kind == "word" and self.accept("("):
            return self.call(value)
        if kind == "word":
            if value.lower() not in self.contexts:
                raise ExpressionError(f"unknown context {value!r}")
            return ("ctx", value.lower())
        raise ExpressionError(f"unexpected {value!r}")

    def call(self, name: str):
        args = []
        if not self.accept(")"):
            args.append(self.logical("||"))
            while self.accept(","):
                args.append(self.logical("||"))
            self.take(")")
        key = name.lower()
        if key in _STATUS and not args:
            return ("lit", _STATUS[key])
        if key not in _FUNCTIONS or (_FUNCTIONS[key] is not None and len(args) != _FUNCTIONS[key]):
            raise ExpressionError(f"unknown function {name}({len(args)} arguments)")
        return ("call", key, args)

    def postfix(self, node):
        while True:
            if self.accept("."):
                kind, value = self.take()
                if not (kind == "word" or value == "*"):
                    raise ExpressionError(f"expected a property name after '.', got {value!r}")
                node = ("index", node, ("star",) if value == "*" else ("lit", value))
            elif self.accept("["):
                index = ("star",) if self.accept("*") else self.logical("||")
                self.take("]")
                node = ("index", node, index)
            else:
                return node


# ---- values ------------------------------------------------------------------------------------------------------


def _upper(text: str) -> str:
    return "ı".join(part.upper() for part in text.split("ı"))  # GitHub leaves the dotless i alone


def to_number(v: Any) -> float:
    if v is None or isinstance(v, bool):
        return float(bool(v))
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip()
        if not s:
            return 0.0
        try:
            return float(int(s, 16)) if s.lower().startswith("0x") else float(s)
        except ValueError:
            return math.nan
    return math.nan


def to_string(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(int(v)) if float(v).is_integer() else repr(float(v))
    if isinstance(v, str):
        return v
    return "Array" if isinstance(v, list) else "Object"


def truthy(v: Any) -> bool:
    if isinstance(v, (list, dict)):
        return True
    if isinstance(v, float) and math.isnan(v):
        return False
    return bool(v)


def _primitive(v: Any) -> bool:
    return not isinstance(v, (list, dict))


def equals(a: Any, b: Any) -> bool:
    if not _primitive(a) or not _primitive(b):
        return a is b
    if isinstance(a, str) and isinstance(b, str):
        return _upper(a) == _upper(b)
    if a is None and b is None:
        return True
    if isinstance(a, bool) and isinstance(b, bool):
        return a == b
    if a is None or b is None or isinstance(a, bool) or isinstance(b, bool) or isinstance(a, str) != isinstance(b, str):
        x, y = to_number(a), to_number(b)  # JavaScript's loose equality: bring both to numbers
        return not (math.isnan(x) or math.isnan(y)) and x == y
    return to_number(a) == to_number(b)


def _order(a: Any, b: Any) -> int | None:
    """-1/0/1, or None when the values do not compare (GitHub then answers false)."""
    if not _primitive(a) or not _primitive(b):
        return None
    if isinstance(a, str) and isinstance(b, str):
        x, y = _upper(a), _upper(b)
    else:
        x, y = to_number(a), to_number(b)
        if math.isnan(x) or math.isnan(y):
            return None
    return (x > y) - (x < y)


def _get(obj: Any, key: Any) -> Any:
    if isinstance(obj, dict) and isinstance(key, str):
        return next((v for k, v in obj.items() if k.lower() == key.lower()), None)
    if isinstance(obj, list) and not isinstance(key, str) and key is not None and not isinstance(key, bool):
        n = to_number(key)
        return obj[int(n)] if not math.isnan(n) and 0 <= n < len(obj) else None
    return None


def _index(obj: Any, key: Any, star: bool) -> Any:
    if isinstance(obj, Filtered):
        out = Filtered()
        for item in obj:
            if star and isinstance(item, (dict, list)):
                out.extend(item.values() if isinstance(item, dict) else item)
            elif not star and isinstance(item, dict) and isinstance(key, str):
                found = _get(item, key)
                if any(k.lower() == key.lower() for k in item):
                    out.append(found)
            elif not star and isinstance(item, list):
                found = _get(item, key)
                if found is not None:
                    out.append(found)
        return out
    if star:
        return Filtered(obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else [])
    return _get(obj, to_string(key) if isinstance(obj, dict) else key)


def _format(template: str, *args: Any) -> str:
    def sub(match: re.Match) -> str:
        if match.group(0) in ("{{", "}}"):
            return match.group(0)[0]
        n = int(match.group(1))
        if n >= len(args):
            raise ExpressionError(f"format string {template!r} references argument {n} of {len(args)}")
        return to_string(args[n])

    if re.search(r"(?<!\{)\{(?!\{|\d+\})|(?<!\})\}(?!\})", re.sub(r"\{\{|\}\}|\{\d+\}", "", template)):
        raise ExpressionError(f"invalid format string {template!r}")
    return re.sub(r"\{\{|\}\}|\{(\d+)\}", sub, template)


def _call(name: str, args: list) -> Any:
    if name == "contains":
        haystack, needle = args
        if isinstance(haystack, list):
            return any(equals(needle, item) for item in haystack)
        return _primitive(haystack) and _primitive(needle) and \
            _upper(to_string(needle)) in _upper(to_string(haystack))
    if name in ("startswith", "endswith"):
        a, b = args
        if not (_primitive(a) and _primitive(b)):
            return False
        test = str.startswith if name == "startswith" else str.endswith
        return test(_upper(to_string(a)), _upper(to_string(b)))
    if name == "format":
        return _format(to_string(args[0]), *args[1:])
    if name == "join":
        sep = to_string(args[1]) if len(args) > 1 else ","
        return sep.join(map(to_string, args[0])) if isinstance(args[0], list) else to_string(args[0])
    return json.dumps(args[0], indent=2)  # toJSON


def _eval(node, contexts: Mapping[str, Any]) -> Any:
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "ctx":
        return contexts[node[1]]
    if kind == "not":
        return not truthy(_eval(node[1], contexts))
    if kind == "logic":
        result = None
        for arg in node[2]:
            result = _eval(arg, contexts)
            if truthy(result) == (node[1] == "||"):
                break
        return result
    if kind == "cmp":
        a, b = _eval(node[2], contexts), _eval(node[3], contexts)
        op = node[1]
        if op in ("==", "!="):
            return equals(a, b) == (op == "==")
        order = 2 if op in ("<=", ">=") and equals(a, b) else _order(a, b)
        if order == 2:
            return True
        return order is not None and (order < 0 if op in ("<", "<=") else order > 0)
    if kind == "index":
        star = node[2][0] == "star"
        return _index(_eval(node[1], contexts), None if star else _eval(node[2], contexts), star)
    if kind == "call":
        return _call(node[1], [_eval(a, contexts) for a in node[2]])
    raise AssertionError(node)


def evaluate(expression: str, contexts: Mapping[str, Any]) -> Any:
    """The value of one expression (without `${{ }}`); `contexts` maps names (github, inputs, ...) to data."""
    lowered = {k.lower(): v for k, v in contexts.items()}
    return _eval(_Parser(expression, contexts).parse(), lowered)


def job_runs(condition: Any, contexts: Mapping[str, Any]) -> bool:
    """Whether a job with this `if:` starts (no `if:` means it does). A `${{ }}` wrapper is optional there."""
    if condition is None:
        return True
    if isinstance(condition, bool):
        return condition
    text = str(condition).strip()
    wrapped = re.fullmatch(r"\$\{\{(.*)\}\}", text, re.S)
    return truthy(evaluate(wrapped.group(1) if wrapped else text, contexts))


def interpolate(template: str, contexts: Mapping[str, Any]) -> str:
    """A string with `${{ expr }}` parts, as in a concurrency group's name."""
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: to_string(evaluate(m.group(1), contexts)), template, flags=re.S)
