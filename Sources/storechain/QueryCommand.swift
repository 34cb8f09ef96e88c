import ArgumentParser
import Foundation
import StoreChain
import StoreChainPipeline

/// `storechain query`: one fetch over a JSON data file, printed as JSON or a table.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run one fetch request and print the result.",
        discussion: """
            Examples:
              storechain query --model Examples/Music/music.model.yml --data Examples/Music/music.json \\
                --entity Album --where 'year >= 2000 AND band.name BEGINSWITH[c] "rue"' --sort -year
              storechain query ... --entity Band --count
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, table
    }

    @Option(help: "The model file (YAML or JSON).")
    var model: String

    @Option(help: "The JSON data file: {\"Entity\": [records…], …}.")
    var data: String

    @Option(help: "The entity to fetch.")
    var entity: String

    @Option(name: .customLong("where"), help: "A predicate in NSPredicate syntax.")
    var predicate: String?

    @Option(help: "Sort keys, comma-separated: KEY, -KEY (descending), KEY[c] (ignore case).")
    var sort: String?

    @Option(help: "Return at most this many objects.")
    var limit: Int?

    @Option(help: "Skip this many objects first.")
    var offset: Int = 0

    @Flag(help: "Print only the number of matching objects.")
    var count = false

    @Option(help: "Output format: json or table.")
    var format: Format = .table

    func run() throws {
        do {
            try execute()
        } catch {
            Output.report(error, predicateText: predicate)
            throw ExitCode.failure
        }
    }

    private func execute() throws {
        let model = try ModelFile.load(contentsOf: URL(filePath: self.model))
        let store = try JSONFileStore(contentsOf: URL(filePath: data), model: model)
        var request = FetchRequest(entity: entity, fetchLimit: limit, fetchOffset: offset)
        if let predicate {
            do {
                request.predicate = try FetchPredicate(format: predicate)
            } catch {
                throw error.located(.init(path: "--where"))
            }
        }
        if let sort {
            request.sortDescriptors = try sort.split(separator: ",").map { text throws(StoreChainError) in
                try FetchSortDescriptor(parsing: String(text))
            }
        }
        if count { request.resultType = .count }
        let result = try store.fetch(request)
        let formatter = ResultFormatter(entity: try model.requireEntity(entity))
        switch result {
        case .count(let number): print(number)
        case .objects(let nodes): print(format == .json ? formatter.json(nodes) : formatter.table(nodes))
        case .objectIDs(let ids): print(ids.map(\.description).joined(separator: "\n"))
        case .dictionaries(let rows):
            print(formatter.json(rows, properties: rows.first.map { Array($0.keys).sorted() } ?? []))
        }
    }
}
