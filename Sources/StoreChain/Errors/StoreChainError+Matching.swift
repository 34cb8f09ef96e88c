extension StoreChainError.Code {
    /// Matches a thrown error by its code, in `catch` clauses and `switch`es, as GRDB's
    /// `catch DatabaseError.SQLITE_BUSY` does:
    ///
    /// ```swift
    /// do { try await context.save() }
    /// catch StoreChainError.rateLimited { … }
    /// catch StoreChainError.saveFailed { … }
    /// ```
    public static func ~= (code: StoreChainError.Code, error: any Error) -> Bool {
        (error as? StoreChainError)?.code == code
    }
}

/// The codes as members of the error itself, so `catch` patterns read `StoreChainError.rateLimited`.
extension StoreChainError {
    public static var invalidModel: Code { .invalidModel }
    public static var unreadableFile: Code { .unreadableFile }
    public static var malformedJSON: Code { .malformedJSON }
    public static var predicateSyntax: Code { .predicateSyntax }
    public static var unknownEntity: Code { .unknownEntity }
    public static var unknownKeyPath: Code { .unknownKeyPath }
    public static var typeMismatch: Code { .typeMismatch }
    public static var invalidRequest: Code { .invalidRequest }
    public static var invalidData: Code { .invalidData }
    public static var invalidResponse: Code { .invalidResponse }
    public static var saveFailed: Code { .saveFailed }
    public static var httpStatus: Code { .httpStatus }
    public static var conflict: Code { .conflict }
    public static var backendUnavailable: Code { .backendUnavailable }
    public static var transport: Code { .transport }
    public static var noEndpoint: Code { .noEndpoint }
    public static var badRecord: Code { .badRecord }
    public static var timedOut: Code { .timedOut }
    public static var unavailable: Code { .unavailable }
    public static var notCached: Code { .notCached }
    public static var rateLimited: Code { .rateLimited }
    public static var cacheFile: Code { .cacheFile }
    public static var invalidPipeline: Code { .invalidPipeline }
    public static var tooManyPages: Code { .tooManyPages }
    public static var storeFile: Code { .storeFile }
    public static var incompleteData: Code { .incompleteData }
}
