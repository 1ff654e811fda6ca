import AsyncHTTPClient

/// The status and body (up to 4 MiB) of a GET of `url`, as a probe or a scraper sees them.
func httpGet(_ url: String) async throws -> (status: UInt, text: String) {
    let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
    return (response.status.code, String(buffer: try await response.body.collect(upTo: 4 << 20)))
}
