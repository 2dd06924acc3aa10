/** @type {import('next').NextConfig} */
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
    return [
      {
        // No page of the app may be framed: a framed consent or approval screen could be clickjacked.
        source: "/:path*",
        headers: [
          { key: "Content-Security-Policy", value: "frame-ancestors 'none'" },
          { key: "X-Frame-Options", value: "DENY" },
          { key: "Referrer-Policy", value: "no-referrer" },
          { key: "X-Content-Type-Options", value: "nosniff" },
        ],
      },
    ];
  },
};

export default nextConfig;
