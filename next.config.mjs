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
  ],
  poweredByHeader: false,
  typedRoutes: false,
  async headers() {
    return [{ source: "/:path*", headers: SECURITY_HEADERS }];
  },
};

export default nextConfig;
