// Compiled (not run) by .ci/openapi/check.sh against the types that
// openapi-typescript generates from /openapi.json into ./schema.d.ts: the
// calls a TypeScript user writes with openapi-fetch must type-check as
// they are, without casts.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

type CommandResult = components["schemas"]["CommandResult"];
type ErrorBody = components["schemas"]["Error"];
type Problem = components["schemas"]["Problem"];
type CartState = components["schemas"]["shop.cart.AggregateState"];

export async function scenario(baseUrl: string): Promise<CartState[]> {
  const client = createClient<paths>({ baseUrl });
  const sent = await client.POST("/cart/{id}/add_item", {
    params: {
      path: { id: "cart-1" },
      header: { "Command-Request-Id": "req-1", "Command-Wait-Stage": "SNAPSHOT", "Command-Aggregate-Version": 0 },
    },
    body: { sku: "sku-1", qty: 2 },
  });
  if (sent.error) {
    // A command's refusal is an Error body, or a problem document of the
    // Idempotency-Key middleware (application/problem+json).
    const e: ErrorBody | Problem = sent.error;
    throw new Error("code" in e ? `${e.code}: ${e.message}` : `${e.type}: ${e.title}`);
  }
  const result: CommandResult = sent.data;
  const version: number | undefined = result.aggregateVersion;
  const found = await client.GET("/cart/{id}/request/{requestId}", {
    params: { path: { id: "cart-1", requestId: "req-1" } },
  });
  if (found.data?.aggregateVersion !== version) {
    throw new Error("lookup disagrees");
  }
  const listed = await client.POST("/cart/snapshot/list", {
    body: {
      condition: {
        operator: "AND",
        children: [
          { operator: "AGGREGATE_IDS", value: ["cart-1"] },
          { field: "state.items.sku-1", operator: "GTE", value: 1 },
        ],
      },
      sort: [{ field: "version", direction: "DESC" }],
      limit: 10,
    },
  });
  const count = await client.POST("/tenant/{tenant}/cart/snapshot/count", {
    params: { path: { tenant: "acme" } },
    body: { operator: "ALL" },
  });
  const n: number | undefined = count.data;
  if (n === undefined || listed.data === undefined) {
    throw new Error("query failed");
  }
  const states: CartState[] = listed.data;
  const when: string | undefined = states[0]?.eventTime;
  void when;
  return states;
}
