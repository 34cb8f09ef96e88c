/// Decoding helpers for configuration types written in files.
package enum ConfigurationDecoding {
    /// A coding key for any name.
    package struct AnyKey: CodingKey {
        package let stringValue: String
        package let intValue: Int? = nil

        package init(_ name: String) { stringValue = name }
        package init?(stringValue: String) { self.stringValue = stringValue }
        package init?(intValue: Int) { nil }
    }

    /// The one key of a mapping that picks a variant (`{ foreign-key: band_id }`), with its
    /// container; any other shape is an error naming the variants.
    package static func variant(
        of decoder: any Decoder, among variants: [String], what: String
    ) throws -> (variant: String, key: AnyKey, container: KeyedDecodingContainer<AnyKey>) {
        let container = try decoder.container(keyedBy: AnyKey.self)
        let keys = container.allKeys.map(\.stringValue)
        guard keys.count == 1, let key = keys.first else {
            throw StoreChainError(
                .invalidPipeline,
                "\(what) takes exactly one of \(variants.joined(separator: ", ")); found \(keys.isEmpty ? "none" : keys.joined(separator: ", "))",
                suggestion: "write it as { \(variants[0]): … }")
        }
        guard let variant = variants.first(where: { normalized($0) == normalized(key) }) else {
            throw StoreChainError(
                .invalidPipeline, "unknown \(what) '\(key)'", suggestion: Suggestion.didYouMean(key, in: variants))
        }
        return (variant, AnyKey(key), container)
    }

    /// A name as an enum case whatever its spelling: `epoch-seconds` is `epochSeconds`.
    package static func enumCase<T: RawRepresentable & CaseIterable>(
        _ type: T.Type, from decoder: any Decoder, what: String
    )
        throws -> T where T.RawValue == String
    {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = T.allCases.first(where: { normalized($0.rawValue) == normalized(text) }) else {
            let names = T.allCases.map { fileName($0.rawValue) }
            throw StoreChainError(
                .invalidPipeline, "'\(text)' is not a \(what)",
                suggestion: Suggestion.didYouMean(text, in: names))
        }
        return value
    }

    /// A name with case, `-` and `_` ignored, for matching `max-objects` to `maxObjects`.
    package static func normalized(_ name: String) -> String {
        String(name.lowercased().filter { $0 != "-" && $0 != "_" })
    }

    /// `epochSeconds` → `epoch-seconds`.
    package static func fileName(_ name: String) -> String {
        var result = ""
        var previousLower = false
        for character in name {
            if character.isUppercase {
                if previousLower { result.append("-") }
                result.append(Character(character.lowercased()))
                previousLower = false
            } else {
                result.append(character)
                previousLower = character.isLowercase || character.isNumber
            }
        }
        return result
    }
}
