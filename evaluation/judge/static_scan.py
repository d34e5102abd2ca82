"""Static scan of a candidate file's source: notes on what a file names, for the run's evidence.

The scan convicts nothing. A name is not behaviour: code that names ``os`` or ``torch.cos`` may never run
(an overload no case calls), and code that names neither can reach both (a module reached through another,
an import by a built string). Every finding is recorded as a note on the run's ``static_scan`` check; the
verdict comes from what the kernel does when called: the dispatch audit (inside interpreted launches too),
the host-read budget, ghost replays, integrity checks and the operating system's containment (docs/judge.md,
"Convicted by behaviour"). Only a file that does not parse fails here, as a compile failure.

What the notes name, in short (each is an observation, worded as one: "imports os", "names torch.cos"):
  * imports outside a short list: torch, triton (and triton.language.*), math, typing, functools, itertools,
    dataclasses, enum, collections, numbers, logging, warnings, __future__ (os, sys, subprocess,
    threading, ctypes, importlib, operator, ... are named).
  * ``torch.*`` names outside an allow-list (allocation, dtype/device helpers, a few cuda queries): compute
    functions, torch.ops, torch.nn, torch.library, torch._C, streams, graphs, compile, wherever they appear,
    so ``f = torch.cos`` is named at the alias itself.
  * outside ``@triton.jit`` bodies, an attribute whose name is a computing ``torch.Tensor`` method
    (``.cos``, ``.sum``, ``.matmul``, ``.cpu``, ``.tolist``, ...) whatever it is called on; views, metadata
    and allocation methods are not named, nor ``.item`` (one element). Inside jit bodies methods are Triton's.
  * ``@`` outside jit bodies, dunder and private attributes, ``getattr``/``setattr``/``__import__``/
    ``exec``/``eval``/``compile``/``globals``/``vars``/``open``, attribute assignment (monkeypatching),
    subclassing torch types and ``__torch_function__``-style hooks.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache

import torch

from evaluation.judge.static_scan_rules import (
    ALLOWED_DUNDER_DEFS,
    ALLOWED_DUNDER_NAMES,
    ALLOWED_MODULE_PREFIXES,
    ALLOWED_MODULES,
    BANNED_NAMES,
    EXTRA_DENIED_ATTRIBUTES,
    TENSOR_METHODS_ALLOWED,
    TORCH_ALLOWED,
    TRITON_DENIED_PREFIXES,
)

# One element back to the host by definition (the prompt allows reading back one result; the run-time budget
# counts it): naming it says nothing.
SCALAR_READ_METHODS = frozenset({"item"})


@dataclass(frozen=True)
class Finding:
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message} [{self.rule}]"


@dataclass(frozen=True)
class ScanResult:
    syntax_error: str  # non-empty when the file does not parse: a compile failure, not a cheat
    findings: tuple[Finding, ...]  # notes: they decide nothing

    @property
    def ok(self) -> bool:
        return not self.syntax_error and not self.findings


@cache
def _torch_dtype_names() -> frozenset[str]:
    return frozenset(f"torch.{name}" for name in dir(torch) if isinstance(getattr(torch, name, None), torch.dtype))


@cache
def denied_attributes() -> frozenset[str]:
    """Every public torch.Tensor method or torch function name that is not a view/metadata/allocation one."""
    tensor_names = {name for name in dir(torch.Tensor) if not name.startswith("_")}
    torch_functions = {
        name
        for name in dir(torch)
        if not name.startswith("_")
        and callable(getattr(torch, name, None))
        and not isinstance(getattr(torch, name, None), type)
    }
    allowed_short = TENSOR_METHODS_ALLOWED | {name.split(".")[-1] for name in TORCH_ALLOWED}
    # Python container / str methods that share a name with torch and are everyday code.
    everyday = {
        "append",
        "extend",
        "items",
        "keys",
        "get",
        "format",
        "join",
        "index",
        "count",
        "update",
        "startswith",
        "endswith",
        "replace",
        "lower",
        "upper",
        "strip",
        "insert",
        "pop",
        "setdefault",
        "bit_length",
        "is_integer",
        "split",
        "values",
        "copy",
    }
    return frozenset((tensor_names | torch_functions | EXTRA_DENIED_ATTRIBUTES) - allowed_short - everyday)


def _module_allowed(module: str) -> bool:
    return module in ALLOWED_MODULES or module.startswith(ALLOWED_MODULE_PREFIXES)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _function_scope(node: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    """(names bound locally, names declared global/nonlocal) of a function, lambda or comprehension.

    A name bound anywhere in a function body is local to the whole body (Python decides at compile time),
    so a parameter ``input`` shadows the builtin everywhere in that function. Module and class bodies are
    not scopes here: a conditional module-level binding can leave the builtin visible.
    """
    bound: set[str] = set()
    declared: set[str] = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        arguments = node.args
        for argument in [
            *arguments.posonlyargs,
            *arguments.args,
            *arguments.kwonlyargs,
            *([arguments.vararg] if arguments.vararg else []),
            *([arguments.kwarg] if arguments.kwarg else []),
        ]:
            bound.add(argument.arg)
        roots: list[ast.AST] = list(node.body) if isinstance(node.body, list) else [node.body]
    else:
        roots = [generator.target for generator in node.generators]  # type: ignore[attr-defined]
    pending = list(roots)
    while pending:
        child = pending.pop()
        if isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            bound.add(child.id)
        elif isinstance(child, (ast.Global, ast.Nonlocal)):
            declared.update(child.names)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name.split(".")[0]) for alias in child.names)
        elif isinstance(child, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and child.name:
            bound.add(child.name)
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(child.name)
            continue  # a nested scope's own bindings are not ours
        if isinstance(child, _SCOPES) and child not in roots:
            continue
        pending.extend(ast.iter_child_nodes(child))
    return frozenset(bound - declared), frozenset(declared)


class _Scanner(ast.NodeVisitor):
    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.aliases: dict[str, str] = {}  # local name -> dotted module path it stands for
        self.jit_depth = 0
        self.class_depth = 0
        self.scopes: list[tuple[frozenset[str], frozenset[str]]] = []  # enclosing function scopes, innermost last

    def shadowed(self, name: str) -> bool:
        """True when ``name`` resolves to a local of an enclosing function, not to the builtin."""
        for bound, declared in reversed(self.scopes):
            if name in declared:
                return False
            if name in bound:
                return True
        return False

    def visit_scope(self, node: ast.AST) -> None:
        self.scopes.append(_function_scope(node))
        try:
            self.generic_visit(node)
        finally:
            self.scopes.pop()

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_scope

    def flag(self, node: ast.AST, rule: str, message: str) -> None:
        self.findings.append(Finding(getattr(node, "lineno", 0), rule, message))

    # -- names and chains

    def chain_of(self, node: ast.AST) -> str | None:
        """``a.b.c`` with ``a`` resolved through import aliases, or None when the root is not a plain name."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.aliases.get(node.id)
        if root is None:
            return None
        return ".".join([root, *reversed(parts)])

    def check_chain(self, node: ast.AST, chain: str) -> None:
        if chain == "torch" or chain.startswith("torch."):
            if self.jit_depth:
                self.flag(node, "torch_in_kernel", f"{chain} inside a @triton.jit function")
                return
            if chain == "torch":
                return
            parts = chain.split(".")
            for end in range(len(parts), 1, -1):
                prefix = ".".join(parts[:end])
                if prefix in TORCH_ALLOWED or prefix in _torch_dtype_names():
                    for extra in parts[end:]:
                        if extra in denied_attributes():
                            self.flag(node, "torch_call", f"names {chain}, not an allocation, view or metadata name")
                            return
                    return
            self.flag(node, "torch_call", f"names {chain}, not an allocation, view or metadata name")
        elif chain.startswith("triton") and chain.startswith(TRITON_DENIED_PREFIXES):
            self.flag(node, "triton_internals", f"{chain} reaches the harness's Triton machinery")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            self.flag(node, "private_attribute", f"attribute {node.attr!r}")
        chain = self.chain_of(node)
        parent_is_attribute = getattr(node, "_kgb_parent_attr", False)
        if chain is not None:
            if not parent_is_attribute:
                self.check_chain(node, chain)
        elif not self.jit_depth and node.attr in denied_attributes() and node.attr not in SCALAR_READ_METHODS:
            self.flag(node, "tensor_method", f"names .{node.attr}, a tensor method that computes")
        if isinstance(node.ctx, (ast.Store, ast.Del)) and not self._is_self_store(node):
            self.flag(node, "attribute_store", "assigns an attribute of another object (a monkeypatch?)")
        node.value._kgb_parent_attr = True  # type: ignore[attr-defined]
        self.generic_visit(node)

    def _is_self_store(self, node: ast.Attribute) -> bool:
        return self.class_depth > 0 and isinstance(node.value, ast.Name) and node.value.id == "self"

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in BANNED_NAMES:
            # A parameter or local named like a builtin (vLLM's ``rms_norm(out, input, weight, epsilon)``)
            # shadows it; the builtin itself stays banned. Storing to the name is only a binding.
            if not (isinstance(node.ctx, (ast.Store, ast.Del)) and not node.id.startswith("__")) and not (
                not node.id.startswith("__") and self.shadowed(node.id)
            ):
                self.flag(node, "banned_builtin", f"names the builtin {node.id}")
        elif node.id.startswith("__") and node.id not in ALLOWED_DUNDER_NAMES:
            self.flag(node, "dunder_name", f"names {node.id}")
        elif isinstance(node.ctx, ast.Load) and not getattr(node, "_kgb_parent_attr", False):
            root = self.aliases.get(node.id)
            if root is not None and root != "torch":
                self.check_chain(node, root)
            elif root == "torch" and self.jit_depth:
                self.flag(node, "torch_in_kernel", "torch inside a @triton.jit function")

    # -- imports and aliases

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not _module_allowed(alias.name):
                self.flag(node, "import", f"imports {alias.name}, outside the short list")
                # Bound all the same: ``operator.mul`` is then that module's name, noted once at its import,
                # not a tensor method ``.mul`` wherever it is used.
                root = alias.name.split(".")[0]
                self.aliases[alias.asname or root] = alias.name if alias.asname else root
                continue
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                self.aliases[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or not _module_allowed(module):
            self.flag(node, "import", f"imports from {'.' * node.level}{module}, outside the short list")
            return
        for alias in node.names:
            if alias.name == "*":
                self.flag(node, "import", f"imports * from {module}")
                continue
            full = f"{module}.{alias.name}"
            local = alias.asname or alias.name
            if _module_allowed(full):
                self.aliases[local] = full
            else:
                self.aliases[local] = full
                self.check_chain(node, full)

    def visit_Assign(self, node: ast.Assign) -> None:
        # ``t = torch`` / ``J = triton.runtime`` make ``t.cos`` resolve like ``torch.cos``.
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            source = node.value
            chain = (
                self.chain_of(source)
                if isinstance(source, ast.Attribute)
                else (self.aliases.get(source.id) if isinstance(source, ast.Name) else None)
            )
            if chain is not None:
                self.aliases[node.targets[0].id] = chain
        self.generic_visit(node)

    # -- definitions

    def _is_jit(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            chain = self.chain_of(target) if isinstance(target, (ast.Attribute, ast.Name)) else None
            if isinstance(target, ast.Name) and chain is None:
                chain = self.aliases.get(target.id)
            if chain in {"triton.jit", "triton.runtime.jit.jit"}:
                return True
        return False

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name.startswith("__") and node.name not in ALLOWED_DUNDER_DEFS:
            self.flag(node, "dunder_def", f"defines {node.name}")
        jit = self._is_jit(node)
        for decorator in node.decorator_list:
            self.visit(decorator)
        for default in [*node.args.defaults, *(item for item in node.args.kw_defaults if item is not None)]:
            self.visit(default)  # evaluated in the enclosing scope
        self.jit_depth += jit
        self.scopes.append(_function_scope(node))
        for child in [node.args, *node.body, *([node.returns] if node.returns else [])]:
            self.visit(child)
        self.scopes.pop()
        self.jit_depth -= jit

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in [*node.bases, *(keyword.value for keyword in node.keywords)]:
            chain = (
                self.chain_of(base)
                if isinstance(base, ast.Attribute)
                else (self.aliases.get(base.id) if isinstance(base, ast.Name) else None)
            )
            if chain is not None and chain.startswith("torch"):
                self.flag(node, "torch_subclass", f"class {node.name} derives from {chain}")
        self.class_depth += 1
        self.generic_visit(node)
        self.class_depth -= 1

    # -- expressions

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and not self.jit_depth:
            self.flag(node, "matmul_operator", "uses the @ operator outside a kernel")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.op, ast.MatMult) and not self.jit_depth:
            self.flag(node, "matmul_operator", "uses the @= operator outside a kernel")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "type" and len(node.args) != 1:
            self.flag(node, "dynamic_class", "type() with several arguments builds classes at run time")
        self.generic_visit(node)

    def visit_Global(self, node: ast.Global) -> None:
        self.generic_visit(node)


def scan_source(source: str, filename: str = "<kernel>") -> ScanResult:
    """Scan a candidate file; findings are in source order."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as error:
        return ScanResult(syntax_error=f"{error.msg} (line {error.lineno})", findings=())
    scanner = _Scanner()
    scanner.visit(tree)
    findings = sorted(set(scanner.findings), key=lambda finding: (finding.line, finding.rule, finding.message))
    return ScanResult(syntax_error="", findings=tuple(findings))
