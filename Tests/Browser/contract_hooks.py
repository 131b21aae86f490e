"""schemathesis hooks for test_published_contract.py. `before_call` makes generated writes say what
the document cannot (JSON Schema has no way to); schemathesis checks a request again after it
changes it, so a case it makes valid is no longer counted as invalid. `filter_failure` reads a list
query against the document as it is now, not as it was when schemathesis read it."""
import json
import re
import urllib.parse
import urllib.request

import jsonschema_rs  # schemathesis' own validator (one of its dependencies)
import schemathesis

ITEM = re.compile(r"^/tables/([^/]+)/\{id\}$")
TABLE = re.compile(r"^/tables/([^/]+)$")
COLUMN_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
V3 = {"ZUMO-API-VERSION": "3.0.0"}

# Per table, the type the first value a generated write gave an open column fixed (by lower-cased
# name: the service matches column names in any case).
added_columns = {}


def json_type(value):
    """The column type a scalar JSON value gives a dynamic column, None for null and the rest."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def written_table(case):
    """The table a POST or PUT writes to, or None."""
    address = {"POST": TABLE, "PUT": ITEM}.get(case.operation.method.upper())
    match = address.match(case.operation.path) if address else None
    return match.group(1) if match and isinstance(case.body, dict) else None


def open_names(case, table):
    """The body's names whose type the document leaves open: names it does not give the table
    (new dynamic columns) and dynamic columns that have held only nulls so far."""
    documented = case.operation.schema.raw_schema["components"]["schemas"][table]["properties"]
    return [name for name in case.body
            if name not in documented or len(set(documented[name].get("type", [])) - {"null"}) > 1]


@schemathesis.hook
def before_call(context, case, kwargs):
    table = written_table(case)
    if table is None:
        return
    # The id of a replacement is its address's: the document cannot tie the body's `id` to the
    # path's, and a different one is the 400 it documents (an item's id cannot change). Real
    # clients send the item with its own id.
    if case.operation.method.upper() == "PUT" and isinstance(case.body.get("id"), str):
        address = (case.path_parameters or {}).get("id")
        if isinstance(address, str):
            case.body["id"] = address
    # Column names ignore letter case: a body with two names that differ only in case is refused
    # (400), and a name that is a documented one in another case is that column. JSON Schema has no
    # case-insensitive names, so such names are left out (the first of a kind is kept, documented
    # names before others).
    documented = case.operation.schema.raw_schema["components"]["schemas"][table]["properties"]
    seen = {name.lower() for name in documented}
    for name in [name for name in case.body if name not in documented]:
        if name.lower() in seen:
            del case.body[name]
        else:
            seen.add(name.lower())
    # A dynamic column takes the type of the first value written to it; the document schemathesis
    # read before then gives any scalar (the document read afterwards gives the column's type, see
    # the test). A name an earlier write gave another type is sent under a name of its own instead.
    columns = added_columns.setdefault(table, {})
    for name in open_names(case, table):
        kind = json_type(case.body[name])
        if kind is None or not COLUMN_NAME.match(name):
            continue
        fresh, number = name, 0
        while columns.get(fresh.lower(), kind) != kind:
            number += 1
            fresh = "%s_%s%d" % (name[:100], kind[0], number)
        if fresh != name and fresh not in case.body:
            case.body[fresh] = case.body.pop(name)


@schemathesis.hook
def after_call(context, case, response):
    table = written_table(case)
    if table is None or not 200 <= response.status_code < 300:
        return
    columns = added_columns.setdefault(table, {})
    for name in open_names(case, table):
        kind = json_type(case.body[name])
        if kind is not None:
            columns.setdefault(name.lower(), kind)


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every failure but one kind: a list query schemathesis calls invalid (ST201) whose
    values the document as it is now calls valid. The `$select`, `$orderby` and `$filter` patterns
    name the table's columns, and generated writes add columns after schemathesis read the
    document; the service rightly takes a query on them."""
    if failure.code != "ST201" or case.operation.method.upper() != "GET" or not TABLE.match(case.operation.path):
        return True
    sent = urllib.parse.urlsplit(response.request.url)
    origin = "%s://%s" % (sent.scheme, sent.netloc)
    with urllib.request.urlopen(urllib.request.Request(origin + "/openapi.json", headers=V3), timeout=30) as answer:
        now = json.load(answer)
    parameters = {parameter["name"]: parameter["schema"]
                  for parameter in now["paths"][case.operation.path]["get"]["parameters"]}
    for name, values in urllib.parse.parse_qs(sent.query, keep_blank_values=True).items():
        schema = parameters.get(name)
        if schema is not None and not all(valid(value, schema) for value in values):
            return True
    return False


def valid(text, schema):
    """Whether a query value as sent is valid against its parameter's schema (booleans and integers
    read from their text)."""
    value = text
    if schema.get("type") == "boolean":
        if text not in ("true", "false"):
            return False
        value = text == "true"
    elif schema.get("type") == "integer":
        if not re.fullmatch(r"-?[0-9]+", text):
            return False
        value = int(text)
    return jsonschema_rs.validator_for(schema).is_valid(value)
