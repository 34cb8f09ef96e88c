import ArgumentParser
import Foundation
@_spi(Internals) import StoreChain
import StoreChainPipeline

/// `storechain save`: one insert, update or delete through a pipeline, printed as JSON.
struct SaveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save",
        abstract: "Insert, update or delete one object through a pipeline and print the outcome as JSON.",
        discussion: """
            With an outbox in the pipeline, a save made while the backend cannot be reached is \
            kept and printed with "state": "pending"; 'storechain outbox replay' sends it later.

            Examples:
              storechain save --pipeline app.pipeline.yml --entity Band \\
                --insert '{"name": "Low Tide", "founded": "2019-04-01T00:00:00Z"}'
              storechain save --pipeline app.pipeline.yml --entity Album \\
                --update 100 '{"price": 9.5}'
              storechain save --pipeline app.pipeline.yml --entity Track --delete 7
            """
    )

    @OptionGroup var pipeline: PipelineOption

    @Option(help: "The entity of the object.")
    var entity: String

    @Option(help: "Insert an object: its attributes and relationships (as keys) in JSON.")
    var insert: String?

    @Option(
        parsing: .upToNextOption,
        help: ArgumentHelp("Update an object: its key, then the changed fields in JSON.", valueName: "key> <json"))
    var update: [String] = []

    @Option(help: "Delete the object with this key.")
    var delete: String?

    func validate() throws {
        guard [insert != nil, !update.isEmpty, delete != nil].filter({ $0 }).count == 1 else {
            throw ValidationError("give one of --insert JSON, --update KEY JSON or --delete KEY")
        }
        guard update.isEmpty || update.count == 2 else {
            throw ValidationError("--update takes two values: the object's key, then its changed fields in JSON")
        }
    }

    func run() async throws {
        try await Output.reportingFailure { try await execute() }
    }

    private func execute() async throws {
        let loaded = try pipeline.load()
        let entity = try loaded.model.requireEntity(self.entity)
        let (changes, id) = try self.changes(entity, model: loaded.model)
        let chain = loaded.makeChain()
        let response: StoreResponse
        do {
            response = try await chain.send(.save(changes), context: chain.makeContext())
        } catch {
            await chain.shutdown()
            throw error
        }
        await chain.shutdown()
        let result = try response.saveResult()
        print(Self.outcome(of: result, for: id, changes: changes, formatter: ResultFormatter(entity: entity)))
    }

    /// The save the options describe, and the ID of the object it changes.
    private func changes(_ entity: EntityDescription, model: ObjectModel) throws(StoreChainError) -> (
        SaveChanges, ObjectID
    ) {
        if let insert {
            let id = ObjectID.temporary(entity: entity.name)
            let node = try RecordLoader(model: model, source: "--insert")
                .readChanges(try Self.json(insert, option: "--insert"), of: id)
            return (SaveChanges(inserted: [node]), id)
        }
        if update.count == 2 {
            let id = try Self.id(update[0], of: entity, option: "--update")
            let node = try RecordLoader(model: model, source: "--update")
                .readChanges(try Self.json(update[1], option: "--update"), of: id)
            return (SaveChanges(updated: [node]), id)
        }
        let id = try Self.id(delete ?? "", of: entity, option: "--delete")
        return (SaveChanges(deleted: [id]), id)
    }

    private static func json(_ text: String, option: String) throws(StoreChainError) -> JSONValue {
        do {
            return try JSONParser().parse(text, source: option)
        } catch {
            throw error.located(.init(path: option))
        }
    }

    /// A key as given on the command line: JSON (`7`, `"a-b"`) or bare text, then checked
    /// against the entity's key type.
    private static func id(_ text: String, of entity: EntityDescription, option: String) throws(StoreChainError)
        -> ObjectID
    {
        guard let keyType = entity.keyAttribute?.type else {
            throw StoreChainError(.invalidRequest, "entity '\(entity.name)' has no key attribute")
        }
        let json = (try? JSONParser().parse(text)) ?? .string(text)
        do {
            return ObjectID(entity: entity.name, key: try Value.coerce(json, to: keyType))
        } catch {
            throw error.located(.init(path: option))
        }
    }

    /// `{"state": "saved" | "pending", "kind": …, "id": …, "object": {…}}`: the object as the
    /// backend now holds it, or as the pending save will send it.
    static func outcome(of result: SaveResult, for id: ObjectID, changes: SaveChanges, formatter: ResultFormatter)
        -> String
    {
        let kind = !changes.inserted.isEmpty ? "insert" : !changes.updated.isEmpty ? "update" : "delete"
        let savedID = result.permanentIDs[id] ?? id
        let object =
            result.nodes.first { $0.id == savedID } ?? (changes.inserted + changes.updated).first { $0.id == id }
        var text = "{\"state\": \"\(result.isPending ? "pending" : "saved")\", \"kind\": \"\(kind)\", \"id\": "
        JSONWriter.writeString(savedID.description, into: &text)
        if kind != "delete", let object {
            text += ", \"object\": " + formatter.json(object)
        }
        return text + "}"
    }
}
