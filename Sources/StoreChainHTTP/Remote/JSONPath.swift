import StoreChain

/// Dotted key paths into JSON (`data.items`, `attributes.name`); a step written `name[*]` takes
/// the rest of the path in each element of the array there (`relationships.tracks.data[*].id`,
/// JSON:API's to-many linkage, is the array of the elements' `id`s).
enum JSONPath {
    static func components(_ path: String) -> [String] {
        path.split(separator: ".").map(String.init)
    }

    /// The value at `path`, or `nil` when any step is missing.
    static func value(at path: String, in json: JSONValue) -> JSONValue? {
        // A byte scan: this runs for every mapped field of every record.
        if path.utf8.contains(UInt8(ascii: "*")) { return value(at: components(path)[...], in: json) }
        var current = json
        for component in components(path) {
            guard case .object(let members) = current, let next = members[component] else { return nil }
            current = next
        }
        return current
    }

    /// The value at `path`, each `[*]` step an array of what the rest of the path reaches in
    /// the array's elements (those that have it); `nil` when a step is missing or not an array.
    private static func value(at path: ArraySlice<String>, in json: JSONValue) -> JSONValue? {
        guard let first = path.first else { return json }
        let each = first.hasSuffix("[*]")
        guard case .object(let members) = json, let next = members[each ? String(first.dropLast(3)) : first] else {
            return nil
        }
        guard each else { return value(at: path.dropFirst(), in: next) }
        guard case .array(let elements) = next else { return nil }
        return .array(elements.compactMap { value(at: path.dropFirst(), in: $0) })
    }

    /// Sets `value` at `path`, creating objects on the way.
    static func set(_ value: JSONValue, at path: String, in json: inout JSONValue) {
        set(value, at: components(path)[...], in: &json)
    }

    private static func set(_ value: JSONValue, at path: ArraySlice<String>, in json: inout JSONValue) {
        guard let first = path.first else {
            json = value
            return
        }
        var members: [String: JSONValue] = [:]
        if case .object(let existing) = json { members = existing }
        var child = members[first] ?? .object([:])
        set(value, at: path.dropFirst(), in: &child)
        members[first] = child
        json = .object(members)
    }
}
