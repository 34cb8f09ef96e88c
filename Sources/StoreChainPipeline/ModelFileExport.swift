// `ModelFile` lives in StoreChainModelFile so that the model plugin's code generator builds
// without this module's HTTP, SQLite and PostgreSQL dependencies; apps reach it from here as
// before.
@_exported import StoreChainModelFile
