import Foundation
import StoreChain
import StoreChainTesting
import Testing

/// Attributes read and written as Swift types: generic reads the call site types, setters and
/// inserts that take variables, typed accessors on `Value`, and a typed mismatch error.
@Suite struct TypedValuesTests {
    let store: InMemoryStore
    let context: ObjectContext

    init() throws {
        store = try Fixtures.store()
        context = ObjectContext(chain: Chain(handlers: [], terminal: store), model: store.model)
    }

    func album(_ key: Int) -> ManagedObject { context.object(with: ObjectID(entity: "Album", key: .integer(key))) }

    @Test func readsAreTypedByTheCallSite() async throws {
        let album = album(20)
        let title: String = try await album.value("title")
        let year: Int? = try await album.value("year")
        let price: Double = try await album.value("price")
        #expect(title == "Ágætis byrjun" && year == 1999 && price == 12.0)
        let missing: Int? = try await self.album(31).value("year")
        #expect(missing == nil)
    }

    @Test func aValueOfAnotherKindIsATypedMismatchError() async throws {
        let album = album(20)
        let error = await #expect(throws: StoreChainError.self) {
            let _: Int = try await album.value("title")
        }
        #expect(error?.code == .typeMismatch)
        #expect(
            error?.message.contains("Album/20.title holds Ágætis byrjun, which cannot be read as Int") == true,
            "\(String(describing: error))")
        let absent = await #expect(throws: StoreChainError.self) {
            let _: Int = try await self.album(31).value("year")
        }
        #expect(absent?.code == .typeMismatch, "a missing value is not an Int")
    }

    @Test func settersAndInsertsTakeSwiftVariables() async throws {
        let title = "Kveikur"
        let year = 2013
        let price: Double? = nil
        let inserted = try context.insert("Album", values: ["id": 22, "title": title, "year": year, "price": price])
        #expect(inserted.cachedValue("title") == .string("Kveikur"))
        #expect(inserted.cachedValue("year") == .integer(2013))
        #expect(inserted.cachedValue("price") == .null)

        let album = album(20)
        let newTitle = "Ágætis byrjun (remastered)"
        try album.set(newTitle, for: "title")
        try album.set(Optional<Int>.none, for: "year")
        let changedTitle: String = try await album.value("title")
        let changedYear: Int? = try await album.value("year")
        #expect(changedTitle == newTitle && changedYear == nil)

        let error = #expect(throws: StoreChainError.self) { try album.set(year, for: "title") }
        #expect(error?.code == .typeMismatch)
        let kept: String = try await album.value("title")
        #expect(kept == newTitle, "a rejected change leaves the value alone")
    }

    @Test func valuesConvertBothWays() {
        #expect(Value(3) == .integer(3) && Value("x") == .string("x") && Value(Optional<Date>.none) == .null)
        #expect(Value.integer(3).integerValue == 3 && Value.integer(3).doubleValue == 3.0)
        #expect(Value.string("3").integerValue == nil)
        #expect(Value.bool(true).boolValue == true)
        let date = Date(timeIntervalSince1970: 86_400)
        #expect(Value.date(date).dateValue == date && Value.date(date).as(Date.self) == date)
        #expect(Value.url(URL(string: "https://x.example")!).urlValue?.host == "x.example")
        #expect(Value.decimal(Decimal(string: "1.5")!).decimalValue == Decimal(string: "1.5"))
    }
}
