import StoreChain

extension SortBinding {
    /// What the sort variable takes for `sort`.
    struct Pushed {
        var value: String
        /// The backend returns records in the order of the whole sort.
        var ordered: Bool
        /// Records that sort equal come back in ascending key order.
        var tiesInKeyOrder: Bool
    }

    /// The value of the sort variable for `sort`. A grammar orders by every key of the sort, then
    /// the key, when it has a field for each. Written-out values match the whole sort, with or
    /// without the key at its end (the backend then breaks ties by key), else its first key
    /// (ordered when it is the only one; ties in key order when the sort declares so, or the
    /// sort is by the key). `nil` when nothing matches, a key ignores case, or a key is one of
    /// the `nilable` key paths and the backend is not declared to put nils where a fetch does.
    func pushed(for sort: [FetchSortDescriptor], key: String, nilable: Set<String>) -> Pushed? {
        guard let first = sort.first, !sort.contains(where: \.caseInsensitive) else { return nil }
        guard nils == .smallest || !sort.contains(where: { nilable.contains($0.keyPath) }) else { return nil }
        let hasKey = sort.contains { $0.keyPath == key }
        if let separator {
            let keys = hasKey ? sort : sort + [FetchSortDescriptor(key)]
            let parts = keys.compactMap { descriptor in
                fields[descriptor.keyPath].map { name in
                    (descriptor.ascending ? ascending : descending ?? descendingPrefix + "{field}")
                        .replacingOccurrences(of: "{field}", with: name)
                }
            }
            if parts.count == keys.count {
                return Pushed(value: parts.joined(separator: separator), ordered: true, tiesInKeyOrder: true)
            }
        }
        let whole = sort.map(\.description).joined(separator: ",")
        if let value = values["\(whole),\(key)"] { return Pushed(value: value, ordered: true, tiesInKeyOrder: true) }
        if let value = values[whole] ?? values[first.description] {
            let ordered = values[whole] != nil || sort.count == 1
            return Pushed(value: value, ordered: ordered, tiesInKeyOrder: ordered && (tiesInKeyOrder || hasKey))
        }
        return nil
    }

    /// Why `sort` is not pushed in the order it asks, for `explain`: a sort that ignores case, a
    /// key the grammar has no field for, a sort the written-out values do not name, or values that
    /// order by the first key only. `nil` when it is pushed whole.
    func whyNotPushed(_ sort: [FetchSortDescriptor], key: String, nilable: Set<String>) -> String? {
        if let folded = sort.first(where: \.caseInsensitive) {
            return "'\(folded.description)' ignores case, which no sort variable says it does"
        }
        if pushed(for: sort, key: key, nilable: [])?.ordered == true {
            guard nils != .smallest, let optional = sort.first(where: { nilable.contains($0.keyPath) }) else {
                return nil
            }
            return "'\(optional.keyPath)' may be nil, and "
                + (nils == .largest
                    ? "the backend sorts nils as larger than any value (a fetch, as smaller)"
                    : "the sort does not say where the backend puts nils (nils: smallest where it sorts them first)")
        }
        if separator != nil {
            let missing = sort.map(\.keyPath).filter { fields[$0] == nil }
            if !missing.isEmpty {
                return "the sort grammar of {\(variable)} has no field for "
                    + missing.map { "'\($0)'" }.joined(separator: ", ")
            }
        }
        let whole = sort.map(\.description).joined(separator: ",")
        if let first = sort.first, values[first.description] != nil {
            return "{\(variable)} has a value for '\(first.description)' only, not for '\(whole)'"
        }
        return "{\(variable)} has no value for '\(whole)'"
    }

    /// The key paths the sort names: its grammar's fields and those in its written-out values.
    var keyPaths: [String] {
        Array(fields.keys)
            + values.keys.flatMap { $0.split(separator: ",") }.compactMap {
                try? FetchSortDescriptor(parsing: String($0)).keyPath
            }
    }
}
