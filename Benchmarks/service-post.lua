-- wrk script: POST one new row per request to /tables/bench; each thread stops after
-- ROWS_PER_THREAD answers. Rows have a unique id (ID_PREFIX, when set, keeps the ids of several
-- runs on one table apart), text, a bool and a number.
local limit = tonumber(os.getenv("ROWS_PER_THREAD") or "50000")
local counter = 1

function setup(thread)
  thread:set("prefix", (os.getenv("ID_PREFIX") or "") .. "t" .. counter)
  counter = counter + 1
end

function init(args)
  sent = 0
  answered = 0
  failed = 0
end

function request()
  sent = sent + 1
  local body = string.format(
    '{"id":"%s-%07d","text":"benchmark row %d, a short todo text","complete":false,"priority":%d}',
    prefix, sent, sent, sent % 5)
  return wrk.format("POST", "/tables/bench",
    { ["ZUMO-API-VERSION"] = "2.0.0", ["Content-Type"] = "application/json" }, body)
end

function response(status, headers, body)
  answered = answered + 1
  if status ~= 201 then failed = failed + 1 end
  if answered >= limit then wrk.thread:stop() end
end
