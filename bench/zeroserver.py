#!/usr/bin/env python3
"""bench/zeroserver.py PORTFILE - HTTP server on 127.0.0.1 that answers
GET /N with N bytes of zeros (Content-Length N).  Writes its port to
PORTFILE.  Used by bench/proxy.sh as the peer of the proxy benchmark."""
import socket
import sys
import threading

CHUNK = memoryview(bytes(1 << 20))


def serve(conn):
    with conn:
        req = b""
        while b"\r\n\r\n" not in req:
            d = conn.recv(65536)
            if not d:
                return
            req += d
        path = req.split(b" ", 2)[1]
        n = int(path.rsplit(b"/", 1)[-1] or b"0")
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                     b"Connection: close\r\n\r\n" % n)
        while n > 0:
            k = min(n, len(CHUNK))
            conn.sendall(CHUNK[:k])
            n -= k


def main():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    with open(sys.argv[1], "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


main()
