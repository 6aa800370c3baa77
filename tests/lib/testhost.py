#!/usr/bin/python3
# tests/lib/testhost.py - the servers of a test host (run inside its network
# namespace): HTTPS on A:443 and A:8443 (names api.sbx.test, git.sbx.test,
# certificate from the test's CA), plain HTTP on A:80 and B:80, and a TCP
# echo on A:2222 and B:2222.  Every HTTP request is logged as one JSON line
# (server, path, headers) to DIR/requests.jsonl, on this side: what the
# server really received.  /echo answers 200 with X-Echo-Auth and
# X-Echo-Key (the Authorization and x-api-key it got); /redirect answers 302
# to http://plain.sbx.test/landing; /repo.git/... serves DIR/repo.git (git's
# dumb HTTP); /big?n=BYTES sends n bytes.  Writes DIR/ready when listening.
#   testhost.py DIR ADDR_A ADDR_B CERT KEY
import http.server, json, os, socket, socketserver, ssl, sys, threading

d, A, B, cert, key = sys.argv[1:6]
lock = threading.Lock()

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def log_request_json(self):
        with lock, open(os.path.join(d, "requests.jsonl"), "a") as f:
            f.write(json.dumps({"server": self.server.name, "path": self.path,
                                "headers": {k.lower(): v for k, v in self.headers.items()}}) + "\n")
    def send(self, code, body, extra=()):
        self.send_response(code)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
    def do_GET(self):
        self.log_request_json()
        p = self.path.split("?")[0]
        if p == "/echo":
            self.send(200, b"echo ok\n", [("X-Echo-Auth", self.headers.get("Authorization", "")),
                                         ("X-Echo-Key", self.headers.get("x-api-key", ""))])
        elif p == "/redirect":
            self.send(302, b"", [("Location", "http://plain.sbx.test/landing")])
        elif p == "/big":
            n = int(self.path.split("n=")[1])
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            chunk = b"x" * 65536
            while n > 0:
                self.wfile.write(chunk[:min(n, len(chunk))])
                n -= min(n, len(chunk))
        elif p.startswith("/repo.git/"):
            f = os.path.normpath(os.path.join(d, p.lstrip("/")))
            if f.startswith(os.path.join(d, "repo.git")) and os.path.isfile(f):
                self.send(200, open(f, "rb").read())
            else:
                self.send(404, b"no\n")
        else:
            self.send(200, ("hello from %s\n" % self.server.name).encode())
    do_HEAD = do_GET
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        self.log_request_json()
        self.send(200, b"posted %d\n" % n)

class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

def serve(addr, port, name, tls):
    s = S((addr, port), H)
    s.name = name
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        s.socket = ctx.wrap_socket(s.socket, server_side=True)
    threading.Thread(target=s.serve_forever, daemon=True).start()

def echo(addr, port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(16)
    def one(c):
        while True:
            b = c.recv(4096)
            if not b:
                break
            c.sendall(b"echo " + b)
        c.close()
    def loop():
        while True:
            c, _ = ls.accept()
            threading.Thread(target=one, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()

serve(A, 443, "https", True)
serve(A, 8443, "https8443", True)
serve(A, 80, "plain", False)
serve(B, 80, "denied", False)
echo(A, 2222)
echo(B, 2222)
open(os.path.join(d, "ready"), "w").write("ok\n")
threading.Event().wait()
