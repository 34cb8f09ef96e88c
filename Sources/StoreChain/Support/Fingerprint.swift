import Foundation

/// A stable digest of a value's contents, the same in every process and on every platform
/// (Swift's `Hasher` is seeded per process, and dictionaries iterate in a different order in
/// each process): it names what a cache's data came from, in files that outlive the process.
package enum Fingerprint {
    /// 16 hex digits of the 64-bit FNV-1a digest of the value's canonical text.
    package static func hex(of value: Any) -> String {
        let digits = String(digest(of: canonicalText(value)), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The 64-bit FNV-1a digest of a text's UTF-8 bytes: short, stable names for texts (keys,
    /// validators, identifiers with a length limit), not a defence against forgery.
    package static func digest(of text: String) -> UInt64 {
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { digest = (digest ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return digest
    }

    /// The value written out field by field, with dictionary entries and set members sorted, so
    /// equal values give equal text whatever order they were built in.
    static func canonicalText(_ value: Any) -> String {
        if let url = value as? URL { return url.absoluteString }
        let mirror = Mirror(reflecting: value)
        guard !mirror.children.isEmpty else {
            return mirror.displayStyle == .optional ? "nil" : String(reflecting: value)
        }
        let children = mirror.children.map { child in
            (child.label.map { "\($0)=" } ?? "") + canonicalText(child.value)
        }
        switch mirror.displayStyle {
        case .dictionary, .set: return "{" + children.sorted().joined(separator: ",") + "}"
        case .optional: return children.joined()
        default: return "(" + children.joined(separator: ",") + ")"
        }
    }
}
