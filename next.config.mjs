// JavaScript, not TypeScript: a next.config.ts makes every server process load Next's compiler to read it.
import { SECURITY_HEADERS } from "./lib/http/security-headers.mjs";

/** @type {import("next").NextConfig} */
const nextConfig = {
  // A second build folder lets two developers (or helpers) build and test side by side.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  serverExternalPackages: [
    "better-sqlite3",
    "@prisma/adapter-better-sqlite3",
    "@prisma/adapter-pg",
    "pg",
    "ioredis",
    "rate-limiter-flexible",
    "secp256k1",
    "keccak",
  ],
  poweredByHeader: false,
  typedRoutes: false,
  async headers() {
    return [
      { source: "/:path*", headers: SECURITY_HEADERS },
      // The /api routes set it on their answers (lib/routes/app-route.ts); this covers what Next answers there
      // itself: a method a route does not export (405), a path that does not exist (404).
      { source: "/api/:path*", headers: [{ key: "Cache-Control", value: "no-store" }] },
    ];
  },
};

export default nextConfig;
