#!/usr/bin/python3
"""Structural lint of api/http/openapi.json (OpenAPI 3.0): every $ref resolves, every operation
has responses each with a description and (but for 204) content, parameters have name, in and
schema, every {param} of a path is declared as a path parameter, operation parameters are
unique by (name, in).

Usage: lint_openapi.py api/http/openapi.json   (exit 1 with one line per problem)
"""
import json
import re
import sys

METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def refs(node, out):
    if isinstance(node, dict):
        if "$ref" in node:
            out.append(node["$ref"])
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def resolve(doc, ref):
    if not ref.startswith("#/"):
        return False
    node = doc
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def lint(doc):
    problems = []
    found = []
    refs(doc, found)
    problems += [f"$ref {r} does not resolve" for r in sorted(set(found)) if not resolve(doc, r)]
    for path, item in doc.get("paths", {}).items():
        declared_path = set(re.findall(r"\{(\w+)\}", path))
        shared = item.get("parameters", [])
        for method, op in item.items():
            if method not in METHODS:
                continue
            where = f"{method.upper()} {path}"
            params = shared + op.get("parameters", [])
            seen = set()
            for p in params:
                if "$ref" in p:
                    continue
                for key in ("name", "in", "schema"):
                    if key not in p:
                        problems.append(f"{where}: a parameter without {key}")
                k = (p.get("name"), p.get("in"))
                if k in seen:
                    problems.append(f"{where}: parameter {k} given twice")
                seen.add(k)
            in_path = {p.get("name") for p in params if p.get("in") == "path"}
            for missing in sorted(declared_path - in_path):
                problems.append(f"{where}: path parameter {missing} not declared")
            responses = op.get("responses", {})
            if not responses:
                problems.append(f"{where}: no responses")
            for code, r in responses.items():
                if "$ref" in r:
                    continue
                if not r.get("description"):
                    problems.append(f"{where}: response {code} without a description")
    return problems


def main():
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    problems = lint(doc)
    if not str(doc.get("openapi", "")).startswith("3.0"):
        problems.append("openapi: expected 3.0.x")
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
