# tests/lib/testhost.sh - a test host of the test's own (bash; root only):
# a network namespace joined to the host by a veth pair, with the servers
# of tests/lib/testhost.py in it, a test CA and a private /etc/hosts.
#
#   testhost_up DIR      make it; DIR (mode 0755) gets ca.pem, hosts,
#                        requests.jsonl, repo.git; sets TH_A, TH_B (the
#                        server addresses), TH_NS, TH_HOSTS, TH_CA
#   testhost_down        stop the servers, delete the namespace and veth
#   in_hosts CMD...      CMD in a private mount namespace whose /etc/hosts
#                        is TH_HOSTS (api.sbx.test, git.sbx.test,
#                        plain.sbx.test -> TH_A; denied.sbx.test -> TH_B)
#
# Addresses are from 198.18.0.0/15 (benchmarking, never routed): the
# allowlist treats them as public, as a real server's would be.  The host's
# own end (TH_GW) is one of the host's addresses, which the proxy refuses.

testhost_up() {
	local dir=$1 n=$$
	TH_DIR=$dir
	TH_NS=sbxth$n
	TH_VETH=sbxth$n
	TH_GW=198.18.$((n % 200 + 20)).1
	TH_A=198.18.$((n % 200 + 20)).2
	TH_B=198.18.$((n % 200 + 20)).3
	TH_HOSTS=$dir/hosts
	TH_CA=$dir/ca.pem
	mkdir -p "$dir" && chmod 0755 "$dir"
	ip netns add "$TH_NS" || return 1
	ip link add "$TH_VETH" type veth peer name "${TH_VETH}p" || return 1
	ip link set "${TH_VETH}p" netns "$TH_NS"
	ip addr add "$TH_GW/24" dev "$TH_VETH"
	ip link set "$TH_VETH" up
	ip -n "$TH_NS" addr add "$TH_A/24" dev "${TH_VETH}p"
	ip -n "$TH_NS" addr add "$TH_B/24" dev "${TH_VETH}p"
	ip -n "$TH_NS" link set "${TH_VETH}p" up
	ip -n "$TH_NS" link set lo up
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
		-subj "/CN=sbx test CA" -keyout "$dir/ca.key" -out "$TH_CA" 2>/dev/null || return 1
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=api.sbx.test" \
		-keyout "$dir/srv.key" -out "$dir/srv.csr" 2>/dev/null || return 1
	printf 'subjectAltName=DNS:api.sbx.test,DNS:git.sbx.test\n' >"$dir/ext"
	openssl x509 -req -in "$dir/srv.csr" -CA "$TH_CA" -CAkey "$dir/ca.key" -CAcreateserial \
		-days 2 -extfile "$dir/ext" -out "$dir/srv.pem" 2>/dev/null || return 1
	chmod 0644 "$TH_CA"
	printf '127.0.0.1 localhost\n::1 localhost\n%s api.sbx.test git.sbx.test plain.sbx.test\n%s denied.sbx.test\n' \
		"$TH_A" "$TH_B" >"$TH_HOSTS"
	chmod 0644 "$TH_HOSTS"
	# A repository for git's dumb HTTP protocol.
	git init -q "$dir/src" && git -C "$dir/src" -c user.name=t -c user.email=t@t \
		commit -q --allow-empty -m "test commit" &&
		git clone -q --bare "$dir/src" "$dir/repo.git" &&
		git -C "$dir/repo.git" update-server-info || return 1
	chmod -R a+rX "$dir"
	ip netns exec "$TH_NS" python3 "$TAP_ROOT/tests/lib/testhost.py" "$dir" "$TH_A" "$TH_B" \
		"$dir/srv.pem" "$dir/srv.key" &
	TH_PID=$!
	for _ in $(seq 100); do [ -e "$dir/ready" ] && return 0; sleep 0.05; done
	return 1
}

testhost_down() {
	[ -n "$TH_PID" ] && kill "$TH_PID" 2>/dev/null && wait "$TH_PID" 2>/dev/null
	[ -n "$TH_VETH" ] && ip link del "$TH_VETH" 2>/dev/null
	[ -n "$TH_NS" ] && ip netns del "$TH_NS" 2>/dev/null
	TH_PID= TH_VETH= TH_NS=
}

in_hosts() {
	unshare -m --propagation private sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' \
		"$TH_HOSTS" "$@"
}
