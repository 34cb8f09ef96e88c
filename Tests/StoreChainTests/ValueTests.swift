import Foundation
import StoreChain
import Testing

@Suite struct ValueTests {
    @Test(arguments: [
        ("2001-01-01", 978_307_200.0),
        ("1970-01-01T00:00:00Z", 0),
        ("2024-02-29T12:30:15Z", 1_709_209_815),
        ("2024-02-29T12:30:15.250Z", 1_709_209_815.25),
        ("2024-02-29T14:30:15+02:00", 1_709_209_815),
        ("2024-02-29T07:30:15-0500", 1_709_209_815),
        ("1969-12-31T23:59:59Z", -1),
        ("1900-03-01T00:00:00Z", -2_203_891_200),
    ])
    func parsesISO8601(_ text: String, _ seconds: Double) throws {
        let date = try #require(ISO8601.parse(text))
        #expect(date.timeIntervalSince1970 == seconds)
    }

    @Test(arguments: [
        "2023-02-29", "2024-13-01", "2024-01-32", "2024-01-01T25:00Z", "2024-01-01T10:00", "yesterday", "2024-1-1", "",
    ])
    func rejectsInvalidISO8601(_ text: String) {
        #expect(ISO8601.parse(text) == nil)
    }

    @Test func formatsISO8601InUTC() {
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1_709_209_815)) == "2024-02-29T12:30:15Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1_709_209_815.25)) == "2024-02-29T12:30:15.250Z")
        #expect(ISO8601.format(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
        for seconds in stride(from: -3e9, through: 3e9, by: 7_777_777.5) {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(ISO8601.parse(ISO8601.format(date)) == date)
        }
    }

    @Test func coercesWhatBackendsSend() throws {
        #expect(try Value.coerce(.string("42"), to: .integer) == 42)
        #expect(try Value.coerce(.double(42), to: .integer) == 42)
        #expect(try Value.coerce(.string("4.5"), to: .double) == 4.5)
        #expect(try Value.coerce(.integer(4), to: .double) == 4.0)
        #expect(try Value.coerce(.double(19.99), to: .decimal) == .decimal(Decimal(string: "19.99")!))
        #expect(try Value.coerce(.string("true"), to: .boolean) == true)
        #expect(try Value.coerce(.integer(0), to: .boolean) == false)
        #expect(try Value.coerce(.integer(86_400), to: .date) == .date(Date(timeIntervalSince1970: 86_400)))
        #expect(try Value.coerce(.string("86400"), to: .date) == .date(Date(timeIntervalSince1970: 86_400)))
        #expect(try Value.coerce(.string("1970-01-02"), to: .date) == .date(Date(timeIntervalSince1970: 86_400)))
        #expect(try Value.coerce(.integer(7), to: .string) == "7")
        #expect(try Value.coerce(.string("AQID"), to: .data) == .data(Data([1, 2, 3])))
        #expect(try Value.coerce(.object(["a": .null]), to: .json) == .json(.object(["a": .null])))
        #expect(try Value.coerce(.null, to: .integer) == .null)
    }

    @Test(arguments: [
        (JSONValue.string("forty-two"), AttributeType.integer, "cannot read string \"forty-two\" as integer"),
        (.double(4.5), .integer, "cannot read number 4.5 as integer"),
        (.bool(true), .string, "cannot read boolean true as string"),
        (.string("maybe"), .boolean, "expected true/false"),
        (.string("last tuesday"), .date, "expected an ISO-8601 string"),
        (.string("not-a-uuid"), .uuid, "expected a UUID string"),
        (.string("%%%"), .data, "expected a base64 string"),
        (.array([]), .double, "cannot read array [] as double"),
        (.string(""), .url, "expected a URL string"),
    ])
    func coercionFailuresSayWhatWasExpected(_ json: JSONValue, _ type: AttributeType, _ fragment: String) {
        let error = #expect(throws: StoreChainError.self) { try Value.coerce(json, to: type) }
        #expect(error?.code == .invalidData)
        #expect(error?.description.contains(fragment) == true, "\(error?.description ?? "")")
    }

    @Test func predicateComparisonCrossesNumericTypes() {
        #expect(Value.predicateEqual(.integer(10), .double(10)))
        #expect(Value.predicateEqual(.decimal(10), .integer(10)))
        #expect(!Value.predicateEqual(.null, .integer(0)))
        #expect(Value.predicateEqual(.null, .null))
        #expect(Value.predicateCompare(.integer(2), .double(2.5)) == -1)
        #expect(Value.predicateCompare(.null, .integer(1)) == nil)
        #expect(Value.predicateCompare(.string("a"), .integer(1)) == nil)
        // Literal comparison, as NSString and SQLite BINARY: precomposed é is not e + accent.
        #expect(!Value.predicateEqual(.string("\u{E9}"), .string("e\u{301}")))
    }

    @Test func codableRoundTrip() throws {
        let values: [Value] = [
            .null, "s", 1, 2.5, .decimal(Decimal(string: "3.25")!), true, .date(Date(timeIntervalSince1970: 5)),
            .data(Data([9])), .uuid(UUID()), .url(URL(string: "https://x.example")!), .json(.array([.integer(1)])),
        ]
        let data = try JSONEncoder().encode(values)
        #expect(try JSONDecoder().decode([Value].self, from: data) == values)
    }

    @Test func objectIDs() {
        let permanent = ObjectID(entity: "Band", key: 7)
        #expect(permanent.description == "Band/7")
        #expect(!permanent.isTemporary)
        #expect(permanent.key == 7)
        let temporary = ObjectID.temporary(entity: "Band")
        #expect(temporary.isTemporary)
        #expect(temporary.key == nil)
        #expect(temporary != ObjectID.temporary(entity: "Band"))
        #expect(temporary.description.hasPrefix("Band/temp:"))
    }
}
