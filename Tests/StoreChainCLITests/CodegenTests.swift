import Foundation
import StoreChainTesting
import Testing

/// `storechain-codegen`, which the StoreChainModelPlugin runs on model files (the Bandcamp
/// example compiles its output).
@Suite struct CodegenTests {
    @Test func writesATypedWrapperPerEntity() async throws {
        let output = try TemporaryFolder.create("storechain-codegen").appending(path: "Generated.swift")
        let outcome = try await CommandRunner.run(
            ["Examples/Music/music.model.yml", output.path], executable: "storechain-codegen")
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let text = try String(contentsOf: output, encoding: .utf8)
        #expect(text.contains("public struct Band: TypedObject {"))
        #expect(text.contains("public var `founded`: Date? {"))
        #expect(text.contains(#"get async throws { try await object.value("founded", as: Date?.self) }"#))
        #expect(text.contains("public var `albums`: [Album] {"))
        #expect(text.contains("public var `band`: Band {"), "a required to-one is not optional")
        #expect(text.contains(#"get async throws { try await object.requiredRelated("band", as: Band.self) }"#))
        #expect(text.contains("public func setFounded(_ value: Date?) throws(StoreChainError) {"))
        #expect(!text.contains("func setId("), "keys are given by the backend, not set")
        #expect(text.contains("into context: ObjectContext, `title`: String, `band`: Band, `year`: Int? = nil"))
        #expect(text.contains("extension SortKey where Object == Album {"))
        #expect(text.contains(#"public static var `year`: Self { Self("year") }"#))
        #expect(text.contains(#"public static var `tracks`: Self { Self("tracks") }"#))
        #expect(text.contains(#"public static let `name` = Key<String>("name")"#))
        #expect(text.contains(#"public static let `tracks` = ToMany("tracks")"#))
        #expect(text.contains("public enum Fields: ModelFields {"))
        #expect(text.contains("public var `band`: Band.Fields { switch self {} }"))
        #expect(text.contains(#"\Fields.`band`.`name`: "band.name","#), "one to-one step for sorts")
        #expect(text.contains("public struct Values: Sendable, Hashable {"))
        #expect(text.contains("public let `id`: Int?"), "the key cannot be assigned and is nil until saved")
        #expect(text.contains("public func update(_ change: (inout Values) throws -> Void) async throws {"))
    }

    @Test func propertiesThatClashWithGeneratedMembersAreNamed() async throws {
        let model = try TemporaryFolder.create("storechain-codegen").appending(path: "clash.model.yml")
        try
            "entities:\n  Band:\n    key: id\n    attributes: { id: integer, count: integer, isDeleted: boolean, name: string, setName: string }\n"
            .write(to: model, atomically: true, encoding: .utf8)
        let outcome = try await CommandRunner.run([model.path, "/dev/null"], executable: "storechain-codegen")
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("Band.count clashes with the generated member 'count'"), "\(outcome.stderr)")
        #expect(
            outcome.stderr.contains("Band.isDeleted clashes with the generated member 'isDeleted'"), "\(outcome.stderr)"
        )
        #expect(
            outcome.stderr.contains("Band.name's setter would clash with the property 'setName'"), "\(outcome.stderr)")
    }

    @Test func aBadModelFailsWithItsErrors() async throws {
        let model = try TemporaryFolder.create("storechain-codegen").appending(path: "bad.model.yml")
        try "entities:\n  Band:\n    key: id\n    attributes: { id: integr }\n".write(
            to: model, atomically: true, encoding: .utf8)
        let outcome = try await CommandRunner.run([model.path, "/dev/null"], executable: "storechain-codegen")
        #expect(outcome.status == 1)
        #expect(
            outcome.stderr.contains("unknown attribute type 'integr' — did you mean 'integer'?"), "\(outcome.stderr)")
    }
}
