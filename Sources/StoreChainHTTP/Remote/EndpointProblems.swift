import StoreChain

/// What is wrong with one fetch endpoint's declaration, against its own template and the model:
/// a binding of a variable the template does not have, a binding or sort key path the model does
/// not have, a template variable nothing fills, a paging or sort variable missing from the
/// template. Each mistake used to pass validation and then quietly cost requests (a filter never
/// pushed) or loop on one page (a cursor never sent); each is now located at its key path under
/// the options, with the names it could have meant.
enum EndpointProblems {
    /// The problems of `endpoint`, the fetch endpoint at `path` (`entities.Track.fetch[0]`) of
    /// `entity`; none when its template does not parse (that is reported on its own).
    static func problems(
        of endpoint: RemoteEndpoint, at path: String, entity: EntityDescription, model: ObjectModel
    ) -> [StoreChainError] {
        guard let template = try? RequestTemplate(endpoint.request) else { return [] }
        let variables = template.variables
        var problems: [StoreChainError] = []
        for (variable, binding) in endpoint.bind.sorted(by: { $0.key < $1.key }) {
            if !variables.contains(variable) {
                problems.append(
                    StoreChainError(
                        .invalidRequest,
                        "the binding {\(variable)} names a variable '\(endpoint.request)' does not have",
                        at: .init(path: "\(path).bind.\(variable)"),
                        suggestion: Suggestion.didYouMean(variable, in: variables)))
            }
            if let problem = keyPathProblem(binding.keyPath, of: entity, in: model, what: "the binding {\(variable)}") {
                problems.append(problem.located(.init(path: "\(path).bind.\(variable)")))
            }
        }
        problems += pagingProblems(endpoint.paging, of: template, at: "\(path).paging")
        if let sort = endpoint.sort {
            if !variables.contains(sort.variable) {
                problems.append(
                    StoreChainError(
                        .invalidRequest, "the sort variable {\(sort.variable)} is not in '\(endpoint.request)'",
                        at: .init(path: "\(path).sort.variable"),
                        suggestion: Suggestion.didYouMean(sort.variable, in: variables)))
            }
            for descriptors in sort.values.keys.sorted() {
                for descriptor in descriptors.split(separator: ",").map(String.init) {
                    let keyPath = (try? FetchSortDescriptor(parsing: descriptor))?.keyPath ?? descriptor
                    let what = "the sort value '\(descriptor)'"
                    if let problem = keyPathProblem(keyPath, of: entity, in: model, what: what) {
                        problems.append(problem.located(.init(path: "\(path).sort.values.\(descriptors)")))
                    }
                }
            }
            for field in sort.fields.keys.sorted() {
                if let problem = keyPathProblem(field, of: entity, in: model, what: "the sort field '\(field)'") {
                    problems.append(problem.located(.init(path: "\(path).sort.fields")))
                }
            }
            if sort.separator != nil, sort.fields[entity.key] == nil {
                problems.append(
                    StoreChainError(
                        .invalidRequest,
                        "the sort grammar's fields do not name the key '\(entity.key)': every sort ends with it, so "
                            + "none would be pushed",
                        at: .init(path: "\(path).sort.fields"),
                        suggestion: "add \(entity.key) to the fields (the backend's tie-break)"))
            }
        }
        for (index, grammar) in endpoint.filters.enumerated() {
            let at = endpoint.filters.count == 1 ? "\(path).filter.fields" : "\(path).filter[\(index)].fields"
            for keyPath in grammar.fields.keys.sorted() {
                if let problem = keyPathProblem(keyPath, of: entity, in: model, what: "the filter field '\(keyPath)'") {
                    problems.append(problem.located(.init(path: at)))
                }
            }
        }
        // A variable with no binding filters its same-named attribute for equality.
        let filled = Set(endpoint.bind.keys).union(QueryPlanner.pagingVariables(endpoint.paging)).union(
            endpoint.sort.map { [$0.variable] } ?? []
        )
        .union(entity.attributes.map(\.name))
        for variable in variables where !filled.contains(variable) {
            problems.append(
                StoreChainError(
                    .invalidPipeline,
                    "{\(variable)} in '\(endpoint.request)' is never filled: it is not bound, not a paging or sort "
                        + "variable, and '\(entity.name)' has no attribute of that name",
                    at: .init(path: "\(path).request"),
                    suggestion: "bind it (bind: { \(variable): KEY-PATH }) or remove it"
                        + (Suggestion.closest(to: variable, in: Array(filled)).map { " (did you mean '\($0)'?)" } ?? "")
                ))
        }
        return problems
    }

    /// The variables of a paging style the template must have (a page size it may leave out).
    /// The paging variables of `paging` that `template` (an endpoint's or a relationship's, whose
    /// `paging` is at `path`) does not have: pages asked for with them would all be the first.
    static func pagingProblems(_ paging: Paging?, of template: RequestTemplate, at path: String) -> [StoreChainError] {
        let variables = template.variables
        return requiredPagingVariables(paging).filter { !variables.contains($0) }.map { variable in
            StoreChainError(
                .invalidRequest, "the paging variable {\(variable)} is not in '\(template.text)'",
                at: .init(path: path),
                suggestion: "add {\(variable)} to the request where the backend takes it, or name in the paging "
                    + "options the variable the request has"
                    + (Suggestion.closest(to: variable, in: variables).map { " (did you mean '\($0)'?)" } ?? ""))
        }
    }

    private static func requiredPagingVariables(_ paging: Paging?) -> [String] {
        switch paging {
        case .pages(let page, _, _, _)?: [page]
        case .offset(let offset, _, _)?: [offset]
        case .cursor?: QueryPlanner.pagingVariables(paging)
        case .link?, nil: []
        }
    }

    /// Why `keyPath` does not lead from `entity` to a value, or `nil` when it does.
    private static func keyPathProblem(
        _ keyPath: String, of entity: EntityDescription, in model: ObjectModel, what: String
    ) -> StoreChainError? {
        do throws(StoreChainError) {
            _ = try ResolvedKeyPath(keyPath.split(separator: ".").map(String.init), from: entity, in: model)
            return nil
        } catch {
            return StoreChainError(
                .unknownKeyPath, "\(what) reads '\(keyPath)' of \(entity.name): \(error.message)",
                suggestion: error.suggestion)
        }
    }
}
