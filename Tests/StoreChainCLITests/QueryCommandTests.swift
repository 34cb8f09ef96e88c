import Foundation
import StoreChainTesting
import Testing

@Suite struct QueryCommandTests {
    let files = ["--model", "Examples/Music/music.model.yml", "--data", "Examples/Music/music.json"]

    func query(_ arguments: String...) async throws -> CommandRunner.Outcome {
        try await CommandRunner.run(["query"] + files + arguments)
    }

    @Test func printsJSONAndNothingElse() async throws {
        let outcome = try await query(
            "--entity", "Album", "--where", "band.name BEGINSWITH[c] 'rue' AND year >= 2013", "--sort=-year",
            "--format", "json")
        #expect(outcome.status == 0)
        #expect(outcome.stderr.isEmpty)
        #expect(
            outcome.stdout == """
                [
                  {"id": 12, "title": "In Parallel", "year": 2015, "band": 1},
                  {"id": 11, "title": "Remedies Ahead", "year": 2013, "price": 11.5, "band": 1}
                ]

                """)
    }

    @Test func printsDatesAsISO8601AndURLsAsStrings() async throws {
        let outcome = try await query("--entity", "Band", "--where", "name ==[cd] 'sigur ros'", "--format", "json")
        #expect(
            outcome.stdout.contains(
                #"{"id": 2, "name": "Sigur Rós", "founded": "1994-08-01T00:00:00Z", "url": "https://sigur-ros.example", "country": "IS"}"#
            ))
        let parsed = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [[String: Any]]
        #expect(parsed?.count == 1)
    }

    @Test func countPrintsTheNumberAlone() async throws {
        #expect(try await query("--entity", "Track", "--count").stdout == "28\n")
        #expect(
            try await query("--entity", "Track", "--where", "ANY album.band.country == 'US'", "--count").status == 1)
        #expect(
            try await query("--entity", "Track", "--where", "album.band.country == 'US'", "--count").stdout == "10\n")
        #expect(try await query("--entity", "Album", "--count", "--limit", "3", "--offset", "10").stdout == "2\n")
    }

    @Test func aDescendingSortIsAValueNotAnOption() async throws {
        let spaced = try await query("--entity", "Album", "--sort", "-year,title", "--limit", "2", "--format", "json")
        #expect(spaced.status == 0, "\(spaced.stderr)")
        let joined = try await query("--entity", "Album", "--sort=-year,title", "--limit", "2", "--format", "json")
        #expect(spaced.stdout == joined.stdout)
        let first = spaced.stdout.split(separator: "\n").dropFirst().first ?? ""
        #expect(first.hasPrefix(#"  {"id": 52, "title": "HEY WHAT", "year": 2021"#), "\(spaced.stdout)")
    }

    @Test func printsATable() async throws {
        let outcome = try await query("--entity", "Band", "--sort", "name[c]", "--limit", "2")
        let lines = outcome.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[0].hasPrefix("id  name"))
        #expect(lines[2].hasPrefix("5   Low"))
        #expect(lines[3].hasPrefix("3   Mötley Crüe"))
    }

    @Test func badPredicatePointsAtTheProblem() async throws {
        let outcome = try await query("--entity", "Album", "--where", "year == AND title == 'x'")
        #expect(outcome.status == 1)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.contains("error: --where: offset 8: expected a key path, a value"))
        #expect(outcome.stderr.contains("  year == AND title == 'x'\n          ^"))
    }

    @Test func typeErrorsAndUnknownNamesAreExplained() async throws {
        let mismatch = try await query("--entity", "Album", "--where", "year == 'nineteen'")
        #expect(mismatch.status == 1)
        #expect(mismatch.stderr.contains("integer 'year' is compared with string \"nineteen\""))
        let entity = try await query("--entity", "Albums")
        #expect(entity.stderr == "error: unknown entity 'Albums' — did you mean 'Album'?\n")
        let sort = try await query("--entity", "Album", "--sort", "yaer")
        #expect(sort.stderr.contains("sortDescriptors[0]: entity 'Album' has no attribute or relationship 'yaer'"))
    }

    @Test func badFlagsGetUsageHelp() async throws {
        let outcome = try await CommandRunner.run(["query", "--entity", "Album", "--limit", "many"])
        #expect(outcome.status != 0)
        #expect(outcome.stderr.contains("--limit"))
        let unknown = try await CommandRunner.run(["frobnicate"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("frobnicate"))
    }

    @Test func badFilesNameTheFileAndPlace() async throws {
        let directory = TemporaryFolder.make("storechain-cli")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let model = directory.appending(path: "bad.model.yml")
        try Data("entities:\n  Band:\n    key: id\n    attributes: { id: integer, name: strng }\n".utf8).write(
            to: model)
        let badModel = try await CommandRunner.run([
            "query", "--model", model.path, "--data", "x.json", "--entity", "Band",
        ])
        #expect(badModel.status == 1)
        #expect(badModel.stderr.contains("\(model.path):4:"))
        #expect(badModel.stderr.contains("unknown attribute type 'strng' — did you mean 'string'?"))

        let data = directory.appending(path: "bad.json")
        try Data("{\"Band\": [{\"id\": 1, \"name\": \"x\", \"founded\": \"someday\"}]}".utf8).write(to: data)
        let badData = try await CommandRunner.run([
            "query", "--model", "Examples/Music/music.model.yml", "--data", data.path, "--entity", "Band",
        ])
        #expect(badData.status == 1)
        #expect(badData.stderr.contains("\(data.path): $.Band[0].founded: cannot read string \"someday\" as date"))

        let missing = try await CommandRunner.run([
            "query", "--model", "Examples/Music/music.model.yml", "--data", "nope.json", "--entity", "Band",
        ])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("nope.json: cannot read the data file"))
    }
}
