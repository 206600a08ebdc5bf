"""A small OTLP trace receiver for the telemetry tests, on the official protobuf definitions
(PyPI `opentelemetry-proto`).

    python otlp_receiver.py http|grpc

Listens on 127.0.0.1 (a free port), prints `listening <port>` on stdout, then one JSON line per
span received: ids in hex, name, kind, attributes, status, links, the resource's service.name.
HTTP: POST /v1/traces with an `ExportTraceServiceRequest` (application/x-protobuf). gRPC: the
`TraceService/Export` method. Ends when stdin closes.
"""

import json
import sys
import threading
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

PRINT_LOCK = threading.Lock()


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    v = getattr(any_value, kind)
    if kind in ("array_value", "kvlist_value"):
        return str(v)
    return v


def publish(request):
    lines = []
    for resource_spans in request.resource_spans:
        resource = {a.key: value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                lines.append(json.dumps({
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": span.kind,
                    "attributes": {a.key: value(a.value) for a in span.attributes},
                    "status": {"code": span.status.code, "message": span.status.message},
                    "links": [
                        {"trace_id": l.trace_id.hex(), "span_id": l.span_id.hex()}
                        for l in span.links
                    ],
                    "service_name": resource.get("service.name"),
                    "scope": scope_spans.scope.name,
                }))
    with PRINT_LOCK:
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/v1/traces":
            self.send_error(404)
            return
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        request = trace_service_pb2.ExportTraceServiceRequest()
        request.ParseFromString(body)
        publish(request)
        answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def Export(self, request, context):
        publish(request)
        return trace_service_pb2.ExportTraceServiceResponse()


def main():
    mode = sys.argv[1]
    if mode == "http":
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        port = server.server_address[1]
        threading.Thread(target=server.serve_forever, daemon=True).start()
    elif mode == "grpc":
        import grpc

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(TraceService(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
    else:
        sys.exit(f"unknown mode {mode!r}: http or grpc")
    with PRINT_LOCK:
        print(f"listening {port}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
