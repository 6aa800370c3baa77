# tests/lib/ca_ahead.py - the sandbox CAs sbx makes ahead (lib/run/
# run_extras.c), seen from a test through keyctl(2), as the caller's user:
#   avail              exit 0 when keyrings work here
#   count | serials    how many wait, their serial numbers
#   drop               unlink them from the user keyring (the next run
#                      that injects makes its own)
#   plant              a bad value of each kind in every slot
#   jail SERIAL...     what a process finds and reads (run in a jail)
#   session CMD...     run CMD in a new session keyring that links the
#                      user keyring, as a login's does
# Run it as `python3 -c "$(cat tests/lib/ca_ahead.py)" CMD`: nobody may
# not be able to read the tree.
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
SYS_add_key, SYS_keyctl = 248, 250
USER, SESSION = -4, -3
DESC = "sbx: a sandbox CA made ahead (1) #%d"
def kc(*a):
    r = libc.syscall(SYS_keyctl, *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return r if r >= 0 else -ctypes.get_errno()
def serials():
    return [kc(10, USER, b"user", (DESC % s).encode(), 0) for s in range(4)]
cmd = sys.argv[1]
if cmd == "avail":
    sys.exit(0 if kc(0, USER, 1) > 0 else 1)
elif cmd == "serials":
    print(" ".join(str(s) for s in serials() if s > 0))
elif cmd == "count":
    print(sum(1 for s in serials() if s > 0))
elif cmd == "plant":
    # A value of each bad kind, in every slot (replacing what is there).
    now = int(time.time())
    pem = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n\0" \
          b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
    bad = [b"sbx-ca 1 %d\n" % (now - 13 * 3600) + pem, b"sbx-ca 1 %d\n" % (now + 86400) + pem,
           b"not a CA at all", b"sbx-ca 1 %d\n" % now + b"-----BEGIN CERTIFICATE-----\n"]
    for s in range(4):
        v = bad[s]
        if libc.syscall(SYS_add_key, b"user", (DESC % s).encode(), v, ctypes.c_size_t(len(v)),
                        ctypes.c_long(USER)) < 0:
            sys.exit("add_key: errno %d" % ctypes.get_errno())
elif cmd == "jail":
    buf = ctypes.create_string_buffer(4096)
    found = [s for s in serials() if s > 0]
    reads = [kc(11, int(s), buf, 4096) for s in sys.argv[2:]]
    print("found %d reads %s" % (len(found), " ".join(str(r) for r in reads)))
elif cmd == "drop":
    for s in serials():
        if s > 0:
            kc(9, s, USER)
elif cmd == "session":
    # A login's session keyring: a new one, the user's keyring linked in.
    if kc(1, b"sbx-test-login") < 0 or kc(8, USER, SESSION) < 0:
        sys.exit("cannot make a session keyring")
    os.execvp(sys.argv[2], sys.argv[2:])
