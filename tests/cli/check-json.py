#!/usr/bin/env python3
"""check-json.py: check a `capdelegate audit --json` document against the schema written in
capdelegate(8) (the block between json-schema-begin and json-schema-end), so that the page and
the program cannot drift apart. Every key must be documented, every documented key present
(those marked '?' only if their parent is), every value of the documented type. *_hex keys must
hold the exact bytes of their string (invalid UTF-8 shown as U+FFFD).

usage: check-json.py MANPAGE JSONFILE     exit 0 valid, 1 invalid (reasons on stdout), 2 usage
"""
import json
import re
import sys


def load_schema(manpage):
    schema, inside = {}, False
    with open(manpage, encoding="utf-8") as f:
        for line in f:
            if line.strip() == ".\\\" json-schema-begin":
                inside = True
            elif line.strip() == ".\\\" json-schema-end":
                inside = False
            elif inside and line.strip() and not line.startswith("."):
                key, typ, *rest = line.split()
                optional = key.endswith("?")
                schema[key.rstrip("?")] = (typ, rest, optional)
    if not schema:
        raise SystemExit("check-json: no schema block in %s" % manpage)
    return schema


CAP = re.compile(r"^cap_[a-z0-9_]+$")
HEX = re.compile(r"^(?:[0-9a-f]{2})*$")


def type_ok(value, typ, rest):
    alternatives = typ.split("|")
    for t in alternatives:
        if t == "null" and value is None:
            return True
        if t == "int" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if t == "bool" and isinstance(value, bool):
            return True
        if t == "string" and isinstance(value, str):
            return True
        if t == "hex" and isinstance(value, str) and HEX.match(value):
            return True
        if t == "object" and isinstance(value, dict):
            return True
        if t == "array" and isinstance(value, list):
            return True
        if t == "caps" and isinstance(value, list) and all(isinstance(c, str) and CAP.match(c) for c in value):
            return True
        if t == "enum" and value in rest:
            return True
    return False


def check(value, path, schema, errors):
    if isinstance(value, dict):
        for key, (typ, rest, optional) in schema.items():
            parent, _, leaf = key.rpartition(".")
            if parent == path and not leaf.endswith("[]") and leaf not in value and not optional:
                errors.append("%s: documented key missing" % key)
        for k, v in value.items():
            sub = "%s.%s" % (path, k) if path else k
            if sub not in schema:
                errors.append("%s: key not documented in the man page" % sub)
                continue
            typ, rest, _ = schema[sub]
            if not type_ok(v, typ, rest):
                errors.append("%s: %r is not %s %s" % (sub, v, typ, " ".join(rest)))
            elif typ in ("object", "array"):
                check(v, sub, schema, errors)
        for k, v in value.items():
            if k.endswith("_hex") and k[:-4] in value and k != "raw_hex":
                exact = bytes.fromhex(v).decode("utf-8", "replace")
                if exact != value[k[:-4]]:
                    errors.append("%s.%s: bytes do not match %r" % (path, k, value[k[:-4]]))
    elif isinstance(value, list):
        sub = path + "[]"
        if value and sub not in schema:
            errors.append("%s: array elements not documented" % sub)
            return
        for v in value:
            typ, rest, _ = schema[sub]
            if not type_ok(v, typ, rest):
                errors.append("%s: %r is not %s" % (sub, v, typ))
            elif typ in ("object", "array"):
                check(v, sub, schema, errors)


def main():
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    schema = load_schema(sys.argv[1])
    try:
        with open(sys.argv[2], "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        print("not a UTF-8 JSON document: %s" % e)
        return 1
    errors = []
    check(doc, "", schema, errors)
    for e in errors[:50]:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
