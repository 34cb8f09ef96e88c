import ArgumentParser

@main
struct StoreChainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storechain",
        abstract: "Use a remote web service as a local object graph.",
        subcommands: [
            QueryCommand.self, SaveCommand.self, ExplainCommand.self, ValidateCommand.self, CacheCommand.self,
            OutboxCommand.self, DemoCommand.self, ServeDemoCommand.self, WatchCommand.self, InspectCommand.self,
        ]
    )
}
