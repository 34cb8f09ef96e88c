import StoreChain

/// What a listing's body says about more pages when its endpoint declares no paging: a response
/// that announces more records than it holds is never taken for the whole answer (an endpoint
/// paging 50 at a time and saying so only in its JSON was read as its first page, a silent wrong
/// answer). The usual places of the usual frameworks are read: a next link or cursor (Django REST
/// Framework's `next`, JSON:API's `links.next`, HAL's `_links.next.href`, OData's
/// `@odata.nextLink`, …), a `has_more` flag (Stripe), and a total above the records received
/// (`count`, `total`, `meta.pagination.count`, `page.totalElements`, Datasette's
/// `filtered_table_rows_count`, …).
enum UndeclaredPaging {
    /// Body paths of a next page's link or cursor: present and not null or empty, more follows.
    static let nextPaths = [
        "next", "next_url", "nextUrl", "next_page_url", "nextPageToken", "next_cursor", "nextCursor", "links.next",
        "links.next.href", "_links.next.href", "@odata.nextLink", "meta.next", "pagination.next", "paging.next",
    ]
    /// Body paths of a flag that is `true` while more follows.
    static let moreFlags = ["has_more", "hasMore", "meta.has_more", "pagination.has_more"]
    /// Body paths of the whole listing's size.
    static let totalPaths = [
        "count", "total", "totalCount", "total_count", "totalResults", "meta.total", "meta.count", "meta.total_count",
        "meta.pagination.count", "meta.pagination.total", "page.totalElements", "pagination.total",
        "filtered_table_rows_count", "@odata.count",
    ]

    /// Throws when `body`, the last document of a listing, says the listing holds more. Its
    /// `records` count against a total only when it is the listing's only document
    /// (`isWholeListing`; the last page of a `Link` listing holds only the rest). A body whose
    /// records are the whole document (an array) says nothing.
    ///
    /// - Throws: `.incompleteData` naming the endpoint, the URL and the JSON path that said so,
    ///   with how to declare the endpoint's paging.
    static func check(
        _ body: JSONValue, records: Int, isWholeListing: Bool, endpoint: String, source: String
    ) throws(StoreChainError) {
        guard case .object = body,
            let (path, said) = announcement(in: body, records: isWholeListing ? records : nil)
        else { return }
        throw StoreChainError(
            .incompleteData,
            "'\(endpoint)' declares no paging, but its answer says there is more than the \(records) records "
                + "it holds (\(said)); it is not taken for the whole answer",
            at: .init(file: source, path: "$.\(path)"),
            suggestion: "declare how the endpoint pages, with its 'paging' option: page numbers, an offset, or a "
                + "cursor read from the body (see the fetch endpoint options in Docs/Pipelines.md)")
    }

    /// Throws when `body`, a short page that ended a listing paged by position (its page number
    /// or offset, with no stated next link, flag or total), says the listing holds more than
    /// the `records` read up to it: a backend that caps the page size below the one asked for
    /// sends short pages before its last.
    ///
    /// - Throws: `.incompleteData` naming the endpoint, the URL and the JSON path that said so,
    ///   with how to declare where the backend states the listing's end.
    static func checkGuessedEnd(_ body: JSONValue, records: Int, endpoint: String, source: String)
        throws(StoreChainError)
    {
        guard case .object = body, let (path, said) = announcement(in: body, records: records) else { return }
        throw StoreChainError(
            .incompleteData,
            "'\(endpoint)' sent a short page, taken for its last, but its answer says there is more than the "
                + "\(records) records read (\(said)); the backend may send fewer records a page than asked for",
            at: .init(file: source, path: "$.\(path)"),
            suggestion: "say where the backend states how the listing goes on, beside the paging style's options: "
                + "next: \(path) for a next link, total: … for the listing's size, has-more: … for a flag")
    }

    /// The first path that announces more records, with what it holds; totals only when the
    /// records the listing holds are known.
    private static func announcement(in body: JSONValue, records: Int?) -> (path: String, said: String)? {
        for path in nextPaths {
            switch PagingFacts.value(at: path, in: body) {
            case .string(let next)? where !next.isEmpty: return (path, "\(path) is \"\(next)\"")
            case .integer(let next)?: return (path, "\(path) is \(next)")
            default: continue
            }
        }
        for path in moreFlags {
            if case .bool(true)? = PagingFacts.value(at: path, in: body) { return (path, "\(path) is true") }
        }
        for path in totalPaths {
            if let records, case .integer(let total)? = PagingFacts.value(at: path, in: body), total > records {
                return (path, "\(path) is \(total)")
            }
        }
        return nil
    }
}
