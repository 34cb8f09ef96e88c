import Foundation
import StoreChain
import StoreChainHTTP
import Testing

@Suite struct RequestTemplateTests {
    let base = URL(string: "https://api.example/v2")!

    @Test func fillsPathAndQueryAndLeavesOutUnboundQueryItems() throws {
        let template = try RequestTemplate("GET /bands/{id}/albums?sort={sort}&format=json&year={year}")
        #expect(template.method == "GET")
        #expect(template.pathVariables == ["id"])
        #expect(template.queryVariables == ["sort", "year"])
        let url = try template.url(base: base, values: ["id": "42", "sort": "-year"])
        #expect(url.absoluteString == "https://api.example/v2/bands/42/albums?sort=-year&format=json")
    }

    /// A Django REST Framework backend (APPEND_SLASH) answers `/genres/3` with a redirect to
    /// `/genres/3/`: every request was sent twice, the first unseen by the chain. The slash a
    /// template ends its path with is sent as written.
    @Test(arguments: [
        ("GET /genres/{id}/", "https://api.example/v2/genres/3/"),
        ("GET /genres/?page={page}", "https://api.example/v2/genres/?page=2"),
        ("GET /genres/{id}/tracks/?page={page}", "https://api.example/v2/genres/3/tracks/?page=2"),
        ("GET /genres/{id}", "https://api.example/v2/genres/3"),
        ("GET /", "https://api.example/v2/"),
    ])
    func aTrailingSlashOfThePathIsSentAsWritten(_ text: String, _ expected: String) throws {
        let url = try RequestTemplate(text).url(base: base, values: ["id": "3", "page": "2"])
        #expect(url.absoluteString == expected)
    }

    /// Template text is sent as written where a URL can hold it; a character it cannot hold (a
    /// space, `|`, brackets, a `%` that starts no escape, non-ASCII) is percent-encoded, as any
    /// HTTP client would send it. Before, such a literal in a query value or the path made
    /// Foundation stop the process ("Attempting to set percentEncodedQuery with invalid
    /// characters").
    @Test(arguments: [
        ("GET /albums?fields=title|year", "https://api.example/v2/albums?fields=title%7Cyear"),
        ("GET /search?q=two words&page={page}", "https://api.example/v2/search?q=two%20words&page=2"),
        ("GET /albums?page[number]={page}", "https://api.example/v2/albums?page%5Bnumber%5D=2"),
        ("GET /albums?filter=name eq 'Café'", "https://api.example/v2/albums?filter=name%20eq%20'Caf%C3%A9'"),
        ("GET /albums?q=100%&x=%41", "https://api.example/v2/albums?q=100%25&x=%41"),
        ("GET /a b/{id}/c|d", "https://api.example/v2/a%20b/3/c%7Cd"),
        ("GET /albums?$top=5&@odata.count=true;x=y,z", "https://api.example/v2/albums?$top=5&@odata.count=true;x=y,z"),
    ])
    func literalTextIsSentAsWrittenWhereAURLCanHoldIt(_ text: String, _ expected: String) throws {
        let url = try RequestTemplate(text).url(base: base, values: ["id": "3", "page": "2"])
        #expect(url.absoluteString == expected)
    }

    @Test(arguments: [
        ("../admin", "https://api.example/v2/bands/..%2Fadmin?q=x"),
        ("a/b?c=d&e", "https://api.example/v2/bands/a%2Fb%3Fc%3Dd%26e?q=x"),
        ("Sigur Rós #1", "https://api.example/v2/bands/Sigur%20R%C3%B3s%20%231?q=x"),
    ])
    func hostileValuesCannotChangeThePath(_ value: String, _ expected: String) throws {
        let template = try RequestTemplate("GET /bands/{id}?q={q}")
        #expect(try template.url(base: base, values: ["id": value, "q": "x"]).absoluteString == expected)
        let query = try template.url(base: base, values: ["id": "1", "q": "a&admin=true"])
        #expect(query.absoluteString == "https://api.example/v2/bands/1?q=a%26admin%3Dtrue")
        #expect(URLComponents(url: query, resolvingAgainstBaseURL: false)?.queryItems?.count == 1)
    }

    @Test func rejectsBadTemplatesAndMissingPathValues() throws {
        #expect(throws: StoreChainError.self) { try RequestTemplate("/bands") }
        #expect(throws: StoreChainError.self) { try RequestTemplate("GET /bands/{id") }
        #expect(throws: StoreChainError.self) { try RequestTemplate("GET /bands/{}") }
        let error = #expect(throws: StoreChainError.self) {
            try RequestTemplate("GET /bands/{id}").url(base: base, values: [:])
        }
        #expect(error?.message.contains("no value for {id}") == true)
    }

    @Test func parsesLinkHeaders() throws {
        let header =
            #"<https://api.example/v2/bands?page=3>; rel="next", <https://api.example/v2/bands?page=9>; rel="last""#
        #expect(try LinkHeader.next(in: header) == "https://api.example/v2/bands?page=3")
        #expect(try LinkHeader.parse(header).map(\.relations) == [["next"], ["last"]])
        #expect(try LinkHeader.next(in: #"</p/2>; rel="prev next"; title="x""#) == "/p/2")
        #expect(try LinkHeader.next(in: #"<https://x.example/1>; rel=last"#) == nil)
        #expect(try LinkHeader.next(in: nil) == nil)
        for malformed in [#"https://x.example; rel="next""#, #"<https://x.example>; rel="next"#, #"<a>; rel=next <b>"#]
        {
            let error = #expect(throws: StoreChainError.self) { try LinkHeader.parse(malformed) }
            #expect(error?.message.hasPrefix("malformed Link header") == true)
        }
    }
}
