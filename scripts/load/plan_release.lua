-- wrk script: POSTs `tools/call plan_release` to an mrtr server over Streamable HTTP.
--
--   wrk -t1 -c8 -d15s --latency -s plan_release.lua http://127.0.0.1:8080/mcp
--       round 1: a fresh call; every reply must be `input_required`
--   wrk ... -s plan_release.lua http://127.0.0.1:8080/mcp -- <requestState> <inputResponses JSON>
--       a resume: round 2 with a captured state and the answers to round 1
--
-- Replies that are not `input_required` are counted and reported as "unexpected".

local request_state = nil
local input_responses = nil

function init(args)
  request_state = args[1]
  input_responses = args[2]
  local resume = ""
  if request_state then
    resume = string.format(',"requestState":"%s","inputResponses":%s', request_state, input_responses)
  end
  local body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{'
    .. '"name":"plan_release","arguments":{"service":"api"}' .. resume .. ','
    .. '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"4"},'
    .. '"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}}}}}'
  wrk.method = "POST"
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Accept"] = "application/json, text/event-stream"
  wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
  wrk.headers["Mcp-Method"] = "tools/call"
  wrk.headers["Mcp-Name"] = "plan_release"
end

unexpected = 0
first_unexpected = nil

function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"input_required"', 1, true) then
    unexpected = unexpected + 1
    if not first_unexpected then
      first_unexpected = status .. " " .. string.sub(body, 1, 300)
    end
  end
end

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function done(summary, latency, requests)
  local total = 0
  local sample = nil
  for _, thread in ipairs(threads) do
    total = total + thread:get("unexpected")
    sample = sample or thread:get("first_unexpected")
  end
  io.write(string.format("unexpected replies: %d of %d\n", total, summary.requests))
  if sample then
    io.write("first unexpected reply: " .. sample .. "\n")
  end
  io.write(string.format("latency p50 %.0f us, p90 %.0f us, p99 %.0f us, max %.0f us\n",
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
