import Foundation
import Testing

/// Help texts read as paragraphs at the usual 80 columns: no sentence is broken after a few
/// words (`explain --help` once wrapped "is pushed / down"), and no line runs past the width.
@Suite struct HelpTextTests {
    @Test(arguments: ["query", "save", "explain", "validate", "cache", "outbox", "demo", "serve-demo", "watch"])
    func helpWrapsAsParagraphs(command: String) async throws {
        let help = try await CommandRunner.run([command, "--help"], environment: ["COLUMNS": "80"])
        #expect(help.status == 0, "\(help.stderr)")
        let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for line in lines where !line.hasPrefix("USAGE:") {
            #expect(line.count <= 80, "\(command) --help: a line past 80 columns: \(line)")
        }
        // A prose line followed by more of the same paragraph was wrapped: it fills the width.
        let overview = lines.prefix { !$0.hasPrefix("USAGE:") }
        for (line, next) in zip(overview, overview.dropFirst()) {
            let prose = !line.isEmpty && !line.hasPrefix(" ")
            let continues = !next.isEmpty && !next.hasPrefix(" ")
            if prose && continues {
                #expect(line.count >= 60, "\(command) --help breaks a sentence after '\(line)'")
            }
        }
    }

    /// `serve-demo --help` names every API it serves and says which answers `--latency` delays.
    @Test func serveDemoHelpNamesItsAPIsAndWhatLatencyDelays() async throws {
        let help = try await CommandRunner.run(["serve-demo", "--help"], environment: ["COLUMNS": "200"])
        #expect(help.stdout.contains("(v1, v2 and v3 APIs)"), "\(help.stdout)")
        #expect(help.stdout.contains("Delay every GET"), "\(help.stdout)")
    }
}
