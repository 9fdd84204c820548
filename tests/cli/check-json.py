#!/usr/bin/env python3
"""check-json.py: check a `capdelegate audit --json` document against the schema written in
capdelegate(8) (the block between json-schema-begin and json-schema-end), so that the page and
the program cannot drift apart. Every key must be documented, every documented key present
(those marked '?' only if their parent is), every value of the documented type. *_hex keys must
hold the exact bytes of their string (invalid UTF-8 shown as U+FFFD).

Every documented array that is present must hold at least one element somewhere in the
document, else the keys of its elements are never checked (an empty `processes` would hide a
dropped field): name the arrays a test expects empty with --may-be-empty.

usage: check-json.py [--may-be-empty KEY]... MANPAGE JSONFILE
       exit 0 valid, 1 invalid (reasons on stdout), 2 usage
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


def check(value, path, schema, errors, arrays):
    """arrays: documented array key -> True once an instance of it held an element."""
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
                check(v, sub, schema, errors, arrays)
        for k, v in value.items():
            if k.endswith("_hex") and k[:-4] in value and k != "raw_hex" and v is not None:
                exact = bytes.fromhex(v).decode("utf-8", "replace")
                if exact != value[k[:-4]]:
                    errors.append("%s.%s: bytes do not match %r" % (path, k, value[k[:-4]]))
    elif isinstance(value, list):
        arrays[path] = arrays.get(path, False) or bool(value)
        sub = path + "[]"
        if value and sub not in schema:
            errors.append("%s: array elements not documented" % sub)
            return
        for v in value:
            typ, rest, _ = schema[sub]
            if not type_ok(v, typ, rest):
                errors.append("%s: %r is not %s" % (sub, v, typ))
            elif typ in ("object", "array"):
                check(v, sub, schema, errors, arrays)


def parse_args(argv):
    """(manpage, jsonfile, set of keys that may be empty), or None on bad usage."""
    may_be_empty, args = set(), list(argv)
    while len(args) >= 2 and args[0] == "--may-be-empty":
        may_be_empty.add(args[1])
        args = args[2:]
    if len(args) != 2 or args[0].startswith("-"):
        return None
    return args[0], args[1], may_be_empty


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    parsed = parse_args(sys.argv[1:])
    if parsed is None:
        print(__doc__)
        return 2
    manpage, jsonfile, may_be_empty = parsed
    schema = load_schema(manpage)
    try:
        with open(jsonfile, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        print("not a UTF-8 JSON document: %s" % e)
        return 1
    errors, arrays = [], {}
    check(doc, "", schema, errors, arrays)
    for key, filled in sorted(arrays.items()):
        if not filled and key not in may_be_empty:
            errors.append("%s: empty array: the keys of its elements are not checked "
                          "(--may-be-empty %s if the test expects none)" % (key, key))
    for e in errors[:50]:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
