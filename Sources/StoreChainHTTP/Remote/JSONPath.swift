import StoreChain

/// Dotted key paths into JSON (`data.items`, `attributes.name`).
enum JSONPath {
    static func components(_ path: String) -> [String] {
        path.split(separator: ".").map(String.init)
    }

    /// The value at `path`, or `nil` when any step is missing.
    static func value(at path: String, in json: JSONValue) -> JSONValue? {
        var current = json
        for component in components(path) {
            guard case .object(let members) = current, let next = members[component] else { return nil }
            current = next
        }
        return current
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
