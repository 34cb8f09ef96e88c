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
    /// ``Code/invalidModel``, for `catch StoreChainError.invalidModel`.
    public static var invalidModel: Code { .invalidModel }
    /// ``Code/unreadableFile``, for `catch StoreChainError.unreadableFile`.
    public static var unreadableFile: Code { .unreadableFile }
    /// ``Code/malformedJSON``, for `catch StoreChainError.malformedJSON`.
    public static var malformedJSON: Code { .malformedJSON }
    /// ``Code/predicateSyntax``, for `catch StoreChainError.predicateSyntax`.
    public static var predicateSyntax: Code { .predicateSyntax }
    /// ``Code/unknownEntity``, for `catch StoreChainError.unknownEntity`.
    public static var unknownEntity: Code { .unknownEntity }
    /// ``Code/unknownKeyPath``, for `catch StoreChainError.unknownKeyPath`.
    public static var unknownKeyPath: Code { .unknownKeyPath }
    /// ``Code/typeMismatch``, for `catch StoreChainError.typeMismatch`.
    public static var typeMismatch: Code { .typeMismatch }
    /// ``Code/invalidRequest``, for `catch StoreChainError.invalidRequest`.
    public static var invalidRequest: Code { .invalidRequest }
    /// ``Code/invalidData``, for `catch StoreChainError.invalidData`.
    public static var invalidData: Code { .invalidData }
    /// ``Code/invalidResponse``, for `catch StoreChainError.invalidResponse`.
    public static var invalidResponse: Code { .invalidResponse }
    /// ``Code/saveFailed``, for `catch StoreChainError.saveFailed`.
    public static var saveFailed: Code { .saveFailed }
    /// ``Code/httpStatus``, for `catch StoreChainError.httpStatus`.
    public static var httpStatus: Code { .httpStatus }
    /// ``Code/conflict``, for `catch StoreChainError.conflict`.
    public static var conflict: Code { .conflict }
    /// ``Code/backendUnavailable``, for `catch StoreChainError.backendUnavailable`.
    public static var backendUnavailable: Code { .backendUnavailable }
    /// ``Code/transport``, for `catch StoreChainError.transport`.
    public static var transport: Code { .transport }
    /// ``Code/noEndpoint``, for `catch StoreChainError.noEndpoint`.
    public static var noEndpoint: Code { .noEndpoint }
    /// ``Code/badRecord``, for `catch StoreChainError.badRecord`.
    public static var badRecord: Code { .badRecord }
    /// ``Code/timedOut``, for `catch StoreChainError.timedOut`.
    public static var timedOut: Code { .timedOut }
    /// ``Code/unavailable``, for `catch StoreChainError.unavailable`.
    public static var unavailable: Code { .unavailable }
    /// ``Code/notCached``, for `catch StoreChainError.notCached`.
    public static var notCached: Code { .notCached }
    /// ``Code/offlineNotCached``, for `catch StoreChainError.offlineNotCached`.
    public static var offlineNotCached: Code { .offlineNotCached }
    /// ``Code/rateLimited``, for `catch StoreChainError.rateLimited`.
    public static var rateLimited: Code { .rateLimited }
    /// ``Code/cacheFile``, for `catch StoreChainError.cacheFile`.
    public static var cacheFile: Code { .cacheFile }
    /// ``Code/invalidPipeline``, for `catch StoreChainError.invalidPipeline`.
    public static var invalidPipeline: Code { .invalidPipeline }
    /// ``Code/tooManyPages``, for `catch StoreChainError.tooManyPages`.
    public static var tooManyPages: Code { .tooManyPages }
    /// ``Code/storeFile``, for `catch StoreChainError.storeFile`.
    public static var storeFile: Code { .storeFile }
    /// ``Code/incompleteData``, for `catch StoreChainError.incompleteData`.
    public static var incompleteData: Code { .incompleteData }
}
