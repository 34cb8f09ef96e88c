import Foundation
import StoreChain

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A one-line progress display on stderr for long multi-page fetches, shown only when stderr
/// is a terminal.
final class ProgressLine: Sendable {
    let isVisible = isatty(STDERR_FILENO) == 1
    private let shown = Locked(false)

    func show(_ progress: FetchProgress) {
        guard isVisible, progress.pages > 1 else { return }
        var text = "\r\(progress.entity): \(progress.pages) pages, \(progress.records)"
        if let total = progress.totalRecords, total > 0 {
            let width = 24
            let filled = min(width, progress.records * width / total)
            text +=
                " of \(total) records [" + String(repeating: "#", count: filled)
                + String(repeating: ".", count: width - filled) + "]"
        } else {
            text += " records"
        }
        shown.withLock { $0 = true }
        FileHandle.standardError.write(Data(text.utf8))
    }

    func finish() {
        if shown.withLock({ $0 }) { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
