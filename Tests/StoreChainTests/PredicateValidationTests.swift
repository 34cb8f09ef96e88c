import Foundation
@_spi(Internals) import StoreChain
import Testing

/// Requests that do not fit the model fail before any work, saying what and where.
@Suite struct PredicateValidationTests {
    let model: ObjectModel

    init() throws {
        model = try Fixtures.model()
    }

    @Test(arguments: [
        (
            "Album", "year == \"1990\"", StoreChainError.Code.typeMismatch,
            "integer 'year' is compared with string \"1990\""
        ),
        ("Album", "title > 5", .typeMismatch, "compared with integer 5"),
        ("Album", "yaer > 1990", .unknownKeyPath, "did you mean 'year'?"),
        ("Album", "band.nmae == 'x'", .unknownKeyPath, "entity 'Band' has no attribute or relationship 'nmae'"),
        ("Album", "title.length == 1", .unknownKeyPath, "continues after attribute 'Album.title'"),
        ("Band", "albums.year > 1990", .typeMismatch, "say ANY, ALL or NONE before it"),
        ("Band", "ANY name == 'x'", .typeMismatch, "ANY needs a key path through a to-many relationship"),
        ("Band", "albums == nil", .typeMismatch, "a to-many relationship cannot be compared directly"),
        ("Album", "band == 1", .typeMismatch, "a to-one relationship can only be compared with nil"),
        ("Album", "year IN 1990", .typeMismatch, "IN needs an array on the right"),
        ("Album", "year BETWEEN {1990}", .typeMismatch, "BETWEEN needs exactly two values"),
        ("Album", "year IN {1990, 'x'}", .typeMismatch, "compared with string \"x\""),
        ("Album", "year BEGINSWITH '19'", .typeMismatch, "BEGINSWITH applies to strings"),
        ("Album", "title MATCHES '(['", .typeMismatch, "not a valid regular expression"),
        ("Album", "title LIKE band.name", .typeMismatch, "LIKE needs a string pattern on the right"),
        ("Album", "year ==[c] 1990", .typeMismatch, "options [c] and [d] apply to strings"),
        ("Band", "founded > 'yesterday'", .typeMismatch, "\"yesterday\" cannot be read as date"),
        ("Band", "name.@count > 1", .typeMismatch, "@count needs a to-many relationship"),
        ("Band", "albums.@sum.title > 1", .typeMismatch, "@sum needs a numeric attribute"),
        ("Album", "1 == 'x'", .typeMismatch, "compared with"),
        ("Album", "ANY band.name == 'x'", .typeMismatch, "ANY needs a key path through a to-many"),
        ("Band", "name == ANY albums.title", .unknownKeyPath, "ANY"),
    ])
    func rejectsBadPredicates(
        _ entity: String, _ format: String, _ code: StoreChainError.Code, _ fragment: String
    ) throws {
        guard let predicate = try? FetchPredicate(format: format) else {
            // Some of these are already syntax errors; that is a clear error too.
            #expect(format.contains("ANY albums.title"))
            return
        }
        let error = #expect(throws: StoreChainError.self) {
            try FetchPlan(FetchRequest(entity: entity, predicate: predicate), model: model)
        }
        #expect(error?.code == code, "\(error?.description ?? "")")
        #expect(error?.description.contains(fragment) == true, "\(error?.description ?? "")")
        #expect(error?.location?.path == "predicate")
    }

    @Test func bindsStringConstantsToDatesUUIDsAndURLs() throws {
        let plan = try FetchPlan(
            FetchRequest(entity: "Band", predicate: FetchPredicate("founded > '2000-01-01'")), model: model)
        #expect(plan.predicate?.predicate.format == "founded > CAST(-31622400.0, \"NSDate\")")
    }

    @Test func rejectsBadRequests() throws {
        let unknownEntity = #expect(throws: StoreChainError.self) {
            try FetchPlan(FetchRequest(entity: "Albm"), model: model)
        }
        #expect(unknownEntity?.description == "unknown entity 'Albm' — did you mean 'Album'?")

        let badSort = #expect(throws: StoreChainError.self) {
            try FetchPlan(FetchRequest(entity: "Album", sortDescriptors: [FetchSortDescriptor("yr")]), model: model)
        }
        #expect(badSort?.location?.path == "sortDescriptors[0]")

        let toManySort = #expect(throws: StoreChainError.self) {
            try FetchPlan(
                FetchRequest(entity: "Band", sortDescriptors: [FetchSortDescriptor("albums.year")]), model: model)
        }
        #expect(toManySort?.message.contains("goes through a to-many relationship") == true)

        let caseSortOnNumber = #expect(throws: StoreChainError.self) {
            try FetchPlan(
                FetchRequest(entity: "Album", sortDescriptors: [FetchSortDescriptor("year", caseInsensitive: true)]),
                model: model)
        }
        #expect(caseSortOnNumber?.code == .typeMismatch)

        #expect(throws: StoreChainError.self) {
            try FetchPlan(FetchRequest(entity: "Album", fetchLimit: -1), model: model)
        }
        #expect(throws: StoreChainError.self) {
            try FetchPlan(FetchRequest(entity: "Album", fetchOffset: -3), model: model)
        }

        let prefetch = #expect(throws: StoreChainError.self) {
            try FetchPlan(FetchRequest(entity: "Band", relationshipKeyPathsForPrefetching: ["name"]), model: model)
        }
        #expect(prefetch?.location?.path == "relationshipKeyPathsForPrefetching[0]")

        let dictionary = #expect(throws: StoreChainError.self) {
            try FetchPlan(
                FetchRequest(entity: "Album", resultType: .dictionaries(["title", "band.nam"])), model: model)
        }
        #expect(dictionary?.location?.path == "resultType.dictionaries[1]")
        #expect(dictionary?.suggestion == "did you mean 'name'?")
    }

    @Test func sortDescriptorCommandLineForm() throws {
        #expect(try FetchSortDescriptor(parsing: "-year") == FetchSortDescriptor("year", ascending: false))
        #expect(
            try FetchSortDescriptor(parsing: "band.name[c]") == FetchSortDescriptor("band.name", caseInsensitive: true))
        #expect(try FetchSortDescriptor(parsing: "+title").description == "title")
        #expect(throws: StoreChainError.self) { try FetchSortDescriptor(parsing: "-") }
        #expect(throws: StoreChainError.self) { try FetchSortDescriptor(parsing: "a..b") }
    }
}
