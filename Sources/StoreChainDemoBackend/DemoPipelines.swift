/// Pipeline files for the demo backend (the same text as `Examples/Bandcamp/v1.pipeline.yml`,
/// `v2.pipeline.yml` and `v3.pipeline.yml`; a test keeps them in step). The backend's address comes from the
/// environment variable `STORECHAIN_DEMO_URL`, such as `http://127.0.0.1:8080`.
public enum DemoPipelines {
    /// The dump-only v1 API behind a memory and a disk cache.
    public static let v1 = """
        # The dump-only v1 API: one document holds everything, so cache it and answer locally.
        model: music.model.yml
        handlers:
          - logging: { level: debug }
          - memory-cache: { ttl: 5m }
          - disk-cache: { path: cache/v1.sqlite, ttl: 1h, stale-while-revalidate: 1d, max-size: 200MB }
          - retry: { attempts: 4, base-delay: 100ms }
        terminal:
          remote:
            base-url: ${STORECHAIN_DEMO_URL}
            entities:
              Band: { records: catalog.bands, fetch: [GET /v1/catalog] }
              Album:
                records: catalog.albums
                relationships: { band: { foreign-key: band } }
                fetch: [GET /v1/catalog]
              Track:
                records: catalog.tracks
                relationships: { album: { foreign-key: album } }
                fetch: [GET /v1/catalog]

        """

    /// The v2 API with search, paging and a batch endpoint, behind the whole set of handlers.
    public static let v2 = """
        # The v2 API: search, get by key, batch get, page numbers with Link headers, cursors.
        model: music.model.yml
        handlers:
          - logging: { level: debug }
          - memory-cache: { max-objects: 10000, ttl: 5m }
          - disk-cache: { path: cache/v2.sqlite, ttl: 1h, stale-while-revalidate: 1d, max-size: 200MB }
          - pagination: { page-size: 50, max-pages: 500, concurrency: 4 }
          - batching: { entities: [Track], max-batch: 100 }
            when: { kinds: [object-fault] }
          - rate-limit: { rate: 40/s, burst: 10 }
          - retry: { attempts: 5, base-delay: 50ms }
        terminal:
          remote:
            base-url: ${STORECHAIN_DEMO_URL}/v2
            timeout: 30s
            changes: { request: "GET /changes?since={cursor}&wait={wait}", entity: type, operation: op }
            entities:
              Band:
                records: data
                attributes:
                  name: attributes.name
                  founded: attributes.founded_at
                  url: attributes.home_page
                  country: attributes.country_code
                date-format: epoch-seconds
                fetch:
                  - request: GET /bands/search?name={name}
                    bind: { name: { key-path: name, operation: begins-with, case-insensitive: true, required: true } }
                  - request: GET /bands?page={page}&per_page={per_page}&sort={sort}
                    sort: { variable: sort, values: { name: name, -name: -name, founded: founded, -founded: -founded }, ties-in-key-order: true, nils: smallest }
                    paging: { pages: { page: page, per-page: per_page, size: 100 } }
                    key-ordered: true
                get: GET /bands/{id}
                create: POST /bands
                update: PATCH /bands/{id}
                delete: DELETE /bands/{id}
                version: version
              Album:
                key: album_id
                attributes: { year: release_year, price: price_usd }
                relationships: { band: { foreign-key: band_id } }
                fetch:
                  - request: GET /bands/{band}/albums
                    bind: { band: band.id }
                    records: data
                  - request: GET /albums?cursor={cursor}&limit={limit}&band_id={band}&year_from={from}&year_to={to}
                    bind:
                      band: band.id
                      from: { key-path: year, operation: at-least }
                      to: { key-path: year, operation: at-most }
                    paging: { cursor: { variable: cursor, next: next_cursor, limit: limit, size: 100 } }
                    records: items
                    key-ordered: true
                get: GET /albums/{id}
                create: POST /albums
                update: PATCH /albums/{id}
                delete: DELETE /albums/{id}
                version: version
              Track:
                records: data
                attributes: { title: name, number: track_number, seconds: length_seconds }
                relationships: { album: { foreign-key: album_id } }
                fetch:
                  - request: GET /tracks?ids={ids}
                    bind: { ids: { key-path: id, operation: one-of, required: true } }
                  - request: GET /tracks?album_id={album}
                    bind: { album: { key-path: album.id, operation: one-of, required: true } }
                  - request: GET /tracks?page={page}&per_page={per_page}
                    paging: { pages: { page: page, per-page: per_page, size: 100 } }
                    key-ordered: true
                get: GET /tracks/{id}
                create: POST /tracks
                update: PATCH /tracks/{id}
                delete: DELETE /tracks/{id}
                version: version

        """

    /// The v2 pipeline following the backend's change feed (`GET /v2/changes`, long-polled), so
    /// its caches and observers learn of every change another client makes.
    public static let v2Live = v2.replacingOccurrences(
        of: "# The v2 API:", with: "# The v2 API, followed live through GET /v2/changes (the change-feed handler):"
    ).replacingOccurrences(
        of: "handlers:\n", with: "handlers:\n  - change-feed: { wait: 25s, cursor-file: cache/v2.cursor }\n")

    /// The v2 pipeline following the backend's changes as server-sent events (`GET /v2/events`):
    /// each request reads the stream from the last event's id until its events stop.
    public static let v2Stream = v2.replacingOccurrences(
        of: "# The v2 API:",
        with: "# The v2 API, followed live through the event stream GET /v2/events (the change-feed handler):"
    ).replacingOccurrences(
        of: "handlers:\n", with: "handlers:\n  - change-feed: { wait: 25s, cursor-file: cache/v2-events.cursor }\n"
    ).replacingOccurrences(
        of: #"changes: { request: "GET /changes?since={cursor}&wait={wait}", entity: type, operation: op }"#,
        with:
            #"changes: { request: GET /events, format: event-stream, entity: type, operation: op, gap-events: [gap] }"#
    )

    /// The GitHub-style v3 API: every list pages, `ids=` batches, per-parent lists that page.
    public static let v3 = """
        # The GitHub-style v3 API: every list pages by page number with Link headers (30 a page
        # unless asked for up to 100), lists take ids= batches, per-parent lists page too.
        model: music.model.yml
        handlers:
          - memory-cache: { ttl: 5m }
          - disk-cache: { path: cache/v3.sqlite, ttl: 1h, max-size: 200MB }
          - pagination: { page-size: 100, max-pages: 500, concurrency: 4 }
          - batching: { entities: [Band, Album, Track], max-batch: 100 }
            when: { kinds: [object-fault] }
          - rate-limit: { rate: 40/s, burst: 10 }
          - retry: { attempts: 5, base-delay: 50ms }
        terminal:
          remote:
            base-url: ${STORECHAIN_DEMO_URL}/v3
            changes: { request: GET /events, format: event-stream, entity: type, operation: op, gap-events: [gap] }
            entities:
              Band:
                attributes:
                  name: attributes.name
                  founded: attributes.founded_at
                  url: attributes.home_page
                  country: attributes.country_code
                relationships: { albums: { endpoint: "GET /bands/{id}/albums" } }
                date-format: epoch-seconds
                fetch:
                  - request: GET /bands?ids={ids}
                    bind: { ids: { key-path: id, operation: one-of, required: true } }
                  - request: GET /bands?page={page}&per_page={per_page}
                    paging: { pages: { page: page, per-page: per_page, size: 30 } }
                    key-ordered: true
                get: GET /bands/{id}
              Album:
                key: album_id
                attributes: { year: release_year, price: price_usd }
                relationships:
                  band: { foreign-key: band_id }
                  tracks: { endpoint: "GET /albums/{id}/tracks" }
                fetch:
                  - request: GET /albums?ids={ids}
                    bind: { ids: { key-path: id, operation: one-of, required: true } }
                  - request: GET /albums?page={page}&per_page={per_page}
                    paging: { pages: { page: page, per-page: per_page, size: 30 } }
                    key-ordered: true
                get: GET /albums/{id}
              Track:
                attributes: { title: name, number: track_number, seconds: length_seconds }
                relationships: { album: { foreign-key: album_id } }
                fetch:
                  - request: GET /tracks?ids={ids}
                    bind: { ids: { key-path: id, operation: one-of, required: true } }
                  - request: GET /tracks?page={page}&per_page={per_page}
                    paging: { pages: { page: page, per-page: per_page, size: 30 } }
                    key-ordered: true
                get: GET /tracks/{id}

        """
}
