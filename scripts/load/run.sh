#!/usr/bin/env bash
# Load figure for docs/contributing/performance-lab-notes.md: round-1 and round-2 `tools/call plan_release`
# against the hand-written example server over Streamable HTTP on 127.0.0.1.
#
#   scripts/load/run.sh [PORT] [DURATION] [CONNECTIONS]    (defaults: 18080 15s 8)
#
# Needs wrk (Debian: apt-get install -y wrk), curl and jq.
set -euo pipefail

port="${1:-18080}"
duration="${2:-15s}"
connections="${3:-8}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
url="http://127.0.0.1:${port}/mcp"

cd "$root"
cargo build --release --example hand_written
./target/release/examples/hand_written serve-http "127.0.0.1:${port}" 2>/dev/null &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT

for _ in $(seq 50); do
  curl -s -o /dev/null "http://127.0.0.1:${port}/" && break
  sleep 0.1
done

# Capture a round-1 state exactly as a client would receive it (JSON or one SSE event).
round_one="$(curl -s "$url" \
  -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -H 'MCP-Protocol-Version: 2026-07-28' \
  -H 'Mcp-Method: tools/call' \
  -H 'Mcp-Name: plan_release' \
  --data '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plan_release","arguments":{"service":"api"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}}}}}' \
  | sed -n 's/^\(data: \)\{0,1\}\({.*\)$/\2/p')"
state="$(jq -r '.result.requestState' <<<"$round_one")"
answers='{"environment":{"action":"accept","content":{"choice":"production"}}}'
echo "round-1 requestState: ${#state} bytes; input requests: $(jq -c '.result.inputRequests | keys' <<<"$round_one")"
[[ "$state" == mrtr3.* ]] || { echo "no requestState in the round-1 reply: $round_one" >&2; exit 1; }

echo "== round 1 (fresh call), ${connections} connections, ${duration}"
wrk -t1 -c"$connections" -d"$duration" --latency -s "$here/plan_release.lua" "$url"
echo "== round 2 (resume with the captured state), ${connections} connections, ${duration}"
wrk -t1 -c"$connections" -d"$duration" --latency -s "$here/plan_release.lua" "$url" -- "$state" "$answers"
