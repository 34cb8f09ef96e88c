import StoreChain
import StoreChainTesting

extension FuzzTarget {
    /// The predicate parser: any text parses or fails with a `predicate-syntax` error pointing
    /// inside the text; what parses prints to a form that parses back to the same predicate; and
    /// the predicate validates and runs against every entity of the music model, or fails with a
    /// typed error.
    public static let predicate = FuzzTarget(name: "predicate") { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        let parsed: FetchPredicate
        do throws(StoreChainError) {
            parsed = try FetchPredicate(format: text)
        } catch {
            return PredicateFuzzing.misplaced(error, in: text)
        }
        let printed = parsed.format
        do throws(StoreChainError) {
            let reparsed = try FetchPredicate(format: printed)
            if reparsed != parsed {
                return "\(text.debugDescription) prints as \(printed.debugDescription), which parses back "
                    + "to a different predicate, \(reparsed.format.debugDescription)"
            }
        } catch {
            return "\(text.debugDescription) prints as \(printed.debugDescription), which does not parse: \(error)"
        }
        return PredicateFuzzing.evaluate(parsed)
    }
}

enum PredicateFuzzing {
    /// The music fixture, built once: the fuzzer runs millions of inputs.
    static let store: InMemoryStore? = try? MusicFixture.store()

    /// A syntax error must point inside the text it is about.
    static func misplaced(_ error: StoreChainError, in text: String) -> String? {
        guard error.code == .predicateSyntax else {
            return "parsing \(text.debugDescription) failed with \(error.code), not predicate-syntax: \(error)"
        }
        guard let offset = error.location?.offset, (0...text.unicodeScalars.count).contains(offset) else {
            return "the syntax error for \(text.debugDescription) points outside the text: \(error)"
        }
        return nil
    }

    /// Fetches with the predicate from every entity; an unsuitable predicate must be refused
    /// with a typed error, never answered wrongly or crash.
    static func evaluate(_ predicate: FetchPredicate) -> String? {
        guard let store else { return "the music fixture does not load" }
        for entity in ["Band", "Album", "Track"] {
            let request = StoreChain.FetchRequest(entity: entity, predicate: predicate)
            do throws(StoreChainError) {
                guard case .objects(let objects) = try store.fetch(request) else {
                    return "a fetch of objects answered something else"
                }
                let count = try store.fetch(
                    StoreChain.FetchRequest(entity: entity, predicate: predicate, resultType: .count))
                if count != .count(objects.count) {
                    return "\(predicate.format.debugDescription) on \(entity): \(objects.count) objects, but \(count)"
                }
            } catch {
                if error.message.isEmpty {
                    return "\(predicate.format.debugDescription) on \(entity) failed without a message"
                }
            }
        }
        return nil
    }
}
