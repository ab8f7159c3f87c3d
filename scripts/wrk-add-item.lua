-- wrk script: the request factum bench sends, POST /cart/{id}/add_item
-- with a request ID of its own per request and ten commands per cart, so
-- that every request appends (nothing is answered as a duplicate).
--   RUN=$(date +%s%N) wrk -t2 -c16 -d10s -s scripts/wrk-add-item.lua URL
-- WAIT sets Command-Wait-Stage (default PROCESSED).
local run = os.getenv("RUN") or tostring(os.time())
local wait = os.getenv("WAIT") or "PROCESSED"
local threads = 0

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

local counter = 0

function request()
  local i = counter
  counter = counter + 1
  local prefix = run .. "-" .. tid
  local body = '{"sku":"sku-' .. (i % 10) .. '","qty":1}'
  return wrk.format("POST", "/cart/wrk-" .. prefix .. "-" .. math.floor(i / 10) .. "/add_item", {
    ["Content-Type"] = "application/json",
    ["Command-Request-Id"] = "wrk-" .. prefix .. "-" .. i,
    ["Command-Wait-Stage"] = wait,
  }, body)
end
