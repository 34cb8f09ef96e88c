import Foundation

/// The file that keeps where a change feed stood (`ChangeFeedOptions.cursorFile`): the cursor as
/// its only line, replaced whole on each write.
struct FeedCursorFile {
    let path: String

    /// The cursor kept, `nil` when there is no file yet; `problem` says why a file that exists
    /// could not be used.
    func read() -> (cursor: String?, problem: String?) {
        guard FileManager.default.fileExists(atPath: path) else { return (nil, nil) }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            return (nil, "cannot read the feed's position from \(path)")
        }
        let cursor = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !cursor.isEmpty, !cursor.contains("\n") else {
            return (nil, "\(path) holds no feed position (one line with the cursor)")
        }
        return (cursor, nil)
    }

    /// Writes `cursor` in place of what the file held; a problem, as text, when it cannot.
    func write(_ cursor: String) -> String? {
        let url = URL(filePath: path)
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data((cursor + "\n").utf8).write(to: url, options: .atomic)
            return nil
        } catch {
            return
                "cannot keep the feed's position in \(path) (\(error.localizedDescription)); a restart begins at the feed's current position"
        }
    }
}
