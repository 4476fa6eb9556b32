-- wrk script for bench/run (bench/bench.py drives it; see bench/README.md).
--
--   wrk -t T -c C -d D -s bench/load.lua URL -- FILE T [once]
--   wrk -t T -c C -d D -s bench/load.lua URL -- GET
--
-- FILE holds pre-built AS4 requests written by `as4gw push --write-requests`
-- (per message: a line with the Content-Type, a line with the body length,
-- the body).  Wrk thread k of T sends messages k, k+T, k+2T, ... in order, so
-- with a set larger than what the run can send every request is a message
-- the gateway has not seen.  A thread that has sent all of its messages
-- starts again and counts a wrap: in a run meant to measure NEW messages a
-- wrap means the set was too small (bench.py then refuses the figure and
-- builds more); in the duplicate-replay run wraps are the point.
-- "once": every thread stops once each of its messages was answered once
-- (bench.py stores the duplicate-replay set with it).
-- GET: plain GET of the URL (the HTTP ceiling against /healthz).
--
-- An answer counts as a Receipt when it is HTTP 200, contains an eb:Receipt
-- and no eb:Error; anything else is counted in not_receipt, and the first
-- one of each thread is kept (status and ebMS error code) for the report.
-- done() prints ONE line that bench.py parses:
--   BENCH requests=.. errors_http=.. errors_socket=.. not_receipt=.. wraps=..
--         duration_us=.. p50_us=.. p99_us=.. max_us=.. first_bad=..
local threads = {}
local counter = 0

function setup(thread)
   thread:set("id", counter)
   table.insert(threads, thread)
   counter = counter + 1
end

-- Read this thread's share of FILE without holding the whole file in memory.
local function load_requests(path, stride)
   local f = assert(io.open(path, "rb"))
   local n = 0
   while true do
      local ct = f:read("*l")
      if ct == nil or ct == "" then
         break
      end
      local len = tonumber(f:read("*l"))
      assert(len ~= nil and len > 0, "load.lua: bad length line in " .. path)
      if n % stride == id then
         local body = f:read(len)
         assert(body ~= nil and #body == len, "load.lua: truncated " .. path)
         table.insert(reqs, wrk.format("POST", nil,
            { ["Content-Type"] = ct, ["MIME-Version"] = "1.0" }, body))
      else
         assert(f:seek("cur", len))
      end
      n = n + 1
   end
   f:close()
   assert(#reqs > 0, "load.lua: no request for thread " .. id .. " in " .. path)
end

function init(args)
   reqs = {}
   wraps = 0
   bad = 0
   answered = 0
   first_bad = ""
   i = 0
   get_mode = args[1] == "GET"
   once = args[3] == "once"
   if get_mode then
      reqs[1] = wrk.format("GET", nil)
   else
      load_requests(args[1], tonumber(args[2]) or 1)
   end
   collectgarbage()
end

function request()
   if get_mode then
      return reqs[1]
   end
   i = i + 1
   if i > #reqs then
      i = 1
      wraps = wraps + 1
   end
   return reqs[i]
end

function response(status, headers, body)
   answered = answered + 1
   local ok
   if get_mode then
      ok = status == 200
   else
      ok = status == 200 and string.find(body, ":Receipt", 1, true) ~= nil
         and string.find(body, ":Error", 1, true) == nil
   end
   if not ok then
      bad = bad + 1
      if first_bad == "" then
         local code = string.match(body or "", "EBMS:%d%d%d%d") or "-"
         first_bad = "http" .. status .. "/" .. code
      end
   end
   if once and answered >= #reqs then
      wrk.thread:stop()
   end
end

function done(summary, latency, requests)
   local b, w, fb = 0, 0, ""
   for _, t in ipairs(threads) do
      b = b + t:get("bad")
      w = w + t:get("wraps")
      if fb == "" then
         fb = t:get("first_bad")
      end
   end
   if fb == "" then
      fb = "-"
   end
   io.write(string.format(
      "BENCH requests=%d errors_http=%d errors_socket=%d not_receipt=%d " ..
      "wraps=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d first_bad=%s\n",
      summary.requests, summary.errors.status,
      summary.errors.connect + summary.errors.read + summary.errors.write +
      summary.errors.timeout, b, w, summary.duration,
      latency:percentile(50), latency:percentile(99), latency.max, fb))
end
