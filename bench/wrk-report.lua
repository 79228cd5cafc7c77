-- Prints wrk's summary as one JSON line for bench/run.mjs (latencies in microseconds).
-- With WRK_MAX_REQUESTS set, the (single) thread stops sending after that many responses.
local max = tonumber(os.getenv('WRK_MAX_REQUESTS') or '')
if max then
  local n = 0
  response = function (status, headers, body)
    n = n + 1
    if n >= max then wrk.thread:stop() end
  end
end

done = function (summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"durationUs":%d,"bytes":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"statusErrors":%d,"timeouts":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
