import NotifyService
import Testing

/// Which OpenTelemetry variables turn span export on, and which notify refuses.
@Suite struct TraceExportTests {
    static let endpoint = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"]

    @Test func offUnlessAnEndpointOrTheOTLPExporterIsNamed() throws {
        #expect(try !TraceExport.isRequested(by: [:]))
        #expect(
            try !TraceExport.isRequested(by: ["OTEL_SERVICE_NAME": "notify", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"]))
        #expect(try TraceExport.isRequested(by: Self.endpoint))
        #expect(
            try TraceExport.isRequested(by: ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"]))
        #expect(try TraceExport.isRequested(by: ["OTEL_TRACES_EXPORTER": "otlp"]))
        #expect(
            try TraceExport.isRequested(by: Self.endpoint.merging(["OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"]) { $1 }))
    }

    @Test func disabledOrExporterNoneKeepsItOff() throws {
        #expect(try !TraceExport.isRequested(by: Self.endpoint.merging(["OTEL_SDK_DISABLED": "true"]) { $1 }))
        #expect(try !TraceExport.isRequested(by: Self.endpoint.merging(["OTEL_TRACES_EXPORTER": "none"]) { $1 }))
        #expect(try TraceExport.isRequested(by: Self.endpoint.merging(["OTEL_SDK_DISABLED": "false"]) { $1 }))
    }

    @Test func anotherExporterOrGRPCIsRefusedWithTheReason() {
        #expect {
            try TraceExport.isRequested(by: ["OTEL_TRACES_EXPORTER": "zipkin"])
        } throws: { "\($0)" == "OTEL_TRACES_EXPORTER=zipkin: notify exports spans with otlp only (or none)" }
        #expect {
            try TraceExport.isRequested(
                by: Self.endpoint.merging(["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"]) { $1 })
        } throws: {
            "\($0)"
                == "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc: notify exports over OTLP/HTTP only (http/protobuf or http/json)"
        }
    }
}
