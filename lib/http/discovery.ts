import { json, PUBLIC_CORS } from "./respond";

/** A public, cacheable JSON document (discovery metadata). */
export function publicDocument(body: unknown): Response {
  return json(body, { headers: { ...PUBLIC_CORS, "Cache-Control": "public, max-age=3600" } });
}
