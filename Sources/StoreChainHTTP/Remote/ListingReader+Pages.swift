import Foundation
@_spi(Internals) import StoreChain

/// Where a listing's pages are, for every paging style: the one place that fills a page's
/// paging variables and says where the next page is, for a page a pager asks for, a
/// relationship's own list and an unpaged endpoint's one document alike.
extension ListingReader {
    /// Where one page of a listing is.
    struct PageAddress {
        var url: URL
        var style: PageInfo.Style
        /// The records a page holds as asked (0 for a link, whose pages are as the backend sends).
        var size: Int
        /// The listing's record the page starts at (0 for pages after a continuation).
        var start: Int
        /// Asked for by position after the first page: the backend may answer that it is past
        /// the listing's last (`ListingReader.pastTheEnd`).
        var mayBePastTheEnd: Bool
    }

    /// The page at `position` (of `size` records, the style's own size when `nil`) of a listing
    /// paged as `paging`, whose template's other variables take `values`.
    func pageAddress(
        _ position: PageRequest.Position, size asked: Int?, paging: Paging, template: RequestTemplate,
        endpoint: String, values: [String: String]
    ) throws(StoreChainError) -> PageAddress {
        var values = values
        var link: URL?
        let style: PageInfo.Style
        var size: Int
        var start = 0
        switch (paging, position) {
        case (.pages(let variable, let perPage, let defaultSize, let first), .record(let record)):
            style = .pageNumber
            size = max(1, asked ?? defaultSize)
            start = record / size * size
            values[variable] = String(first + record / size)
            values[perPage] = String(size)
        case (.offset(let offset, let limit, let defaultSize), .record(let record)):
            style = .offset
            size = max(1, asked ?? defaultSize)
            start = record
            values[offset] = String(record)
            values[limit] = String(size)
        case (.cursor(let variable, _, let limit, let defaultSize), let position):
            style = .cursor
            size = limit == nil ? defaultSize : max(1, asked ?? defaultSize)
            if let limit { values[limit] = String(size) }
            if case .token(let cursor) = position { values[variable] = cursor }
        case (.link, let position):
            style = .link
            size = 0
            if case .token(let next) = position { link = try resolve(next, against: options.baseURL) }
        case (.pages, .token(let token)), (.offset, .token(let token)):
            throw StoreChainError(
                .invalidRequest, "'\(endpoint)' pages by position, not by the token '\(token)'",
                suggestion: "ask for a page of an offset or page-number endpoint by record position")
        }
        let url: URL
        if let link { url = link } else { url = try template.url(base: options.baseURL, values: values) }
        return PageAddress(
            url: url, style: style, size: size,
            start: start, mayBePastTheEnd: start > 0 && paging.pagesByPosition)
    }

    /// Where the page after one of `records` (from `start`, asked of `size`) is, `nil` when it is
    /// the last, and the size its pages are: a backend that caps the limit sends pages as large as
    /// it sends, and a link's pages are as large as the backend makes them. An end guessed from a
    /// short page is checked against what the body says (`UndeclaredPaging.checkGuessedEnd`).
    func following(
        _ signals: PagingFacts.Signals, body: JSONValue?, from url: URL, paging: Paging, start: Int, size: Int,
        records: [JSONValue], recordsPath: String?, endpoint: String
    ) throws(StoreChainError) -> (next: PageRequest.Position?, size: Int) {
        var next: PageRequest.Position?
        var size = size
        if !records.isEmpty, let body {
            switch paging {
            case .pages, .offset:
                if signals.continues(afterRecords: records.count, from: start, size: size) {
                    // A backend that caps the limit: the next page starts after the records received.
                    if case .offset = paging, records.count < size { size = records.count }
                    next = .record(start + size)
                }
            case .cursor(_, let place, let limit, _):
                next = try nextCursor(
                    at: place, in: body, records: records, recordsPath: recordsPath, signals: signals,
                    readBefore: start, size: limit == nil ? nil : size, source: RemoteError.redacted(url)
                ).map { .token($0) }
            case .link:
                // Resolved against this page: a body's link may be relative to it.
                if signals.hasMore != false, let link = signals.next {
                    next = .token(try resolve(link, against: url).absoluteString)
                }
            }
        }
        if paging == .link { size = records.count }
        if next == nil, paging.guessesEnd, !signals.isStated, let body {
            try UndeclaredPaging.checkGuessedEnd(
                body, records: start + records.count, endpoint: endpoint, source: RemoteError.redacted(url))
        }
        return (next, size)
    }

    /// The next page's cursor, from a page of `records` (found at `recordsPath` in `body`, after
    /// `readBefore` records), or `nil` when it is the last: a more-pages flag that is false, an
    /// empty page, no cursor at `place` (missing, null or empty); for a cursor that is the last
    /// record's key, also a stated total reached or, where nothing is stated, a page shorter than
    /// the `size` asked (`Paging.guessesEnd`).
    ///
    /// - Throws: `.badRecord` naming the URL and JSON path when the cursor is neither a string
    ///   nor an integer.
    func nextCursor(
        at place: Paging.CursorPlace, in body: JSONValue, records: [JSONValue], recordsPath: String?,
        signals: PagingFacts.Signals, readBefore: Int, size: Int?, source: String
    ) throws(StoreChainError) -> String? {
        guard signals.hasMore != false, let last = records.last else { return nil }
        let value: JSONValue?
        let path: String
        switch place {
        case .body(let cursorPath):
            value = JSONPath.value(at: cursorPath, in: body)
            path = "$.\(cursorPath)"
        case .lastRecord(let field):
            // Without a limit asked, a page of any size may have a successor.
            guard signals.continues(afterRecords: records.count, from: readBefore, size: size ?? 1) else {
                return nil
            }
            value = JSONPath.value(at: field, in: last)
            path = "$" + (recordsPath.map { ".\($0)" } ?? "") + "[\(records.count - 1)].\(field)"
        }
        switch value {
        case nil, .null?: return nil
        case .string(let cursor)?: return cursor.isEmpty ? nil : cursor
        case .integer(let number)?: return String(number)
        case let other?:
            throw StoreChainError(
                .badRecord, "the next-page cursor is \(other.typeName), not a string or an integer",
                at: .init(file: source, path: path),
                suggestion: "point the endpoint's cursor option at the field that holds the next cursor")
        }
    }
}
