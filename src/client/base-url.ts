/**
 * A base URL's origin and path prefix: `https://gw.example/api` → origin `https://gw.example`,
 * prefix `/api` (no trailing slash; '' for a bare origin). undici's `dispatch` and its Clients take
 * an origin and drop any path on it, so the streaming client and the worker pool put the prefix in
 * front of every path they send: every request of the run goes under the base URL.
 */
export function splitBaseUrl(baseUrl: string): { origin: string; pathPrefix: string } {
  const u = new URL(baseUrl);
  return { origin: u.origin, pathPrefix: u.pathname.replace(/\/+$/, '') };
}
