#!/usr/bin/env python3
"""Documentation coverage of the public API, from the symbol graphs `Scripts/docs.sh` extracts.

Every public declaration of a documented module needs a doc comment of its own, except a witness
of a protocol requirement: a member that implements a standard library protocol's requirement
(`init(from:)`, `hash(into:)`, `description`, …) or a requirement of one of our own documented
protocols (`handle(_:context:next:)` of a handler) is documented by that requirement, as DocC
shows it. And every public type must be reachable by a reader: named in a DocC article of its
module's catalog (``Type`` or `Type`) or in the README.

Prints the coverage of each module, then every declaration missing a comment and every type no
article names, with its file and line; exits 1 when any is missing.

    python3 Scripts/doc-coverage.py [.build/symbol-graphs]
"""
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULES = ["StoreChain", "StoreChainHTTP", "StoreChainSQLite", "StoreChainPipeline", "StoreChainTesting"]
TYPE_KINDS = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.actor", "swift.typealias"}

# The requirements of the standard library's protocols (and Foundation's and Observation's), by
# the protocol's name as a symbol graph writes it: what a conforming type's member implements.
STANDARD = {
    "Swift.Equatable": {"==(_:_:)", "!=(_:_:)"},
    "Swift.Hashable": {"hash(into:)", "hashValue"},
    "Swift.Comparable": {"<(_:_:)", "<=(_:_:)", ">(_:_:)", ">=(_:_:)"},
    "Swift.Encodable": {"encode(to:)"},
    "Swift.Decodable": {"init(from:)"},
    "Swift.CustomStringConvertible": {"description"},
    "Swift.CustomDebugStringConvertible": {"debugDescription"},
    "Swift.LosslessStringConvertible": {"init(_:)", "description"},
    "Swift.RawRepresentable": {"rawValue", "init(rawValue:)", "RawValue"},
    "Swift.CaseIterable": {"allCases", "AllCases"},
    "Swift.Identifiable": {"id", "ID"},
    "Swift.CodingKey": {"stringValue", "intValue", "init(stringValue:)", "init(intValue:)"},
    "Swift.Sequence": {"makeIterator()", "Iterator", "Element", "underestimatedCount"},
    "Swift.IteratorProtocol": {"next()", "Element"},
    "Swift.Collection": {"startIndex", "endIndex", "index(after:)", "subscript(_:)", "Index", "Indices",
                         "SubSequence", "count", "isEmpty", "indices"},
    "Swift.BidirectionalCollection": {"index(before:)"},
    "Swift.RandomAccessCollection": {"index(_:offsetBy:)", "distance(from:to:)"},
    "Swift.SetAlgebra": {"init()", "contains(_:)", "union(_:)", "intersection(_:)", "symmetricDifference(_:)",
                         "insert(_:)", "remove(_:)", "update(with:)", "formUnion(_:)", "formIntersection(_:)",
                         "formSymmetricDifference(_:)", "Element", "ArrayLiteralElement"},
    "Swift.OptionSet": {"init(rawValue:)", "rawValue", "Element", "RawValue"},
    "Swift.ExpressibleByArrayLiteral": {"init(arrayLiteral:)", "ArrayLiteralElement"},
    "Swift.ExpressibleByDictionaryLiteral": {"init(dictionaryLiteral:)", "Key", "Value"},
    "Swift.ExpressibleByStringLiteral": {"init(stringLiteral:)", "StringLiteralType"},
    "Swift.ExpressibleByUnicodeScalarLiteral": {"init(unicodeScalarLiteral:)", "UnicodeScalarLiteralType"},
    "Swift.ExpressibleByExtendedGraphemeClusterLiteral": {"init(extendedGraphemeClusterLiteral:)",
                                                          "ExtendedGraphemeClusterLiteralType"},
    "Swift.ExpressibleByStringInterpolation": {"init(stringInterpolation:)", "StringInterpolation"},
    "Swift.ExpressibleByIntegerLiteral": {"init(integerLiteral:)", "IntegerLiteralType"},
    "Swift.ExpressibleByFloatLiteral": {"init(floatLiteral:)", "FloatLiteralType"},
    "Swift.ExpressibleByBooleanLiteral": {"init(booleanLiteral:)", "BooleanLiteralType"},
    "Swift.ExpressibleByNilLiteral": {"init(nilLiteral:)"},
    "Swift.Error": set(),
    "Foundation.LocalizedError": {"errorDescription", "failureReason", "recoverySuggestion", "helpAnchor"},
    "_Concurrency.AsyncSequence": {"makeAsyncIterator()", "AsyncIterator", "Element", "Failure"},
    "_Concurrency.AsyncIteratorProtocol": {"next()", "next(isolation:)", "Element", "Failure"},
    "_Concurrency.Clock": {"now", "minimumResolution", "sleep(until:tolerance:)", "Duration", "Instant"},
}


def load(graphs: pathlib.Path):
    """Every symbol and relationship of the documented modules' graphs, by precise identifier."""
    symbols, relationships = {}, []
    for module in MODULES:
        for path in sorted((graphs / module).glob("*.symbols.json")):
            graph = json.loads(path.read_text())
            for symbol in graph["symbols"]:
                symbols.setdefault(symbol["identifier"]["precise"], (module, symbol))
            relationships += graph["relationships"]
    return symbols, relationships


def name(symbol) -> str:
    return symbol["pathComponents"][-1]


def place(symbol) -> str:
    location = symbol.get("location")
    if not location:
        return "?"
    file = location["uri"].split(str(ROOT) + "/", 1)[-1]
    return f"{file}:{location['position']['line'] + 1}"


def deprecated(symbol) -> bool:
    """Marked deprecated (an old name kept for a release): documented, but no article needs it."""
    return any(entry.get("isUnconditionallyDeprecated") or "deprecated" in entry
               for entry in symbol.get("availability", []))


def declared_in(module: str, symbol) -> bool:
    """Written in the module's own sources (not a member it inherits from another module)."""
    return f"/Sources/{module}/" in symbol.get("location", {}).get("uri", "")


def main(arguments: list) -> int:
    graphs = pathlib.Path(arguments[0]) if arguments else ROOT / ".build" / "symbol-graphs"
    symbols, relationships = load(graphs)
    if not symbols:
        print(f"error: no symbol graphs under {graphs}; run Scripts/docs.sh first", file=sys.stderr)
        return 1
    parent = {r["source"]: r["target"] for r in relationships if r["kind"] == "memberOf"}
    conforms = {}
    for r in relationships:
        if r["kind"] == "conformsTo":
            conforms.setdefault(r["source"], set()).add(r.get("targetFallback") or r["target"])
            conforms[r["source"]].add(r["target"])
    # Our own protocols' requirements, by protocol; each counts as documented when it is.
    requirements = {}
    for r in relationships:
        if r["kind"] in ("requirementOf", "optionalRequirementOf") and r["source"] in symbols:
            requirements.setdefault(r["target"], {})[name(symbols[r["source"]][1])] = r["source"]

    def protocols_of(type_id: str) -> set:
        """The protocols a type conforms to, with those its protocols refine."""
        found, todo = set(), list(conforms.get(type_id, ()))
        while todo:
            protocol = todo.pop()
            if protocol not in found:
                found.add(protocol)
                todo += conforms.get(protocol, ())
        return found

    def is_witness(symbol_id: str, symbol) -> bool:
        owner = parent.get(symbol_id)
        if owner is None:
            return False
        member = name(symbol)
        for protocol in protocols_of(owner):
            if member in STANDARD.get(protocol, ()):
                return True
            requirement = requirements.get(protocol, {}).get(member)
            if requirement and symbols[requirement][1].get("docComment"):
                return True
        return False

    articles = {}
    for module in MODULES:
        catalog = ROOT / "Sources" / module / f"{module}.docc"
        articles[module] = " ".join(p.read_text() for p in catalog.glob("*.md")) if catalog.exists() else ""
    readme = (ROOT / "README.md").read_text()

    missing, unreachable, failed = [], [], False
    print(f"{'module':<20} {'public':>7} {'documented':>11} {'coverage':>9} {'types':>6} {'named':>6}")
    for module in MODULES:
        declared = [(i, s) for i, (m, s) in symbols.items()
                    if m == module and s["kind"]["identifier"] != "swift.extension"
                    and s.get("accessLevel") in ("public", "open") and declared_in(module, s)
                    and not is_witness(i, s)]
        undocumented = [s for _, s in declared if not s.get("docComment")]
        types = [s for _, s in declared if s["kind"]["identifier"] in TYPE_KINDS
                 and len(s["pathComponents"]) == 1 and not deprecated(s)]
        text = articles[module] + readme
        unnamed = [s for s in types if not re.search(r"`{1,2}(\w+\.)*" + re.escape(name(s)) + r"\b", text)]
        documented = len(declared) - len(undocumented)
        coverage = 100 * documented / len(declared) if declared else 100
        print(f"{module:<20} {len(declared):>7} {documented:>11} {coverage:>8.1f}% {len(types):>6} "
              f"{len(types) - len(unnamed):>6}")
        missing += [(module, s) for s in undocumented]
        unreachable += [(module, s) for s in unnamed]
        failed = failed or bool(undocumented) or bool(unnamed)
    for module, symbol in sorted(missing, key=lambda item: place(item[1])):
        print(f"{place(symbol)}: no doc comment: {'.'.join(symbol['pathComponents'])}")
    for module, symbol in sorted(unreachable, key=lambda item: place(item[1])):
        print(f"{place(symbol)}: no article of {module}.docc nor the README names {name(symbol)}")
    if failed:
        print("error: document each of these (a witness of a documented requirement needs none), and name each "
              "type in an article of its module's catalog (``Type``)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
